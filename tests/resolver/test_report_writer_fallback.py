"""The report writer defaults to claude on every host; when claude cannot run it, the
exact rules pick another model and a note says so — in `okstra team`, in `prepare
--dry-run` and at the wizard's report-writer step. With claude there, no such note.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core import cli
from okstra_core.environment import Environment
from okstra_core.session import Wizard
from tests.wizard.wizard_helpers import run_through

NOTE = "claude cannot run the report writer here"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\n", encoding="utf-8")
    return root


def _path(fake_bin: Callable[..., Path], tmp_path: Path, *clis: str) -> str:
    return f"{fake_bin(*clis, directory=tmp_path / '-'.join(clis))}:/usr/bin:/bin"


def _run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, Any]:
    code = cli.main(list(argv))
    return code, orjson.loads(capsysbinary.readouterr().out)


@pytest.mark.parametrize("with_claude", [False, True])
def test_team_and_prepare_say_when_claude_cannot_run_the_report_writer(
    with_claude: bool,
    project: Path,
    tmp_path: Path,
    fake_bin: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    clis = ("claude", "codex", "gemini") if with_claude else ("codex", "gemini")
    monkeypatch.setenv("PATH", _path(fake_bin, tmp_path, *clis))
    monkeypatch.chdir(project)
    common = ("--task-type", "error-analysis", "--host", "codex", "--project-root", str(project))
    code, team = _run(capsysbinary, "team", *common, "--json")
    assert code == 0, team
    writer = next(t for t in team["team"] if t["role"] == "report-writer")
    code, dry = _run(
        capsysbinary,
        "prepare",
        *common,
        "--brief",
        "brief.md",
        "--task-group",
        "g",
        "--task-id",
        "t",
        "--dry-run",
    )
    assert code == 0, dry
    if with_claude:
        assert writer["provider"] == "claude"
        assert not [n for n in (*team["notes"], *dry["notes"]) if NOTE in n]
        return
    # The exact rules pick: the first default of the report writer that can run.
    assert writer["modelRef"] == "codex/gpt-5.6" and writer["provenance"] == "default:bundled"
    notes = [n for n in team["notes"] if NOTE in n]
    assert notes == [
        "report-writer#1: claude cannot run the report writer here (cli 'claude' not found "
        "on PATH); the default rules picked codex/gpt-5.6"
    ]
    assert notes[0] in dry["notes"]


def test_the_wizard_says_it_at_the_report_writer_step(
    project: Path, tmp_path: Path, fake_bin: Callable[..., Path]
) -> None:
    env = Environment(
        env={
            "OKSTRA_HOME": os.environ["OKSTRA_HOME"],
            "GEMINI_CLI_HOME": os.environ["GEMINI_CLI_HOME"],
            "PATH": _path(fake_bin, tmp_path, "codex", "gemini"),
        }
    )
    wizard = Wizard.init(
        tmp_path / "w.json", project, host="codex", task_type="error-analysis", environment=env
    )
    prompt = run_through(wizard, stop="role-model:report-writer:1")
    assert prompt.id == "role-model:report-writer:1" and prompt.default == "codex/gpt-5.6"
    assert NOTE in prompt.help, prompt.help
