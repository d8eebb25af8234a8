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
from tmux_driver import SESSION, Terminal, eventually, terminal_env
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
    env = terminal_env(tmp_path, path, FAKE_CLI_LINGER="15")
    term = Terminal(request.param, env, make_project(tmp_path / "proj"))
    yield term
    term.close()


def state_file() -> Path:
    (path,) = sorted(user_dirs().wizards.glob("*.json"))
    return path


def saved_state() -> dict[str, Any]:
    return json.loads(state_file().read_text(encoding="utf-8"))


def answer_text(term: Terminal, text: str, next_label: str) -> None:
    term.type(text)
    term.keys("Enter")
    wait_prompt(term, next_label)


def choose(term: Terminal, keys: tuple[str, ...], next_label: str) -> str:
    """Move the highlight with `keys`, choose with Enter, wait for the next prompt."""
    term.keys(*keys, "Enter")
    return wait_prompt(term, next_label)


def settled(screen: str) -> bool:
    """A prompt screen past its first paint: the header shows the step counter (set when
    the screen is shown) and the footer its keys."""
    rows = screen.rstrip("\n").splitlines()
    return bool(rows) and "Step " in rows[0] and "esc Back" in rows[-1]


def wait_prompt(term: Terminal, label: str, *texts: str) -> str:
    """Wait until the prompt labelled `label` is shown and settled (keys reach it)."""
    return term.wait_for(
        lambda shown: label in shown and settled(shown) and all(t in shown for t in texts),
        f"the prompt {label!r}",
    )


def scroll_for(term: Terminal, *texts: str) -> str:
    """Show the end of a long option list (End), wait for `texts`, then go back to the
    top (Home): the caller chooses from there. Returns the screen that had `texts`."""
    term.keys("End")
    shown = term.wait(*texts, timeout=5)
    term.keys("Home")
    return shown


def enter_through(term: Terminal, until: str, *, limit: int = 10) -> list[str]:
    """Press Enter (keep each pre-selected answer) until `until` is on the screen.

    Returns the prompt labels passed. Enter is pressed once per screen: both the step
    counter in the header and the prompt label must change before the next press.
    """
    passed: list[str] = []
    for _ in range(limit):
        shown = term.screen()
        if until in shown:
            return passed
        where = screen_id(shown)
        passed.append(where[1])
        term.keys("Enter")

        def moved(shown: str, where: tuple[str, str] = where) -> bool:
            now = screen_id(shown)
            return now[0] != where[0] and now[1] != where[1] and settled(shown)

        term.wait_for(moved, f"the prompt after {where[1]!r}")
    term.wait(until, timeout=2)
    return passed


def screen_id(screen: str) -> tuple[str, str]:
    """(header, prompt label) of a prompt screen: the label is on the second row, right of
    the history panel's border."""
    rows = [*screen.splitlines(), "", ""]
    label = rows[1]
    for border in "│╮":
        label = label.rpartition(border)[2]
    return rows[0].strip(), label.strip()


def focus_history(term: Terminal, *, limit: int = 6) -> None:
    """Shift+Tab back through the focus chain until the history panel has the focus
    (its footer key, "Rewind here", shows). The footer follows the focus a moment
    later, so each stop gets a short wait before the next Shift+Tab."""
    for _ in range(limit):
        term.keys("BTab")
        if term.shows("Rewind here", timeout=1.0):
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
    terminal.wait("New setup")
    choose(terminal, (), "Which task?")
    choose(terminal, (), "Task group")
    answer_text(terminal, "grp", "Task id")
    answer_text(terminal, "one", "Brief file")
    revision = saved_state()["revision"]
    terminal.type("missing.md")
    terminal.keys("Enter")
    terminal.wait("brief not found", "Brief file")  # inline, on the same screen
    assert saved_state()["revision"] == revision  # a refused answer saves nothing
    terminal.keys(*["BSpace"] * len("missing.md"))  # the input kept the text: fix it
    answer_text(terminal, "brief.md", "Which phase of work?")
    choose(terminal, (), "How many analyser")  # requirements-discovery, recommended
    choose(terminal, (), "Add an optional critic")  # 2 analysers, recommended
    choose(terminal, ("Down",), "Add an optional translator")  # add 1 critic
    choose(terminal, (), "Model for leader #1")  # no translator
    choose(terminal, (), "Model for analyser #1 of 2")  # leader: the default

    # -- 2. Unavailable models are listed, dimmed, with the reason -------------------
    terminal.wait("grok/grok-4", "cli 'grok' not found on PATH")
    # From the default (claude/opus-4.6) one down: antigravity/gemini-3-pro.
    choose(terminal, ("Down",), "Model for analyser #2 of 2")
    # The first analyser's model is offered to the second only as a dimmed row.
    screen = terminal.wait("already chosen for analyser#1")
    assert "antigravity/gemini-3-pro" in screen

    # -- 4. Quit midway; the state is already saved ----------------------------------
    before = saved_state()
    terminal.keys("q")
    eventually(terminal.dead, "okstra to exit after q")
    after = saved_state()
    assert after["revision"] == before["revision"]
    assert after == before
    assert after["roleModels"]["analyser"] == ["antigravity/gemini-3-pro"]

    terminal.respawn(command)
    terminal.wait("grp/one", "New setup")
    terminal.keys("Enter")  # the newest setup is highlighted
    wait_prompt(terminal, "Model for analyser #2 of 2", "already chosen for analyser#1")
    assert saved_state()["revision"] == before["revision"]  # opening writes nothing

    choose(terminal, (), "Model for critic #1")  # analyser #2: codex/gpt-5.6-sol
    # The critic may not reuse an analyser's model (exclude_models_of).
    scroll_for(terminal, "used by analyser#1", "used by analyser#2")
    choose(terminal, (), "Model for report-writer #1")  # critic: claude/sonnet-4.6
    choose(terminal, (), "Give the lead a directive?")
    choose(terminal, (), "Launch this setup?")
    first = saved_state()
    assert first["roleModels"] == {
        "leader": ["claude/opus-4.6"],
        "analyser": ["antigravity/gemini-3-pro", "codex/gpt-5.6-sol"],
        "critic": ["claude/sonnet-4.6"],
        "report-writer": ["claude/opus-4.6"],
    }

    # -- 5. Edit analyser #1 from the history panel ----------------------------------
    answered = [a["step"] for a in first["answered"]]
    focus_history(terminal)  # its newest entry is highlighted
    terminal.keys(*["Up"] * (len(answered) - 1 - answered.index("role-model:analyser:1")))
    choose(terminal, (), "Model for analyser #1 of 2")
    # The remembered answer (gemini-3-pro) is pre-selected; one up is claude/opus-4.6.
    choose(terminal, ("Up",), "Model for analyser #2 of 2")
    passed = enter_through(terminal, "Launch this setup?")
    assert [p.partition(" (")[0] for p in passed[:2]] == [
        "Model for analyser #2 of 2",
        "Model for critic #1 of 1",
    ], passed
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
    terminal.keys("Enter")
    screen = terminal.wait("Lead session started in tmux window", timeout=30)
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
        "--session-id",
        lead["sessionId"],
        "--model",
        lead["model"],
        "--append-system-prompt-file",
        str(terminal.cwd / manifest["paths"]["leadPrompt"]),
        "--",
        KICKOFF,
    ]

    terminal.keys("q")
    eventually(terminal.dead, "okstra to exit after q")
