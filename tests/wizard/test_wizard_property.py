"""Random answer / back / rewind sequences never leave an invalid or unsaved state."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wizard_helpers import ANSWERS, make_task

from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused
from okstra_core.session import Wizard
from okstra_core.wizard.ids import ROLE_MODEL, is_role_step, model_step

ACTION = st.one_of(
    st.tuples(st.just("default"), st.integers(0, 0)),
    st.tuples(st.just("option"), st.integers(0, 20)),
    st.tuples(st.just("back"), st.integers(0, 0)),
    st.tuples(st.just("rewind"), st.integers(0, 40)),
    st.tuples(st.just("bogus"), st.integers(0, 0)),
)


def _check(wizard: Wizard, path: Path, env: Environment) -> None:
    on_disk = Wizard.open(path, environment=env)
    assert on_disk.state == wizard.state  # saved, nothing pending
    state = on_disk.state
    answered = [e.step for e in state.answered]
    chosen_models = {
        model_step(r, n + 1) for r, refs in state.role_models.items() for n in range(len(refs))
    }
    assert {s for s in answered if s.startswith(f"{ROLE_MODEL}:")} == chosen_models
    assert set(state.role_selection_order) <= {s for s in answered if is_role_step(s)}
    assert state.confirmed is not True or not state.aborted
    on_disk.prompt()  # a valid state always has a prompt
    on_disk.confirmation()


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=st.lists(ACTION, min_size=1, max_size=25))
def test_random_sequences_keep_state_valid_and_saved(
    env: Environment, project: Path, actions: list[tuple[str, int]]
) -> None:
    make_task(
        project,
        "g/other",
        runs={
            "requirements-discovery-001": {
                "roleCounts": {"analyser": 2},
                "roleModels": {"analyser": ["claude/opus-4.6"]},
            }
        },
    )
    directory = Path(tempfile.mkdtemp())
    try:
        path = directory / "w.json"
        wizard = Wizard.init(path, project, environment=env)
        for kind, number in actions:
            before = path.read_bytes()
            prompt = wizard.prompt()
            try:
                if kind == "default":
                    answer = prompt.default or ANSWERS.get(prompt.id, "x")
                    wizard.submit(answer)
                elif kind == "option":
                    if prompt.options:
                        wizard.submit(prompt.options[number % len(prompt.options)].value)
                    else:
                        wizard.submit(ANSWERS.get(prompt.id, "x"))
                elif kind == "back":
                    wizard.back()
                elif kind == "rewind":
                    steps = [e.step for e in wizard.state.answered]
                    wizard.rewind(steps[number % len(steps)] if steps else "task_pick")
                else:
                    wizard.submit("\x00 not an answer")
            except AnswerRefused:
                assert path.read_bytes() == before
            _check(wizard, path, env)
    finally:
        shutil.rmtree(directory)
