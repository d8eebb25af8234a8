"""End to end, one realistic setup: the installed `okstra` in a private tmux server.

Driven with send-keys only and read with capture-pane, at 80x24 and 120x40:

1. a new requirements-discovery setup with two analysers, an added critic and distinct
   models (the first analyser's model is dimmed for the second, "already chosen");
2. unavailable models shown with their reason (the `grok` CLI is left off PATH; the
   critic's `exclude_models_of` disables the analysers' models for it);
3. a brief path that does not exist, refused inline, the screen still usable;
4. `q` midway, then resuming from the start screen at the same prompt (the quit saved
   nothing: same revision);
5. an edit from the history panel (analyser #1's model), then Enter through the
   remembered answers to the confirmation;
6. confirming, and the launch backend (`auto`, inside tmux) opening a new window in the
   same tmux session, named after the task, running the lead CLI with the argv the
   run's resume sheet and manifest describe.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tmux_driver import SESSION, Ready, Terminal, eventually, terminal_env
from tui_support import make_project, okstra_cmd

from okstra_core.paths import user_dirs
from okstra_core.prepare.pipeline import KICKOFF

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture(params=[(80, 24), (120, 40)], ids=["80x24", "120x40"])
def terminal(request: pytest.FixtureRequest, tmp_path: Path, fake_bin: Any) -> Iterator[Terminal]:
    # Every bundled provider's CLI but `grok`: its models must show as unavailable.
    bin_dir = fake_bin("claude", "gemini", "codex", "kimi")
    tmux_dir = Path(shutil.which("tmux") or "/usr/bin/tmux").parent
    path = os.pathsep.join(dict.fromkeys([str(bin_dir), str(tmux_dir), "/usr/bin", "/bin"]))
    # The lead CLI stays up, so its tmux window can be seen.
    env = terminal_env(tmp_path, path, FAKE_CLI_LINGER="120")
    term = Terminal(request.param, env, make_project(tmp_path / "proj"))
    yield term
    term.close()


def state_file() -> Path:
    (path,) = sorted(user_dirs().wizards.glob("*.json"))
    return path


def saved_state() -> dict[str, Any]:
    return json.loads(state_file().read_text(encoding="utf-8"))


def answer_text(term: Terminal, text: str, next_step: str, label: str) -> Ready:
    """Type `text`, submit it, and wait for the prompt `next_step` (showing `label`)."""
    term.type(text)
    ready = term.submit("Enter", step=next_step)
    term.wait(label)
    return ready


def choose(term: Terminal, keys: tuple[str, ...], next_step: str, label: str) -> Ready:
    """Move the highlight with `keys`, choose with Enter, wait for the prompt `next_step`
    (showing `label`)."""
    if keys:
        term.press(*keys)
    ready = term.submit("Enter", step=next_step)
    term.wait(label)
    return ready


def scroll_for(term: Terminal, *texts: str) -> str:
    """Show the end of a long option list (End), check `texts` are shown, then go back to
    the top (Home): the caller chooses from there. Returns the screen that had `texts`."""
    term.press("End")
    shown = term.wait(*texts)
    term.press("Home")
    return shown


def enter_through(term: Terminal, until: str, *, limit: int = 10) -> list[str]:
    """Press Enter (keep each pre-selected answer), once per ready screen, until the
    screen of kind `until` is ready. Returns the steps passed."""
    passed: list[str] = []
    last = term.last
    assert last is not None
    for _ in range(limit):
        if last.screen == until:
            return passed
        assert last.step is not None
        passed.append(last.step)
        before = last.revision or 0
        last = term.submit("Enter", revision=lambda r, before=before: r is not None and r > before)
    raise AssertionError(f"no {until} screen after {limit} Enters; at {last}")


def focus_history(term: Terminal, *, limit: int = 6) -> None:
    """Press the history key (Ctrl+R; Tab never goes there) until the history panel has
    the focus; each press waits for the focus to move (a ready line) before the next."""
    for _ in range(limit):
        if term.submit("C-r").focus == "history":
            term.wait("Rewind here")  # its footer key
            return
    raise AssertionError(f"the history panel never got the focus:\n{term.screen()}")


def lead_calls(log: Path) -> list[dict[str, Any]]:
    """The fake CLI calls that started a lead session (not preflight's --version/--help)."""
    if not log.exists():
        return []
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [c for c in calls if "--session-id" in c["argv"]]


def test_tui_e2e_full_scenario(terminal: Terminal) -> None:
    command = okstra_cmd()  # launch backend `auto`: tmux, since it runs inside tmux
    terminal.start(command)

    # -- 1/3. A new setup; a bad brief path refused inline --------------------------
    terminal.ready(screen="start")
    terminal.wait("New setup")
    choose(terminal, (), "task_pick", "Which task?")
    choose(terminal, (), "task_group", "Task group")
    answer_text(terminal, "grp", "task_id", "Task id")
    brief = answer_text(terminal, "one", "brief", "Brief file")
    assert saved_state()["revision"] == brief.revision
    terminal.type("brief")  # no such file: the brief is brief.md
    refused = terminal.submit("Enter", step="brief", error=lambda e: "brief not found" in e)
    terminal.wait("brief not found", "Brief file")  # inline, on the same screen
    assert refused.revision == brief.revision
    assert saved_state()["revision"] == brief.revision  # a refused answer saves nothing
    # The input kept the text: fix it in place.
    answer_text(terminal, ".md", "task_type", "Which phase of work?")
    # requirements-discovery, recommended
    choose(terminal, (), "role-count:analyser", "How many analyser")
    choose(terminal, (), "role-add:critic", "Add an optional critic")  # 2 analysers
    choose(terminal, ("Down",), "role-add:translator", "Add an optional translator")  # 1 critic
    choose(terminal, (), "role-model:leader:1", "Model for leader #1")  # no translator
    choose(terminal, (), "role-model:analyser:1", "Model for analyser #1 of 2")  # the default

    # -- 2. Unavailable models are listed, dimmed, with the reason -------------------
    scroll_for(terminal, "grok/grok-4", "cli 'grok' not found on PATH")
    # From the default (claude/opus-4.6) one down: antigravity/gemini-3-pro.
    choose(terminal, ("Down",), "role-model:analyser:2", "Model for analyser #2 of 2")
    # The first analyser's model is offered to the second only as a dimmed row.
    screen = scroll_for(terminal, "already chosen for analyser#1")
    assert "antigravity/gemini-3-pro" in screen

    # -- 4. Quit midway; the state is already saved ----------------------------------
    before = saved_state()
    assert terminal.quit().revision == before["revision"]
    after = saved_state()
    assert after == before
    assert after["roleModels"]["analyser"] == ["antigravity/gemini-3-pro"]

    terminal.respawn(command)
    terminal.ready(screen="start")
    terminal.wait("grp/one", "New setup")
    # The newest setup is highlighted; opening it writes nothing.
    choose(terminal, (), "role-model:analyser:2", "Model for analyser #2 of 2")
    assert terminal.last is not None and terminal.last.revision == before["revision"]
    scroll_for(terminal, "already chosen for analyser#1")
    assert saved_state()["revision"] == before["revision"]

    # analyser #2: codex/gpt-5.6-sol
    choose(terminal, (), "role-model:critic:1", "Model for critic #1")
    # The critic may not reuse an analyser's model (exclude_models_of).
    scroll_for(terminal, "used by analyser#1", "used by analyser#2")
    # critic: claude/sonnet-4.6
    choose(terminal, (), "role-model:report-writer:1", "Model for report-writer #1")
    directive = terminal.submit("Enter")
    terminal.wait("Give the lead a directive?")
    confirm = terminal.submit("Enter", screen="confirm")
    assert directive.step is not None and confirm.revision == (directive.revision or 0) + 1
    terminal.wait("Launch this setup?")
    first = saved_state()
    assert first["revision"] == confirm.revision
    assert first["roleModels"] == {
        "leader": ["claude/opus-4.6"],
        "analyser": ["antigravity/gemini-3-pro", "codex/gpt-5.6-sol"],
        "critic": ["claude/sonnet-4.6"],
        "report-writer": ["claude/opus-4.6"],
    }

    # -- 5. Edit analyser #1 from the history panel ----------------------------------
    answered = [a["step"] for a in first["answered"]]
    focus_history(terminal)  # its newest entry is highlighted
    terminal.press(*["Up"] * (len(answered) - 1 - answered.index("role-model:analyser:1")))
    terminal.submit("Enter", step="role-model:analyser:1")
    terminal.wait("Model for analyser #1 of 2")
    # The remembered answer (gemini-3-pro) is pre-selected; one up is claude/opus-4.6.
    choose(terminal, ("Up",), "role-model:analyser:2", "Model for analyser #2 of 2")
    passed = enter_through(terminal, "confirm")
    assert passed[:2] == ["role-model:analyser:2", "role-model:critic:1"], passed
    terminal.wait("Launch this setup?")
    edited = saved_state()
    new_analysers = ["claude/opus-4.6", "codex/gpt-5.6-sol"]
    assert edited["roleModels"] == {**first["roleModels"], "analyser": new_analysers}
    assert (
        edited["roleCounts"] == first["roleCounts"] == {"analyser": 2, "critic": 1, "translator": 0}
    )
    for key in ("task_key", "brief_path", "task_type", "directive"):
        assert edited[key] == first[key]

    # -- 6. Confirm; the lead starts in a new window of this tmux session ------------
    terminal.wait("Preflight")
    # Launch is its own key (Enter never launches); the confirm screen's ready line
    # comes once it is armed, so the key is not dropped as typed ahead.
    terminal.submit("l", screen="launch")
    terminal.ready(screen="launch", outcome="prepared")
    screen = terminal.wait("Lead session started in tmux window")
    assert not edited["confirmed"] and saved_state()["confirmed"] is True

    # A second window in the same session (no new session), named after the task
    # (`grp/one` made tmux-safe), and its CLI still running.
    assert terminal.tmux("list-sessions", "-F", "#{session_name}").split() == [SESSION]
    windows = terminal.tmux(
        "list-windows", "-t", SESSION, "-F", "#{window_index} #{window_name} #{pane_dead}"
    )
    rows = [w.split() for w in windows.splitlines()]
    assert len(rows) == 2, rows
    index, name, dead = rows[1]
    assert (name, dead) == ("grp-one", "0")
    window_ref = f"{SESSION}:{index}"
    assert window_ref in screen

    run_dir = terminal.cwd / ".okstra" / "tasks" / "grp" / "one" / "runs"
    assert [p.name for p in run_dir.iterdir()] == ["requirements-discovery-001"]
    run_dir = run_dir / "requirements-discovery-001"
    for name in (
        "run-inputs.json",
        "run-manifest.json",
        "lead-prompt.md",
        "lead-prompt.meta.json",
        "resume.json",
        "resume-lead.sh",
    ):
        assert (run_dir / name).is_file(), name
    task_root = run_dir.parent.parent
    for name in ("task-manifest.json", "task-index.md", "timeline.jsonl"):
        assert (task_root / name).is_file(), name

    manifest = json.loads((run_dir / "run-manifest.json").read_text(encoding="utf-8"))
    leader = manifest["participants"][0]
    assert leader["participantRef"] == "participant-001"
    assert leader["status"] == "launched"
    assert leader["windowRef"] == window_ref
    executions = manifest["roleExecutions"]
    (lead_exec,) = [r for r in executions if r["role"] == "leader"]
    assert [r["modelRef"] for r in executions if r["role"] == "analyser"] == new_analysers

    resume = json.loads((run_dir / "resume.json").read_text(encoding="utf-8"))
    (lead,) = resume["participants"]
    assert lead["sessionId"] == manifest["leadSessionId"] == leader["sessionRef"]
    assert lead["model"] == lead_exec["execution"] == "claude-opus-4-6"

    log = Path(terminal.env["FAKE_CLI_LOG"])
    eventually(lambda: bool(lead_calls(log)), "the lead CLI to start")
    (call,) = lead_calls(log)
    assert call["cli"] == "claude"
    assert call["cwd"] == str(terminal.cwd)
    assert call["argv"] == [
        # okstra's MCP server for this run, its tools allowed without asking
        "--mcp-config",
        str(run_dir / "mcp.json"),
        "--allowedTools",
        "mcp__okstra",
        "--session-id",
        lead["sessionId"],
        "--model",
        lead["model"],
        "--append-system-prompt-file",
        str(terminal.cwd / manifest["paths"]["leadPrompt"]),
        "--",
        KICKOFF,
    ]

    terminal.quit()
