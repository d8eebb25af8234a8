"""The bundled `[activity]` patterns against screens of the real CLIs, and how a screen
becomes `idle` or `stalled`.

`screens/` holds panes captured from the pinned real CLIs in tmux (`capture-pane -p -J`),
kept byte for byte: claude 2.1.332 (its empty input line is `❯`, U+00A0, a space),
codex 0.171.0 and gemini 0.61.0 (the antigravity provider; offline, `GEMINI_CLI_HOME`
isolated: its sign-in and trust dialogs, and with a dummy `GEMINI_API_KEY` its empty
input box and a turn in progress waiting for the network) — an empty input box, a
question, a turn in progress.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core.catalog import load_catalog
from okstra_core.catalog.activity import (
    IDLE,
    RUNNING,
    STALLED,
    WAITING,
    ActivitySpec,
    classify,
    settled,
)
from okstra_core.display import is_art, screen_line, words_of
from okstra_core.environment import Environment
from okstra_core.processes.tmux import shown_lines as _shown_lines

SCREENS = Path(__file__).parent / "screens"

CASES = [
    ("claude", "claude-empty.txt", WAITING),
    ("claude", "claude-question.txt", WAITING),
    ("claude", "claude-turn.txt", RUNNING),
    ("claude", "claude-answered.txt", WAITING),
    ("codex", "codex-empty.txt", WAITING),
    ("codex", "codex-question.txt", WAITING),
    ("codex", "codex-signin.txt", WAITING),
    ("codex", "codex-turn.txt", RUNNING),
    ("antigravity", "gemini-empty.txt", WAITING),
    ("antigravity", "gemini-signin.txt", WAITING),
    ("antigravity", "gemini-trust.txt", WAITING),
    ("antigravity", "gemini-turn.txt", RUNNING),
]


def _screen(name: str) -> str:
    return (SCREENS / name).read_text(encoding="utf-8")


def _spec(provider: str) -> ActivitySpec:
    spec = load_catalog(Environment.real()).provider(provider).activity
    assert spec is not None
    return spec


@pytest.mark.parametrize(("provider", "screen", "expected"), CASES)
def test_bundled_patterns_read_real_screens(provider: str, screen: str, expected: str) -> None:
    lines = _shown_lines(_screen(screen), 40)
    assert classify(lines, _spec(provider)) == expected


def test_the_real_claude_empty_prompt_holds_a_no_break_space() -> None:
    raw = [line for line in _screen("claude-empty.txt").splitlines() if line.startswith("❯")]
    assert raw == ["❯\u00a0 "]  # the fixture is the real thing, not a tidied copy
    # Stripped the old way, the line lost its space and the claude pattern missed it.
    assert classify([raw[0].rstrip()], _spec("claude")) == RUNNING
    assert screen_line(raw[0]) == "❯ "
    assert classify(raw, _spec("claude")) == WAITING


def test_screen_line_reads_no_break_spaces_as_spaces() -> None:
    assert screen_line("a\u00a0b\u202fc  \u00a0 ") == "a b c "
    assert screen_line("plain") == "plain"


def test_banner_art_is_not_a_last_line() -> None:
    lines = _shown_lines(_screen("codex-empty.txt"), 80)
    art = [line for line in lines if is_art(line)]
    assert len(art) >= 10  # codex draws its logo in Braille
    last = words_of(lines, 3)
    assert last[-1].startswith("  ← for agents") and not any(is_art(line) for line in last)
    assert not is_art("▐▛███▛█   Claude Code v2.1.332")
    assert is_art("─" * 40)


def test_quiet_screens_settle() -> None:
    spec = ActivitySpec(waiting=("^> ",), idle_after=300, stall_after=120)
    assert settled(WAITING, 299, spec) == WAITING
    assert settled(WAITING, 300, spec) == IDLE
    assert settled(RUNNING, 119, spec) == RUNNING
    assert settled(RUNNING, 120, spec) == STALLED
    assert settled(RUNNING, 120, None) == STALLED  # the default is 120 s
    assert settled(RUNNING, 10_000, ActivitySpec(stall_after=20_000)) == RUNNING
