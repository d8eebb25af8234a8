"""Preflight: each spawned CLI is on PATH, answers its version, and the leader's flags exist."""

from __future__ import annotations

import stat
import time
from pathlib import Path

from launch_helpers import bundled, fake_env, read_log

from okstra_core.launch import RoleInstance, preflight
from okstra_core.records import to_data


def _team() -> list[RoleInstance]:
    claude, codex = bundled("claude"), bundled("codex")
    return [
        RoleInstance("leader", 1, claude, "cli-wrapper"),
        RoleInstance("analyser", 1, codex, "cli-wrapper"),
        RoleInstance("analyser", 2, codex, "cli-wrapper"),
        RoleInstance("critic", 1, claude, "native-session"),  # runs inside the host
    ]


def test_all_good_and_each_cli_asked_once(fake_bin, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    help_text = "usage: --session-id <id> --model <m> -r, --resume [id] --no-daemon -c, --config"
    env = fake_env(fake_bin("claude", "codex"), FAKE_CLI_LOG=str(log), FAKE_CLI_HELP=help_text)
    results = preflight(_team(), env)
    assert [r.instance for r in results] == ["leader#1", "analyser#1", "analyser#2"]
    assert all(r.ok for r in results), [r.message() for r in results]
    assert results[0].version == "claude 9.9.9 (fake)"
    calls = [(c["cli"], c["argv"]) for c in read_log(log)]
    # Once each: its version, its launch flags (both can lead), its login status (the
    # fakes do not answer it as the real CLIs do: "cannot tell", not logged out).
    assert sorted(calls) == [
        ("claude", ["--help"]),
        ("claude", ["--version"]),
        ("claude", ["auth", "status"]),
        ("codex", ["--help"]),
        ("codex", ["--version"]),
        ("codex", ["login", "status"]),
    ]
    assert results[0].logged_in is None
    assert to_data(results[0])["ok"] is True


def test_missing_cli_and_missing_flags_name_instance_cli_and_remedy(fake_bin) -> None:
    env = fake_env(fake_bin("claude"), FAKE_CLI_HELP="usage: --model-provider x --resume")
    results = {r.instance: r for r in preflight(_team(), env)}
    lead = results["leader#1"]
    assert not lead.ok
    assert "--session-id, --model" in (lead.problem or "")  # --model-provider is not --model
    assert "upgrade `claude`" in (lead.remedy or "")
    assert lead.message().startswith("leader#1: claude: this version (claude 9.9.9 (fake))")
    codex = results["analyser#2"]
    assert not codex.ok and codex.problem == "`codex` is not on PATH"
    assert "another provider" in (codex.remedy or "")


def test_current_session_leader_is_not_checked(fake_bin) -> None:
    env = fake_env(fake_bin())
    team = [RoleInstance("leader", 1, bundled("claude"), "current-session")]
    assert preflight(team, env) == []


def _script(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_version_failures(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _script(bin_dir, "claude", "sleep 5")
    _script(bin_dir, "codex", "echo 'boom: no libc' >&2; exit 3")
    env = fake_env(bin_dir)
    results = preflight(_team()[:2], env, timeout=0.3)
    assert "did not answer within 0.3 s" in (results[0].problem or "")
    assert results[1].problem == "`codex --version` exited with status 3: boom: no libc"


def _rendezvous(bin_dir: Path, name: str, marks: Path, others: list[str], out: str) -> None:
    """A CLI that answers only once every other probe has started (else it gives up)."""
    waits = " && ".join(f'[ -e "{marks}/{other}" ]' for other in others)
    _script(
        bin_dir,
        name,
        f'touch "{marks}/{name}-$1"\n'
        "i=0\n"
        f"until {waits}; do\n"
        '  i=$((i + 1)); [ "$i" -gt 400 ] && { echo "alone" >&2; exit 9; }\n'
        "  sleep 0.05\n"
        "done\n"
        f'echo "{out}"',
    )


def test_probes_run_at_the_same_time(tmp_path: Path) -> None:
    # Each probe waits until the others have started: run one after another, the
    # first would give up (exit 9) and fail its check.
    bin_dir, marks = tmp_path / "bin", tmp_path / "marks"
    marks.mkdir()
    flags = "--session-id --model --resume --no-daemon --config --append-system-prompt-file"
    _rendezvous(
        bin_dir, "claude", marks, ["codex---version", "claude---help"], f"claude 1.0 {flags}"
    )
    _rendezvous(bin_dir, "codex", marks, ["claude---version", "claude---help"], "codex 2.0")
    results = preflight(_team(), fake_env(bin_dir), timeout=60)
    assert [r.instance for r in results] == ["leader#1", "analyser#1", "analyser#2"]
    assert all(r.ok for r in results), [r.message() for r in results]
    assert [r.version for r in results][1:] == ["codex 2.0", "codex 2.0"]
    # Every probe ran (each CLI's version, launch flags and login status).
    assert sorted(p.name for p in marks.iterdir()) == [
        "claude---help",
        "claude---version",
        "claude-auth",
        "codex---help",
        "codex---version",
        "codex-login",
    ]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _gone(pid: int) -> bool:
    """Whether `pid` has died, allowing the kernel a moment to deliver the kill."""
    deadline = time.monotonic() + 10
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_timeout_kills_the_probe_and_what_it_started(tmp_path: Path) -> None:
    # The CLI leaves a child holding its stdout open: preflight still returns, and the
    # child is gone (its whole process group was killed).
    bin_dir = tmp_path / "bin"
    pids = tmp_path / "pids"
    _script(bin_dir, "claude", f'sleep 300 &\necho $! >> "{pids}"\nwait')
    _script(bin_dir, "codex", 'echo "codex 2.0"')
    results = preflight(_team()[:2], fake_env(bin_dir), timeout=3)
    assert "did not answer within 3 s" in (results[0].problem or "")
    assert results[1].ok and results[1].version == "codex 2.0"
    children = [int(line) for line in pids.read_text().split()]
    assert len(children) == 3  # the version, the help and the login status probe
    assert all(_gone(pid) for pid in children)


def test_help_probe_failure_is_the_leaders_problem_only_when_the_version_passed(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    _script(bin_dir, "claude", '[ "$1" = --help ] && { sleep 300; exit 0; }\necho "claude 1.0"')
    results = preflight(_team()[:1], fake_env(bin_dir), timeout=0.5)
    assert results[0].version == "claude 1.0"
    assert results[0].problem == "`claude --help` did not answer within 0.5 s"
    _script(bin_dir, "claude", '[ "$1" = --help ] && { echo --model; exit 0; }\nexit 4')
    results = preflight(_team()[:1], fake_env(bin_dir), timeout=5)
    assert results[0].problem == "`claude --version` exited with status 4"
