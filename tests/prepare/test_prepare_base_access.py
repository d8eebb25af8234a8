"""The run's base (`--base-ref`) and the lead's access (`--lead-access`) through prepare,
in process, with fake CLIs on PATH and a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from okstra_core.environment import Environment
from okstra_core.errors import UsageError
from okstra_core.prepare import prepare
from okstra_core.request import RunRequest
from tests.prepare.prepare_support import request_of

PLAN = "---\napproved: true\n---\n## Stage 1\nMake it.\n"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(project: Path) -> Path:
    """The project as a git checkout on `main` with two commits, tagged `v1` at the first."""
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    (project / ".gitignore").write_text(".okstra/\n", encoding="utf-8")
    git(project, "init", "-q", "-b", "main")
    for n in (1, 2):
        (project / "a.txt").write_text(f"version {n}\n", encoding="utf-8")
        git(project, "add", "-A")
        git(project, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", f"c{n}")
        if n == 1:
            git(project, "tag", "v1")
    return project


def implementation(project: Path, **kw: object) -> RunRequest:
    return request_of(project, task_type="implementation", approved_plan="plan.md", **kw)


def test_the_base_is_resolved_recorded_and_said(repo: Path, env: Environment) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    for ref in ("HEAD~1", "v1", first[:10]):
        plan = prepare(implementation(repo, base_ref=ref), dry_run=True, environment=env)
        assert (plan.base_ref, plan.base_commit) == (ref, first)
    result = prepare(implementation(repo, base_ref="v1"), launch="none", environment=env)
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    assert (manifest["baseRef"], manifest["baseCommit"]) == ("v1", first)
    inputs = orjson.loads((result.run_dir / "run-inputs.json").read_bytes())
    assert inputs["baseRef"] == "v1" and "--base-ref=v1" in inputs["argv"]
    prompt = (result.run_dir / "lead-prompt.md").read_text(encoding="utf-8")
    assert f"This run's base** is `v1` (commit `{first}`)" in prompt


def test_no_base_given_records_none(repo: Path, env: Environment) -> None:
    result = prepare(implementation(repo), launch="none", environment=env)
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    assert "baseRef" not in manifest and "baseCommit" not in manifest
    assert "This run's base" not in (result.run_dir / "lead-prompt.md").read_text()


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("no-such-branch", "'no-such-branch' names no commit"),
        ("run:implementation-009", "the task has no run 'implementation-009'"),
    ],
)
def test_a_base_that_names_nothing_is_refused_writing_nothing(
    repo: Path, env: Environment, ref: str, said: str
) -> None:
    with pytest.raises(UsageError, match=said) as info:
        prepare(implementation(repo, base_ref=ref), launch="none", environment=env)
    assert info.value.field == "--base-ref"
    assert not (repo / ".okstra").exists()


def test_a_base_needs_git_and_a_writing_phase(project: Path, env: Environment) -> None:
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    with pytest.raises(UsageError, match="not a git checkout") as info:
        prepare(implementation(project, base_ref="main"), launch="none", environment=env)
    assert info.value.field == "--base-ref"
    with pytest.raises(UsageError, match="only to phases whose roles write"):
        prepare(request_of(project, base_ref="main"), launch="none", environment=env)
    assert not (project / ".okstra").exists()


@pytest.mark.parametrize(
    ("leader", "access", "flags"),
    [
        ("claude/opus-4.6", "ask", ()),
        ("claude/opus-4.6", "edits", ("--permission-mode", "acceptEdits")),
        (
            "claude/opus-4.6",
            "full",
            ("--permission-mode", "acceptEdits", "--allowedTools", "Bash"),
        ),
        ("codex/gpt-5.6-sol", "edits", ("--sandbox", "workspace-write")),
        (
            "codex/gpt-5.6-sol",
            "full",
            ("--sandbox", "workspace-write", "--ask-for-approval", "never"),
        ),
    ],
)
def test_the_lead_access_reaches_its_argv_and_the_manifest(
    project: Path, env: Environment, leader: str, access: str, flags: tuple[str, ...]
) -> None:
    request = request_of(project, role_models=(f"leader={leader}",), lead_access=access)
    result = prepare(request, launch="none", environment=env, mcp=False)
    assert result.lead_access == access
    assert result.lead_argv is not None
    # Right after the program, on launch and on resume alike (codex's resume waits for
    # the id it mints).
    assert result.lead_argv[1 : 1 + len(flags)] == flags
    if leader.startswith("claude"):
        assert result.resume_argv is not None
        assert result.resume_argv[1 : 1 + len(flags)] == flags
    if not flags:
        assert "--permission-mode" not in result.lead_argv and "--sandbox" not in result.lead_argv
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    leader_participant = manifest["participants"][0]
    assert leader_participant.get("leadAccess") == (None if access == "ask" else access)


def test_a_lead_access_the_provider_lacks_is_refused(project: Path, env: Environment) -> None:
    request = request_of(project, role_models=("leader=demo/lead",), lead_access="full")
    with pytest.raises(UsageError, match="has no 'full' access") as info:
        prepare(request, launch="none", environment=env)
    assert info.value.field == "--lead-access"
    assert not (project / ".okstra").exists()
    with pytest.raises(UsageError, match="expected one of ask, edits, full") as bad:
        request_of(project, lead_access="everything")
    assert bad.value.field == "--lead-access"
