"""The worker runtime's small parts: naming a member, process identity, tmux trust,
activity patterns, the runs index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from okstra_core.catalog.activity import ActivitySpec, classify
from okstra_core.documents.run import (
    BindingRecord,
    FileRef,
    Participant,
    RoleExecution,
    RunManifest,
)
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError, UsageError
from okstra_core.life import index
from okstra_core.life.workers.team import find, members
from okstra_core.processes.process import Identity, as_pid, process_start
from okstra_core.processes.tmux import pane_env, socket_dir, trusted_socket


def _participant(ref: str, role: str, status: str) -> Participant:
    return Participant(
        participant_ref=ref,
        role=role,
        provider="codex",
        model_ref="codex/gpt-5.6-sol",
        model_id="gpt-5.6-sol",
        runner="cli-wrapper",
        host_runtime="terminal",
        entry_mode="spawn-process",
        status=status,
    )


def _execution(role: str, participant_ref: str) -> RoleExecution:
    return RoleExecution(
        role_execution_ref=f"role-exec-{role}-001",
        participant_ref=participant_ref,
        role=role,
        duty=role,
        provider="codex",
        model_ref="codex/gpt-5.6-sol",
        model_id="gpt-5.6-sol",
        display_name="GPT",
        execution="gpt-5.6-sol",
        ordinal=1,
        execution_label=f"{role}#1 · codex/gpt-5.6-sol",
        model_spec_digest="0" * 64,
        binding=BindingRecord(runner="cli-wrapper", host_runtime="terminal"),
        provenance="chosen",
    )


def _manifest(name: str = "requirements-discovery-001", status: str = "running") -> RunManifest:
    return RunManifest(
        okstra_version="0",
        created_at="2026-01-01T00:00:00+00:00",
        run_id=name,
        seq=1,
        task_type="requirements-discovery",
        project_id="p",
        project_root="/p",
        task_key="perf/widget",
        task_group="perf",
        task_id="widget",
        host_runtime="terminal",
        entry_mode="spawn-process",
        brief=FileRef(path="brief.md", sha256="0" * 64),
        paths={},
        participants=(
            _participant("participant-001", "leader", "launched"),
            _participant("participant-002", "analyser", status),
        ),
        role_executions=(
            _execution("leader", "participant-001"),
            _execution("analyser", "participant-002"),
            # A role execution whose participant the manifest lacks: no member.
            _execution("critic", "participant-009"),
        ),
    )


def test_a_member_is_named_by_ref_label_or_role_and_ordinal() -> None:
    team = members(_manifest())
    assert [m.short for m in team] == ["leader#1", "analyser#1"]
    for who in ("role-exec-analyser-001", "analyser#1 · codex/gpt-5.6-sol", "analyser#1"):
        assert find(team, who).ref == "role-exec-analyser-001"
    assert find(team, "analyser#1").status == "running"
    with pytest.raises(UsageError, match="the lead of the run"):
        find(team, "leader#1")
    with pytest.raises(UsageError, match=r"its workers: analyser#1"):
        find(team, "critic#1")


def test_an_identity_is_the_pid_and_its_start_time() -> None:
    me = Identity.now(os.getpid())
    assert me is not None and me.alive()
    assert not Identity(os.getpid(), str(int(me.start) + 1)).alive()  # a reused pid
    for bad in (0, 1, -5, True, 2**40, "12", None):
        assert as_pid(bad) is None
    assert Identity.of(os.getpid(), "not-a-number") is None
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    gone = Identity.now(child.pid)
    child.wait()
    assert gone is not None and not gone.alive() and process_start(child.pid) is None
    # Never a signal to a process that is not the one recorded.
    assert gone.signal_group(15) is False


def test_tmux_is_trusted_only_in_a_private_directory(tmp_path: Path) -> None:
    env = Environment(env={"TMUX_TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    mine = socket_dir(env)
    assert trusted_socket(mine / "default", env)  # tmux makes it private
    mine.mkdir(mode=0o700)
    assert trusted_socket(mine / "default", env)
    mine.chmod(0o755)
    assert not trusted_socket(mine / "default", env)
    assert not trusted_socket("relative/socket", env)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert not trusted_socket(shared / "s", env)
    inside = Environment(env={"TMUX": f"{shared}/s,1,0", "PATH": "/usr/bin"})
    assert trusted_socket(shared / "s", inside)  # the server the user is inside
    env2 = Environment(env={"PATH": "/x", "TMUX": "/t,1,0", "SECRET": "no", "LANG": "C"})
    tmux_env = pane_env(env2)
    assert "SECRET" not in tmux_env and "TMUX" not in tmux_env
    assert tmux_env["LC_CTYPE"] == "C.UTF-8" and tmux_env["PATH"].startswith("/usr")


def test_activity_patterns_decide_the_state() -> None:
    spec = ActivitySpec(running=("esc to interrupt",), waiting=(r"^\s*❯ ",), idle=("^Bye$",))
    assert classify(["✻ Thinking… (esc to interrupt)", "─" * 9, "❯ ", "─" * 9], spec) == "running"
    assert classify(["answer", "─" * 9, "❯ ", "─" * 9, "  ⏵⏵ auto mode on"], spec) == (
        "waiting for input"
    )
    assert classify(["Bye"], spec) == "idle"
    assert classify(["still typing output"], spec) == "running"
    assert classify(["❯ "], None) == "running"


def test_a_bad_activity_pattern_names_the_provider_file(tmp_path: Path) -> None:
    from okstra_core.catalog import load_provider
    from okstra_core.paths import bundled_prompts_root

    text = (bundled_prompts_root() / "providers" / "claude.toml").read_text(encoding="utf-8")
    bad = text.replace("[activity]\n", "[activity]\nidle = ['(unclosed']\n", 1)
    path = tmp_path / "claude.toml"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_provider(path, bundled=False)
    assert (
        info.value.field == "activity.idle[0]" and "not a regular expression" in info.value.message
    )


def _run(root: Path, name: str, status: str = "prepared") -> Path:
    run_dir = root / ".okstra" / "tasks" / "perf" / "widget" / "runs" / name
    run_dir.mkdir(parents=True)
    (run_dir / "run-manifest.json").write_bytes(_manifest(name, status).to_bytes())
    return run_dir


def test_the_runs_index_follows_the_runs(tmp_path: Path) -> None:
    first = _run(tmp_path, "requirements-discovery-001", "running")
    second = _run(tmp_path, "requirements-discovery-002")
    # Not in the index yet: found by listing the run directories, then indexed.
    rows = {r.run_id: r for r in index.rows(tmp_path)}
    assert rows["requirements-discovery-001"].worker_states == {"running": 1}
    assert not rows["requirements-discovery-001"].settled
    assert rows["requirements-discovery-002"].settled is False  # the lead is launched
    assert index.index_path(tmp_path).exists()
    manifest = _manifest("requirements-discovery-001", "exited")
    index.note(first, manifest)
    rows = {r.run_id: r for r in index.rows(tmp_path)}
    assert rows["requirements-discovery-001"].worker_states == {"exited": 1}
    # A torn last line costs only that line; a removed run drops out.
    with index.index_path(tmp_path).open("ab") as fh:
        fh.write(b'{"run": "perf/widget/runs/requirements-discovery-00')
    import shutil

    shutil.rmtree(second)
    assert [r.run_id for r in index.rows(tmp_path)] == ["requirements-discovery-001"]


def test_the_runs_index_is_compacted(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, "requirements-discovery-001")
    manifest = _manifest()
    for _ in range(100):
        index.note(run_dir, manifest)
    assert len(index.rows(tmp_path)) == 1
    lines = index.index_path(tmp_path).read_bytes().splitlines()
    assert len(lines) == 1 and orjson.loads(lines[0])["runId"] == "requirements-discovery-001"
