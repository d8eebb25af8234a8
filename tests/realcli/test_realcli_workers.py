"""The bundled worker argv of claude, codex and gemini against the real parsers (offline).

A worker is a one-shot run with its prompt on standard input, its access chosen by
flags. What tells "accepted" from "rejected" (measured with the pinned CLIs):

- claude 2.1.332: an accepted `-p` argv exits 1 with "Not logged in" and leaves the
  transcript `<CLAUDE_CONFIG_DIR>/projects/<cwd-slug>/<session id>.jsonl`, whose user
  record holds the prompt read from stdin and the permission mode; a rejected argv
  exits 1 with stderr starting `error:` and creates no config dir.
- codex 0.171: an accepted `exec --json` argv prints its first event
  (`{"type":"thread.started","thread_id":…}`, shown by okstra as the line `session id:
  …`), then writes its rollout `$CODEX_HOME/sessions/…/rollout-<ts>-<id>.jsonl` — the
  working root, the model and the sandbox policy in its turn context, the prompt read
  from stdin as the user message — and then waits for the network (it is stopped
  here); a rejected argv exits 2 with `error: unexpected argument`.
- gemini 0.61: accepted but not authenticated exits 41; rejected
  exits 1 with `Unknown arguments:`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from realcli_helpers import base_env, bundled, require_cli

from okstra_core.launch import worker_argv
from okstra_core.life.workers.usage import UsageReader

pytestmark = pytest.mark.realcli
MARKER = "okstra-worker-task-marker-5c1e"
ACCESS = [(False, "plan", "read-only"), (True, "acceptEdits", "workspace-write")]


def _task(directory: Path) -> Path:
    path = directory / "task.md"
    path.write_text(f"Review the widget. {MARKER}\n", encoding="utf-8")
    return path


def _dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, project, run = tmp_path / "home", tmp_path / "project", tmp_path / "run"
    for directory in (home, project, run):
        directory.mkdir()
    return home, project, run


# --------------------------------------------------------------------------- claude


def _claude(tmp_path: Path, writes: bool) -> tuple[list[str], dict[str, str], Path, Path, str]:
    cli = require_cli("claude")
    home, project, run = _dirs(tmp_path)
    session = str(uuid.uuid4())
    argv = worker_argv(
        bundled("claude"),
        model="claude-sonnet-4-6",
        writes=writes,
        values={
            "cli": str(cli),
            "session_id": session,
            "project_root": str(project),
            "prompt_file": str(_task(run)),
            "result_file": str(run / "result.md"),
        },
    )
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(home / "claude-config")}
    return list(argv), env, project, home / "claude-config", session


def _run_claude(argv: list[str], env: dict[str, str], project: Path) -> Any:
    with (project.parent / "run" / "task.md").open("rb") as stdin:
        return subprocess.run(
            argv, env=env, cwd=project, stdin=stdin, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip


@pytest.mark.parametrize(("writes", "mode", "_capability"), ACCESS)
def test_claude_accepts_the_worker_argv(
    tmp_path: Path, writes: bool, mode: str, _capability: str
) -> None:
    argv, env, project, config, session = _claude(tmp_path, writes)
    access = ["--permission-mode", mode, *(["--allowedTools", "Bash"] if writes else [])]
    assert argv[1] == "-p" and argv[-len(access) :] == access
    assert argv[argv.index("--output-format") + 1] == "json"  # its usage: [usage]
    done = _run_claude(argv, env, project)
    assert not done.stderr.startswith("error:"), done.stderr
    assert done.returncode == 1 and "Not logged in" in done.stdout, (done.stdout, done.stderr)
    # Its JSON result, as okstra reads it: the answer's text shown, the usage read.
    reader = UsageReader(bundled("claude").usage.format)  # type: ignore[union-attr]
    shown = reader.feed(done.stdout.encode()) + reader.finish()
    assert shown.decode().startswith("Not logged in") and reader.usage is not None
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    transcript = config / "projects" / slug / f"{session}.jsonl"
    assert transcript.exists(), sorted(p.name for p in config.rglob("*.jsonl"))
    records = [json.loads(x) for x in transcript.read_text(encoding="utf-8").splitlines()]
    (user,) = [r for r in records if r.get("type") == "user"]
    assert MARKER in json.dumps(user["message"])  # the prompt came on standard input
    assert user["permissionMode"] == mode and user["sessionId"] == session
    assert '"claude-sonnet-4-6"' in transcript.read_text(encoding="utf-8")


def test_claude_negative_control(tmp_path: Path) -> None:
    argv, env, project, config, _ = _claude(tmp_path, False)
    done = _run_claude([argv[0], "--bogus-worker-flag", *argv[1:]], env, project)
    assert done.returncode == 1 and done.stderr.startswith("error:"), done.stderr
    assert "--bogus-worker-flag" in done.stderr and not config.exists()


# --------------------------------------------------------------------------- codex


def _codex(tmp_path: Path, writes: bool) -> tuple[list[str], dict[str, str], Path, Path, Path]:
    cli = require_cli("codex")
    home, project, run = _dirs(tmp_path)
    codex_home = home / "codex"
    codex_home.mkdir()  # codex wants CODEX_HOME to exist
    argv = worker_argv(
        bundled("codex"),
        model="gpt-5.6-sol",
        writes=writes,
        values={
            "cli": str(cli),
            "project_root": str(project),
            "prompt_file": str(_task(run)),
            "result_file": str(run / "result.md"),
        },
    )
    env = {**base_env(home), "CODEX_HOME": str(codex_home)}
    return list(argv), env, project, codex_home, run


def _rollout_turn(codex_home: Path) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """(session meta, turn context, text) of the rollout once it holds the prompt."""
    for path in (codex_home / "sessions").rglob("rollout-*.jsonl"):
        text = path.read_text(encoding="utf-8")
        lines = [json.loads(x) for x in text.splitlines() if x.endswith("}")]
        turns = [x["payload"] for x in lines if x.get("type") == "turn_context"]
        if lines and turns and MARKER in text:
            return lines[0]["payload"], turns[0], text
    return None


def _shown(stdout: Path) -> str:
    """codex's standard output as okstra shows it (its `[usage]` reader)."""
    reader = UsageReader(bundled("codex").usage.format)  # type: ignore[union-attr]
    data = stdout.read_bytes()
    return (reader.feed(data) + reader.finish()).decode("utf-8", "replace")


def _run_codex(
    argv: list[str], env: dict[str, str], project: Path, codex_home: Path, run: Path
) -> tuple[int | None, str, tuple[dict[str, Any], dict[str, Any], str] | None]:
    """Run codex until its rollout holds the prompt (then stop it) or it exits; its
    stderr, then its stdout as okstra shows it."""
    stderr, stdout = run / "stderr.log", run / "stdout.log"
    with (run / "task.md").open("rb") as stdin, stderr.open("wb") as err, stdout.open("wb") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=project, stdin=stdin, stdout=out, stderr=err,
            start_new_session=True,
        )  # fmt: skip
    found = None
    deadline = time.monotonic() + 90
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            found = _rollout_turn(codex_home) if (codex_home / "sessions").exists() else None
            if found is not None:
                break
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
    text = stderr.read_text(encoding="utf-8") + _shown(stdout)
    return (None if found is not None else code), text, found


@pytest.mark.parametrize(("writes", "_mode", "sandbox"), ACCESS)
def test_codex_accepts_the_worker_argv(
    tmp_path: Path, writes: bool, _mode: str, sandbox: str
) -> None:
    argv, env, project, codex_home, run = _codex(tmp_path, writes)
    assert argv[1:3] == ["--no-daemon", "exec"] and argv[-3:] == ["--sandbox", sandbox, "-"]
    assert "--json" in argv  # its events carry the turn's token counts ([usage])
    exited, stderr, found = _run_codex(argv, env, project, codex_home, run)
    assert "unexpected argument" not in stderr, stderr
    assert found is not None, (exited, stderr)
    meta, turn, _ = found
    assert meta["cwd"] == str(project) and meta["source"] == "exec"
    assert f"session id: {meta['id']}" in stderr
    assert turn["model"] == "gpt-5.6-sol"
    assert turn["sandbox_policy"]["type"] == sandbox
    assert turn["approval_policy"] == "never"  # nobody is asked: a worker never waits


def test_codex_negative_control(tmp_path: Path) -> None:
    argv, env, project, codex_home, run = _codex(tmp_path, False)
    bad = [*argv[:3], "--bogus-worker-flag", *argv[3:]]
    exited, stderr, found = _run_codex(bad, env, project, codex_home, run)
    assert exited == 2 and found is None
    assert "error: unexpected argument '--bogus-worker-flag'" in stderr


# --------------------------------------------------------------------------- gemini


def _gemini(tmp_path: Path, writes: bool, *extra: str) -> tuple[list[str], Any]:
    cli = require_cli("gemini")
    home, project, run = _dirs(tmp_path)
    argv = worker_argv(
        bundled("antigravity"),
        model="gemini-3-pro-preview",
        writes=writes,
        values={
            "cli": str(cli),
            "session_id": str(uuid.uuid4()),
            "project_root": str(project),
            "prompt_file": str(_task(run)),
            "result_file": str(run / "result.md"),
        },
    )
    argv = [argv[0], *extra, *argv[1:]]
    env = {**base_env(home), "GEMINI_CLI_HOME": str(home)}
    with (run / "task.md").open("rb") as stdin:
        done = subprocess.run(
            argv, env=env, cwd=project, stdin=stdin, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
    return argv, done


@pytest.mark.parametrize(("writes", "mode"), [(False, "plan"), (True, "yolo")])
def test_gemini_accepts_the_worker_argv(tmp_path: Path, writes: bool, mode: str) -> None:
    """gemini 0.61: accepted but not authenticated exits 41; rejected exits 1."""
    argv, done = _gemini(tmp_path, writes)
    assert ["--approval-mode", mode] == argv[6:8]
    assert "Unknown argument" not in done.stderr, done.stderr  # "Unknown arguments: …"
    assert done.returncode == 41, (done.stdout, done.stderr)


def test_gemini_negative_control(tmp_path: Path) -> None:
    _, done = _gemini(tmp_path, False, "--bogus-worker-flag")
    assert done.returncode == 1 and "Unknown arguments: bogus-worker-flag" in done.stderr


# --------------------------------------------------------------------------- follow-ups

FOLLOW_UP = "okstra-follow-up-marker-9d2a"


def test_claude_accepts_the_follow_up_argv(tmp_path: Path) -> None:
    """The bundled `worker_resume`: the same session's transcript gets the follow-up,
    read from standard input, with the write access's permission mode."""
    argv, env, project, config, session = _claude(tmp_path, True)
    assert _run_claude(argv, env, project).returncode == 1
    resume = worker_argv(
        bundled("claude"),
        model="claude-sonnet-4-6",
        writes=True,
        values={"cli": argv[0], "session_id": session, "project_root": str(project)},
        follow_up=True,
    )
    assert list(resume[1:4]) == ["-p", "--resume", session]
    (project.parent / "run" / "task.md").write_text(f"Once more. {FOLLOW_UP}\n")
    done = _run_claude(list(resume), env, project)
    assert not done.stderr.startswith("error:"), done.stderr
    assert done.returncode == 1 and "Not logged in" in done.stdout, (done.stdout, done.stderr)
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    transcript = config / "projects" / slug / f"{session}.jsonl"
    records = [json.loads(x) for x in transcript.read_text(encoding="utf-8").splitlines()]
    users = [r for r in records if r.get("type") == "user"]
    assert len(users) == 2 and FOLLOW_UP in json.dumps(users[1]["message"])
    assert users[1]["sessionId"] == session and users[1]["permissionMode"] == "acceptEdits"
    # A parser rejection looks otherwise.
    bad = _run_claude([*resume[:2], "--bogus-follow-up-flag", *resume[2:]], env, project)
    assert bad.stderr.startswith("error:") and "--bogus-follow-up-flag" in bad.stderr


def test_codex_accepts_the_follow_up_argv(tmp_path: Path) -> None:
    """The session id comes from the worker's header (`worker_session_pattern`); the
    bundled `worker_resume` continues that rollout with the follow-up and the access."""
    argv, env, project, codex_home, run = _codex(tmp_path, False)
    _, stderr, found = _run_codex(argv, env, project, codex_home, run)
    assert found is not None, stderr
    pattern = bundled("codex").launch.worker_session_pattern
    assert pattern is not None
    match = re.search(pattern, stderr)
    assert match is not None and match.group(1) == found[0]["id"], stderr
    session = match.group(1)
    resume = worker_argv(
        bundled("codex"),
        model="gpt-5.6-sol",
        writes=True,
        values={
            "cli": argv[0],
            "session_id": session,
            "project_root": str(project),
            "result_file": str(run / "result.md"),
        },
        follow_up=True,
    )
    assert list(resume[-2:]) == [session, "-"] and "resume" in resume
    (run / "task.md").write_text(f"Once more. {FOLLOW_UP}\n", encoding="utf-8")
    (rollout,) = (codex_home / "sessions").rglob("rollout-*.jsonl")
    stderr_path, stdout_path = run / "resume-stderr.log", run / "resume-stdout.log"
    with (
        (run / "task.md").open("rb") as stdin,
        stderr_path.open("wb") as err,
        stdout_path.open("wb") as out,
    ):
        proc = subprocess.Popen(
            list(resume), env=env, cwd=project, stdin=stdin, stdout=out,
            stderr=err, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 90
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if FOLLOW_UP in rollout.read_text(encoding="utf-8"):
                break
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "unexpected argument" not in stderr, stderr
    assert f"session id: {session}" in _shown(stdout_path), stderr
    text = rollout.read_text(encoding="utf-8")
    assert FOLLOW_UP in text and '"type":"workspace-write"' in text.replace(" ", "")
