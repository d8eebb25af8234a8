"""The `base_ref` step: asked only in phases whose roles write, in a git project; its
default is the commit the project is on, a revision git cannot resolve is refused with
the state unchanged, and the answer reaches the request, renderArgs and a replay."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused
from okstra_core.session import Wizard
from tests.wizard.wizard_helpers import okstra, run_through


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(project: Path) -> Path:
    (project / ".gitignore").write_text(".okstra/\n", encoding="utf-8")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    for n in (1, 2):
        (project / "a.txt").write_text(f"{n}\n", encoding="utf-8")
        git(project, "add", "-A")
        git(project, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", f"c{n}")
    return project


def _ids(wizard: Wizard) -> list[str]:
    return [e.step for e in wizard.answers()]


def test_a_writing_phase_asks_for_the_base_with_the_projects_commit(
    env: Environment, repo: Path, state_file: Path
) -> None:
    head, first = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD~1")
    wizard = Wizard.init(state_file, repo, task_type="implementation", environment=env)
    prompt = run_through(wizard, stop="base_ref")
    assert prompt.kind == "text" and prompt.default == head
    assert f"the project is on {head[:12]}, branch main" in prompt.label
    # Refused inline: the state is as it was, and the step is asked again.
    before = state_file.read_bytes()
    with pytest.raises(AnswerRefused, match="'no-such-ref' names no commit"):
        wizard.submit("no-such-ref")
    assert state_file.read_bytes() == before and wizard.prompt().id == "base_ref"
    with pytest.raises(AnswerRefused, match=r"merged nothing|has no run"):
        wizard.submit("run:implementation-001")
    wizard.submit("HEAD~1")
    run_through(wizard)
    outcome = wizard.outcome()
    assert outcome.request.base_ref == "HEAD~1"
    assert outcome.render_args["base-ref"] == "HEAD~1"
    assert "--base-ref=HEAD~1" in outcome.render_argv
    assert "base          : HEAD~1" in outcome.confirmation_text
    ids = _ids(wizard)
    assert ids.index("approved_plan") < ids.index("base_ref") < ids.index("role-model:leader:1")
    assert git(repo, "rev-parse", "HEAD~1") == first

    # The answers replay to the same outcome (the headless protocol, as the app drives it).
    code, answers = okstra(env, "wizard", "answers", "--state", str(state_file))
    assert code == 0, answers
    assert {"step": "base_ref", "answer": "HEAD~1"} in [
        {"step": a["step"], "answer": a["answer"]} for a in answers["answers"]
    ]
    replayed = Wizard.init(
        state_file.with_name("again.json"), repo, task_type="implementation", environment=env
    )
    result = replayed.replay(wizard.answers())
    assert result.next.kind == "done", result
    assert replayed.outcome().render_argv == outcome.render_argv


def test_accepting_defaults_takes_the_projects_commit(
    env: Environment, repo: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, repo, task_type="final-verification", environment=env)
    run_through(wizard)
    assert wizard.outcome().request.base_ref == git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("task_type", ["requirements-discovery", "implementation-planning"])
def test_a_phase_that_does_not_write_never_asks(
    env: Environment, repo: Path, state_file: Path, task_type: str
) -> None:
    wizard = Wizard.init(state_file, repo, task_type=task_type, environment=env)
    run_through(wizard)
    assert "base_ref" not in _ids(wizard)
    assert "base-ref" not in wizard.outcome().render_args


def test_a_project_outside_git_is_not_asked(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, project, task_type="implementation", environment=env)
    run_through(wizard)
    assert "base_ref" not in _ids(wizard)
