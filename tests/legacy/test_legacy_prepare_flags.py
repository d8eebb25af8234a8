"""The earlier okstra's prepare flags and OKSTRA_DEFAULT_* variables → request flags."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from legacy_support import FAKE_HELP

from okstra_core.compat import add_legacy_arguments, apply_legacy_inputs, legacy_flags_given
from okstra_core.environment import Environment
from okstra_core.errors import UsageError


def _parse(line: str, project: Path) -> argparse.Namespace:
    parser = argparse.ArgumentParser(add_help=False)
    for flag, dest in (
        ("--project-root", "project_root"),
        ("--task-type", "task_type"),
        ("--brief", "brief"),
        ("--host", "host"),
        ("--entry-mode", "entry_mode"),
        ("--launch", "launch"),
    ):
        parser.add_argument(flag, dest=dest, default="auto" if dest == "launch" else "")
    parser.add_argument("--role-count", dest="role_counts", action="append", default=[])
    parser.add_argument("--role-model", dest="role_models", action="append", default=[])
    add_legacy_arguments(parser)
    return parser.parse_args(["--project-root", str(project), *shlex.split(line)])


def _apply(line: str, project: Path, **env: str) -> tuple[argparse.Namespace, list[str]]:
    ns = _parse(line, project)
    notes = apply_legacy_inputs(ns, Environment(env={**os.environ, **env}))
    return ns, notes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    return root


def test_nothing_older_changes_nothing(project: Path) -> None:
    ns, notes = _apply("--task-type error-analysis --role-model analyser=claude/opus", project)
    assert notes == [] and ns.role_models == ["analyser=claude/opus"] and ns.role_counts == []


def test_workers_and_provider_models_become_role_flags(project: Path) -> None:
    ns, notes = _apply(
        "--task-type error-analysis --workers claude,codex,report-writer "
        "--claude-model sonnet --lead-provider claude --lead-model opus "
        "--report-writer-provider claude --critic off",
        project,
    )
    assert ns.role_counts == ["analyser=2", "critic=0"]
    assert ns.role_models == [
        "analyser=claude/sonnet-4.6",
        f"analyser={_codex_default(project)}",
        "leader=claude/opus-4.6",
        "report-writer=" + _rw_default(),
    ]
    text = "\n".join(notes)
    assert "--workers is deprecated: use --role-count analyser=2 --role-model analyser=" in text
    assert "--lead-provider is deprecated: use --role-model leader=claude/opus-4.6" in text
    assert "--critic is deprecated: use --role-count critic=0" in text


def _codex_default(project: Path) -> str:
    ns, _ = _apply("--task-type error-analysis --workers codex", project)
    assert ns.role_counts == ["analyser=1"]
    value: str = ns.role_models[0].partition("=")[2]
    assert value.startswith("codex/")
    return value


def _rw_default() -> str:
    return "claude/opus-4.6"


def test_worker_roster_is_clamped_to_the_profile(project: Path) -> None:
    ns, _ = _apply("--task-type error-analysis --workers claude,codex,kimi,grok", project)
    assert ns.role_counts == ["analyser=3"]
    assert [m.partition("=")[2].split("/")[0] for m in ns.role_models] == [
        "claude",
        "codex",
        "kimi",
    ]


def test_executor_takes_its_provider_model(project: Path) -> None:
    ns, notes = _apply(
        "--task-type implementation --executor codex --codex-model sol --workers claude,codex",
        project,
    )
    assert ns.role_models == ["implementer=codex/gpt-5.6-sol"]
    assert any("--workers is ignored for implementation" in n for n in notes)


def test_environment_defaults_apply_where_no_flag_decides(project: Path) -> None:
    ns, notes = _apply(
        "--task-type implementation",
        project,
        OKSTRA_DEFAULT_EXECUTOR="codex",
        OKSTRA_DEFAULT_CODEX_MODEL="sol",
        OKSTRA_DEFAULT_LEAD_MODEL="sonnet",
    )
    assert "implementer=codex/gpt-5.6-sol" in ns.role_models
    assert "leader=claude/sonnet-4.6" in ns.role_models
    assert any(
        "OKSTRA_DEFAULT_EXECUTOR is deprecated: use --role-model implementer=" in n for n in notes
    )
    # A new flag wins over a variable without a conflict.
    ns, notes = _apply(
        "--task-type implementation --role-model implementer=claude/opus",
        project,
        OKSTRA_DEFAULT_EXECUTOR="codex",
    )
    assert ns.role_models == ["implementer=claude/opus"]
    assert any(
        "OKSTRA_DEFAULT_EXECUTOR is not applied with --role-count/--role-model" in n for n in notes
    )


def test_variables_are_not_applied_on_the_canonical_path(project: Path) -> None:
    # --role-count alone (nothing for the leader) still keeps the lead variable out.
    ns, notes = _apply(
        "--task-type error-analysis --role-count analyser=2",
        project,
        OKSTRA_DEFAULT_LEAD_MODEL="sonnet",
    )
    assert ns.role_models == [] and ns.role_counts == ["analyser=2"]
    assert notes == [
        "okstra prepare: OKSTRA_DEFAULT_LEAD_MODEL is not applied with "
        "--role-count/--role-model (those flags decide the team)"
    ]
    ns, _notes = _apply("--task-type error-analysis", project, OKSTRA_DEFAULT_LEAD_MODEL="sonnet")
    assert ns.role_models == ["leader=claude/sonnet-4.6"]


@pytest.mark.parametrize(
    ("line", "older", "newer"),
    [
        ("--workers claude,codex --role-count analyser=2", "--workers", "--role-count"),
        ("--workers claude --role-model analyser=claude/opus", "--workers", "--role-model"),
        ("--lead-model opus --role-model leader=claude/opus", "--lead-model", "--role-model"),
        ("--critic codex --role-count critic=1", "--critic", "--role-count"),
        ("--claude-model opus --role-model analyser=claude/opus", "--claude-model", "--role-model"),
        (
            "--report-writer-model sonnet --role-model report-writer=claude/opus",
            "--report-writer-model",
            "--role-model",
        ),
        ("--lead-runtime codex --host terminal", "--lead-runtime", "--host"),
        ("--task-brief a.md --brief b.md", "--task-brief", "--brief"),
    ],
)
def test_older_and_newer_flags_deciding_the_same_thing_conflict(
    project: Path, line: str, older: str, newer: str
) -> None:
    with pytest.raises(UsageError) as info:
        _apply(f"--task-type error-analysis {line}", project)
    text = info.value.render()
    assert older in text and newer in text
    assert info.value.field == older


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("--workers claude,nobody", "--workers"),
        ("--claude-model gpt-9", "--claude-model"),
        ("--worker-model codex", "--worker-model"),
        ("--executor codex", "--executor"),  # error-analysis has no implementer
        ("--lead-model opus --entry-mode current-session", "--lead-model"),
    ],
)
def test_older_values_that_name_nothing_are_refused(project: Path, line: str, field: str) -> None:
    with pytest.raises(UsageError) as info:
        _apply(f"--task-type error-analysis {line}", project)
    assert info.value.field == field


def test_simple_renames(project: Path) -> None:
    ns, notes = _apply(
        "--task-type error-analysis --lead-runtime codex --task-brief docs/b.md --render-only "
        "--project-id shop --analysis-target '' --stages ''",
        project,
    )
    assert (ns.host, ns.brief, ns.launch) == ("codex", "docs/b.md", "none")
    text = "\n".join(notes)
    assert "--lead-runtime is deprecated: use --host codex" in text
    assert "--task-brief is deprecated: use --brief docs/b.md" in text
    assert "--render-only is deprecated: use --launch none" in text
    assert "--project-id is deprecated and ignored" in text
    assert set(legacy_flags_given(ns)) >= {"--analysis-target", "--stages", "--render-only"}


def _okstra(*args: str, **env: str) -> tuple[dict[str, Any], int, str]:
    exe = Path(sys.executable).parent / "okstra"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]
    done = subprocess.run(
        [*cmd, *args],
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    return orjson.loads(done.stdout), done.returncode, done.stderr.decode()


@pytest.fixture
def briefed(project: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)
    (project / "docs").mkdir()
    (project / "docs" / "brief.md").write_text("# brief\n")
    return project


EARLIER_ARGV = (
    "--task-group checkout --task-id chk-1 --task-type error-analysis "
    "--task-brief docs/brief.md --workers claude,codex --claude-model sonnet "
    "--critic off --lead-runtime terminal --analysis-target '' --launch none --dry-run"
)


def test_earlier_prepare_command_line_prepares(briefed: Path) -> None:
    result, code, stderr = _okstra(
        "prepare",
        "--project-root",
        str(briefed),
        *shlex.split(EARLIER_ARGV),
        OKSTRA_DEFAULT_LEAD_MODEL="sonnet",
    )
    assert code == 0 and result["ok"], (result, stderr)
    team = {(m["role"], m["ordinal"]): m["modelRef"] for m in result["team"]}
    assert team[("analyser", 1)] == "claude/sonnet-4.6"
    assert team[("analyser", 2)].startswith("codex/")
    assert team[("leader", 1)] == "claude/sonnet-4.6"
    assert ("critic", 1) not in team
    assert "--workers is deprecated: use --role-count analyser=2" in stderr
    assert "--lead-runtime is deprecated: use --host terminal" in stderr
    assert "OKSTRA_DEFAULT_LEAD_MODEL is deprecated: use --role-model leader=" in stderr
    assert not (briefed / ".okstra").exists()  # a dry run writes nothing


def test_conflicting_older_and_newer_flags_exit_2(briefed: Path) -> None:
    result, code, _ = _okstra(
        "prepare",
        "--project-root",
        str(briefed),
        *shlex.split(EARLIER_ARGV),
        "--role-model",
        "analyser=claude/opus",
    )
    assert code == 2 and result["ok"] is False
    assert "--workers" in result["error"] and "--role-model" in result["error"]
    # `--base-ref` is okstra's own again: for a phase no role of which writes, refused.
    unsupported, code, _ = _okstra(
        "prepare", "--project-root", str(briefed), *shlex.split(EARLIER_ARGV), "--base-ref", "main"
    )
    assert (
        code == 2
        and "--base-ref applies only to phases whose roles write" in (unsupported["error"])
    )


def test_older_flags_with_state_are_refused(briefed: Path, tmp_path: Path) -> None:
    result, code, _ = _okstra("prepare", "--state", str(tmp_path / "w.json"), "--workers", "x")
    assert code == 2 and "not both" in result["error"]


def test_the_earlier_wizards_render_argv_prepares_as_it_was_written(briefed: Path) -> None:
    # `--lead-runtime H` first, then every render argument as `--name value`, empty
    # values included, then the role flags — the earlier wizard's outcome, verbatim.
    context = {
        "hostId": "terminal",
        "entryMode": "spawn-process",
        "availableFunctions": [],
        "interactionSurface": "unavailable",
        "currentModel": {"provider": "", "modelRef": None, "effort": None},
    }
    pairs = [
        ("lead-runtime", "terminal"),
        ("project-root", str(briefed)),
        ("project-id", "shop-4f2a"),
        ("task-group", "checkout"),
        ("task-id", "chk-1"),
        ("task-type", "requirements-discovery"),
        ("task-brief", "docs/brief.md"),
        ("analysis-target", ""),
        ("evidence-inputs", ""),
        ("approved-plan", ""),
        ("stage", ""),
        ("stages", ""),
        ("base-ref", ""),
        ("directive", "keep it short"),
        ("related-tasks", ""),
        ("clarification-response", ""),
        ("selected-direction", ""),
        ("work-category", ""),
        ("pr-template-path", ""),
        ("fix-cycle", ""),
        ("host-session-context-json", orjson.dumps(context).decode()),
        ("role-count", "analyser=2"),
        ("role-model", "leader=claude/opus-4.6"),
        ("role-model", "analyser=claude/sonnet-4.6"),
        ("role-model", "analyser=codex/gpt-5.6-sol"),
        ("role-model", "report-writer=claude/haiku-4.5"),
    ]
    argv = [word for name, value in pairs for word in (f"--{name}", value)]
    result, code, stderr = _okstra("prepare", *argv, "--launch", "none", "--dry-run")
    assert code == 0 and result["ok"], (result, stderr)
    team = {(m["role"], m["ordinal"]): m["modelRef"] for m in result["team"]}
    assert team == {
        ("leader", 1): "claude/opus-4.6",
        ("analyser", 1): "claude/sonnet-4.6",
        ("analyser", 2): "codex/gpt-5.6-sol",
        ("report-writer", 1): "claude/haiku-4.5",
    }
    assert "--lead-runtime is deprecated: use --host terminal" in stderr
    assert "--task-brief is deprecated" in stderr
    assert not (briefed / ".okstra").exists()
