"""Shell metacharacters in every user value stay inert.

A project directory, brief file name, directive, related tasks, task group/id and host
session context full of `; $(…) \\`…\\` | & > ' "` and newlines: the launch argv that
`prepare` prints, the argv the (fake) lead CLI really receives through the exec and
tmux backends, and the launch module's own argv builder all carry each value as one
element, and no injected command ever runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from okstra_core.catalog.argv import render_argv
from tests.reliability.reliability_support import World, make_world, okstra, prepare_argv

# Every injected command would create a file named PWNED* somewhere we look.
PAYLOAD = (
    "x; touch PWNED1 $(touch PWNED2) `touch PWNED3` | touch PWNED4 & touch PWNED5 "
    "> PWNED6 ' \" \n touch PWNED7 #{pane_id} %1 $HOME ~ \\; *"
)


def _hostile_world(tmp_path: Path) -> World:
    world = make_world(tmp_path)
    hostile = world.project.with_name("proj $(touch PWNED8) ;`touch PWNED9` & 'q\" #{x}")
    world.project.rename(hostile)
    world.project = hostile
    (hostile / "brief $(touch PWNED10);.md").write_text("# brief\n", encoding="utf-8")
    return world


def _pwned(world: World) -> list[str]:
    found = [str(p) for p in world.root.rglob("PWNED*")]
    found += [str(p) for p in Path.cwd().glob("PWNED*")]
    found += [str(p) for p in Path.home().glob("PWNED*")]
    return found


def _argv(world: World) -> list[str]:
    return prepare_argv(
        world.project,
        # prepare takes slugs only (the wizard slugifies; see test_security_paths).
        group="grp",
        task_id="tsk",
        brief="brief $(touch PWNED10);.md",
        # Related tasks are task keys (a hostile one is refused: test_request_argv).
        extra=["--directive", PAYLOAD, "--related-tasks", "grp/other"],
    )


def test_launch_none_prints_the_argv_and_writes_inert_files(tmp_path: Path) -> None:
    world = _hostile_world(tmp_path)
    run = okstra(world, *_argv(world), "--launch", "none")
    assert run.code == 0 and run.doc["ok"], run.doc
    argv = run.doc["leadArgv"]
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    assert argv[0].endswith("claude")
    # The prompt file path (with the hostile project dir in it) is one element.
    assert any(str(world.project) in a for a in argv), argv
    assert all(a != "x;" and a != "touch" for a in argv), argv
    prompt = Path(run.doc["leadPromptPath"]).read_text(encoding="utf-8")
    assert PAYLOAD.split("\n")[0] in prompt  # the directive reached the prompt verbatim
    assert Path(run.doc["runDir"]).resolve().is_relative_to(world.project.resolve())
    assert not _pwned(world)


def test_exec_backend_hands_each_value_as_one_argv_element(tmp_path: Path) -> None:
    world = _hostile_world(tmp_path)
    log = world.root / "cli.log"
    world.extra_env["FAKE_CLI_LOG"] = str(log)
    run = okstra(world, *_argv(world), "--launch", "exec")
    assert run.code == 0 and run.doc["ok"], run.doc
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    lead = [c for c in calls if "--session-id" in c["argv"]]
    assert len(lead) == 1, calls
    assert lead[0]["argv"] == run.doc["leadArgv"][1:]
    assert Path(lead[0]["cwd"]).resolve() == world.project.resolve()
    assert not _pwned(world)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_backend_hands_each_value_as_one_argv_element(tmp_path: Path) -> None:
    world = _hostile_world(tmp_path)
    log = world.root / "cli.log"
    socket = f"okstra-sec-{uuid.uuid4().hex[:8]}"
    world.extra_env.update({"FAKE_CLI_LOG": str(log), "OKSTRA_TMUX_SOCKET": socket})
    # A lead that stays up at its input line (a lead that exits at once fails the launch).
    world.extra_env.update({"FAKE_CLI_SAY": "❯ Try something", "FAKE_CLI_LINGER": "60"})
    try:
        run = okstra(world, *_argv(world), "--launch", "tmux", timeout=120)
        assert b"Traceback" not in run.stderr
        assert run.doc is not None and run.doc["ok"], run.doc
        for command in run.doc["tmuxCommands"]:
            assert isinstance(command, list) and all(isinstance(a, str) for a in command)
        for _ in range(100):  # the window runs the fake CLI asynchronously
            if log.exists() and "--session-id" in log.read_text():
                break
            import time

            time.sleep(0.05)
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        lead = [c for c in calls if "--session-id" in c["argv"]]
        assert len(lead) == 1, calls
        assert lead[0]["argv"] == run.doc["leadArgv"][1:]
        assert Path(lead[0]["cwd"]).resolve() == world.project.resolve()
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
    assert not _pwned(world)


def test_the_argv_builder_keeps_each_value_one_element() -> None:
    template = ["{cli}", "--session-id", "{session_id}", "--model", "{model}", "{prompt}",
                "--cwd={project_root}"]  # fmt: skip
    values = {"cli": "/bin/claude", "session_id": PAYLOAD, "model": PAYLOAD,
              "prompt": PAYLOAD, "project_root": PAYLOAD, "prompt_file": PAYLOAD}  # fmt: skip
    out = render_argv(template, values, dict(os.environ), source="t", field="launch.new")
    assert len(out) == len(template)
    assert out[2] == out[4] == out[5] == PAYLOAD and out[6] == "--cwd=" + PAYLOAD


# ------------------------------------------------------------ run files are data

SID = "4c1d2f6e-8a0b-4c3d-9e1f-0a1b2c3d4e5f"


def _claude_run(tmp_path: Path) -> tuple[World, Path, Path]:
    world = make_world(tmp_path)
    world.extra_env["FAKE_CLI_LOG"] = str(world.root / "cli.log")
    argv = prepare_argv(world.project, extra=["--role-model", "leader=claude/opus-4.6"])
    run = okstra(world, *argv, "--launch=none")
    assert run.code == 0, run.doc
    run_dir = Path(run.doc["runDir"])
    return world, run_dir, run_dir / "resume.json"


def _resumed(world: World) -> list[list[str]]:
    log = world.root / "cli.log"
    if not log.exists():
        return []
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # After okstra's MCP server of the run (`--mcp-config FILE --allowedTools mcp__okstra`).
    return [c["argv"][4:] for c in calls if c["argv"][4:5] == ["--resume"]]


def _tamper(sheet: Path, change: str) -> str:
    """Rewrite the lead's entry of `sheet`; return the field the refusal must name."""
    data = json.loads(sheet.read_bytes())
    field = _change(data["participants"][0], change)
    sheet.write_text(json.dumps(data))
    return field


def _change(lead: dict[str, Any], change: str) -> str:
    sid = lead["sessionId"]
    if change == "shell":
        lead["resumeArgv"] = ["/bin/sh", "-c", f"touch PWNED1 # {sid}"]
        return "resumeArgv"
    if change == "extra-flag":
        lead["resumeArgv"] = [*lead["resumeArgv"], "--dangerously-skip-permissions"]
        return "resumeArgv"
    if change == "other-binary":
        lead["resumeArgv"] = ["/tmp/evil/sh", *lead["resumeArgv"][1:]]
        return "resumeArgv"
    if change == "cwd":
        lead["cwd"] = "/"
        return "cwd"
    if change == "env":
        lead["env"] = {"LD_PRELOAD": "/tmp/evil.so"}
        return "env"
    if change in ("flag-id", "path-id", "not-a-uuid"):
        bad = {"flag-id": "--help", "path-id": "../../x", "not-a-uuid": "abc"}[change]
        lead["sessionId"] = bad
        lead["resumeArgv"] = [bad if a == sid else a for a in lead["resumeArgv"]]
        return "sessionId"
    if change == "model":
        lead["model"] = "--yolo"
        lead["resumeArgv"] = ["--yolo" if a == "claude-opus-4-6" else a for a in lead["resumeArgv"]]
        return "model"
    if change == "provider":
        lead["provider"] = "evil"
        return "provider"
    raise AssertionError(change)


TAMPERING = ["shell", "extra-flag", "other-binary", "cwd", "env", "flag-id", "path-id",
             "not-a-uuid", "model", "provider"]  # fmt: skip


@pytest.mark.parametrize("change", TAMPERING)
def test_resume_exec_refuses_a_sheet_it_did_not_write(tmp_path: Path, change: str) -> None:
    world, run_dir, sheet = _claude_run(tmp_path)
    field = _tamper(sheet, change)
    run = okstra(world, "resume", str(run_dir), "--exec", "--json", timeout=30)
    assert b"Traceback" not in run.stderr
    assert run.code == 2, (run.code, run.doc)
    assert run.doc["ok"] is False and field in run.doc["error"], run.doc
    assert not _resumed(world), "a tampered sheet was executed"
    assert not _pwned(world)


def test_resume_exec_runs_the_rebuilt_command(tmp_path: Path) -> None:
    """The untampered sheet resumes: the argv okstra rebuilt, in the project root."""
    world, run_dir, sheet = _claude_run(tmp_path)
    sid = json.loads(sheet.read_bytes())["participants"][0]["sessionId"]
    run = okstra(world, "resume", str(run_dir), "--exec", "--json", cwd=world.root, timeout=30)
    assert run.code == 0, (run.code, run.stdout[:2000])
    assert _resumed(world) == [["--resume", sid, "--model", "claude-opus-4-6"]]


def test_plain_resume_never_writes_through_links(tmp_path: Path) -> None:
    """A pending codex sheet whose lock and timeline are links: refused, targets intact."""
    world = make_world(tmp_path)
    codex_home = world.root / "codex-home"
    world.extra_env["CODEX_HOME"] = str(codex_home)
    argv = prepare_argv(world.project, extra=["--role-model", "leader=codex/gpt-5.6-sol"])
    run = okstra(world, *argv, "--launch=none")
    assert run.code == 0, run.doc
    run_dir = Path(run.doc["runDir"])
    victim = world.project / "src" / "app.py"
    victim.parent.mkdir()
    victim.write_bytes(b"print('app')\n")
    (run_dir / "resume.json.lock").symlink_to(victim)
    timeline = run_dir.parent.parent / "timeline.jsonl"
    timeline.unlink()
    timeline.symlink_to(victim)
    # The codex session the lookup will find (so the sheet would be rewritten).
    folder = codex_home / "sessions" / "2030" / "01" / "01"
    folder.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"id": SID, "cwd": str(world.project)}}
    (folder / f"rollout-2030-01-01T00-00-00-{SID}.jsonl").write_text(json.dumps(meta) + "\n")
    before = {p: p.read_bytes() for p in run_dir.iterdir() if p.is_file() and not p.is_symlink()}
    run = okstra(world, "resume", str(run_dir), "--wait", "0", "--json", timeout=30)
    assert b"Traceback" not in run.stderr
    assert run.code == 2 and "symbolic link" in run.doc["error"], (run.code, run.doc)
    assert victim.read_bytes() == b"print('app')\n"
    assert {p: p.read_bytes() for p in before} == before
