"""Replays reproduce: `answers` in asking order, each answer given to its step when the
wizard asks it, and a replay that cannot place an answer says so (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wizard_helpers import ANSWERS, okstra, run_through

from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused
from okstra_core.session import Wizard
from okstra_core.wizard import Prompt

ANALYSER = "role-model:analyser:1"


def _wizard(path: Path, project: Path, env: Environment) -> Wizard:
    return Wizard.init(
        path, project, host="terminal", task_type="requirements-discovery", environment=env
    )


def _another(prompt: Prompt) -> str:
    return next(o.value for o in prompt.selectable if o.value != prompt.default)


def _edited(path: Path, project: Path, env: Environment) -> Wizard:
    """Confirmed, then Edit → analyser #1 → another model → confirmed again."""
    wizard = _wizard(path, project, env)
    assert run_through(wizard).kind == "done"
    prompt = wizard.rewind(ANALYSER)
    assert prompt.id == ANALYSER
    wizard.submit(_another(prompt), step=ANALYSER)
    assert run_through(wizard).kind == "done"
    return wizard


def _asked(wizard: Wizard) -> list[str]:
    return [e.step for e in wizard.answers()]


def test_answers_come_in_asking_order_and_replay_to_the_same_setup(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    wizard = _edited(tmp_path / "w.json", project, env)
    steps = _asked(wizard)
    assert steps.index(ANALYSER) < steps.index("directive_pick"), steps
    replayed, result = Wizard.replay_new(
        tmp_path / "again.json", project, wizard.answers(), host="terminal", environment=env
    )
    assert result.error is None, result
    assert replayed.state.confirmed is True
    assert replayed.state.role_models == wizard.state.role_models


def test_an_answer_is_given_to_its_step_wherever_it_is_in_the_file(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    wizard = _edited(tmp_path / "w.json", project, env)
    # The answered order the earlier `answers` wrote: the edited model last.
    entries = wizard.answers()
    moved = [e for e in entries if e.step != ANALYSER]
    moved.insert(len(moved) - 1, next(e for e in entries if e.step == ANALYSER))
    file = tmp_path / "answers.json"
    file.write_text(json.dumps([{"step": e.step, "answer": e.answer} for e in moved]))
    state = tmp_path / "again.json"
    code, doc = okstra(
        env, "wizard", "init", "--project-root", str(project), "--host", "terminal",
        "--state", str(state), "--answers", str(file),
    )  # fmt: skip
    assert code == 0, doc
    code, outcome = okstra(env, "wizard", "outcome", "--state", str(state))
    assert code == 0, outcome
    assert outcome["request"]["roleModels"] == wizard.state.role_models


def test_a_left_over_answer_ends_the_replay_with_exit_2(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    wizard = _wizard(tmp_path / "w.json", project, env)
    run_through(wizard, stop=ANALYSER)
    entries = [{"step": e.step, "answer": e.answer} for e in wizard.answers()]
    entries.append({"step": "directive", "answer": "keep it small"})  # never asked here
    file = tmp_path / "answers.json"
    file.write_text(json.dumps(entries))
    state = tmp_path / "again.json"
    code, doc = okstra(
        env, "wizard", "init", "--project-root", str(project), "--host", "terminal",
        "--state", str(state), "--answers", str(file),
    )  # fmt: skip
    assert code == 2, doc
    assert doc["ok"] is False and doc["applied"] == len(entries) - 1
    assert f"answers[{len(entries) - 1}] (directive): left over" in doc["error"], doc
    assert f"is kept at step '{ANALYSER}'" in doc["error"], doc
    assert doc["current"]["id"] == ANALYSER
    code, shown = okstra(env, "wizard", "show", "--state", str(state))
    assert code == 0 and shown["prompt"]["id"] == ANALYSER, shown


# ------------------------------------------------------------------- property: walks

MOVES = st.lists(
    st.tuples(st.sampled_from(["default", "other", "rewind", "back"]), st.integers(0, 50)),
    min_size=1,
    max_size=10,
)


def _move(wizard: Wizard, move: str, pick: int) -> None:
    prompt = wizard.prompt()
    answered = [e.step for e in wizard.state.answered]
    try:
        if move == "rewind" and answered:
            wizard.rewind(answered[pick % len(answered)])
        elif move == "back" and answered:
            wizard.back()
        elif prompt.kind == "pick" and prompt.selectable:
            options = prompt.selectable
            value = prompt.default if move == "default" else options[pick % len(options)].value
            wizard.submit(value or options[0].value, step=prompt.id)
        elif prompt.kind == "text":
            wizard.submit(prompt.default or ANSWERS.get(prompt.id, "x"), step=prompt.id)
    except AnswerRefused:
        pass  # a refused move changes nothing


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(moves=MOVES)
def test_random_walks_with_edits_and_rewinds_replay_to_the_same_outcome(
    tmp_path_factory: pytest.TempPathFactory,
    project: Path,
    env: Environment,
    moves: list[tuple[str, int]],
) -> None:
    where = tmp_path_factory.mktemp("walk")
    wizard = _wizard(where / "w.json", project, env)
    for move, pick in moves:
        _move(wizard, move, pick)
    if run_through(wizard).kind != "done" or wizard.state.confirmed is not True:
        return  # aborted: nothing to reproduce
    replayed, result = Wizard.replay_new(
        where / "again.json", project, wizard.answers(), host="terminal", environment=env
    )
    assert result.error is None, (moves, result.error)
    # The same setup (`persistActions` name each state file's own path).
    assert replayed.outcome().request == wizard.outcome().request
