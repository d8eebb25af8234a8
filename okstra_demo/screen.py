"""What the demo agent shows: the lines an agent's pane shows, one step at a time.

A step takes `OKSTRA_DEMO_STEP_SECONDS` seconds (1.5 by default, so a person can
follow; tests set 0). On a terminal the step in progress is one transient line ending
"esc to interrupt", as a real agent's spinner is, erased when the step is done: okstra
reads the pane's last lines to tell `running` from `waiting for input`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

STEP_ENV = "OKSTRA_DEMO_STEP_SECONDS"
DEFAULT_STEP = 1.5
# The prompt a waiting demo lead shows (the provider's `[activity] waiting` pattern).
PROMPT = "❯ "


def step_seconds() -> float:
    """The pause of one step: `OKSTRA_DEMO_STEP_SECONDS`, else the default."""
    raw = os.environ.get(STEP_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_STEP
    except ValueError:
        return DEFAULT_STEP
    return min(max(value, 0.0), 60.0)


class Screen:
    """The demo agent's output: plain lines, and a transient working line on a tty."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.tty = self.out.isatty()

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def action(self, title: str, detail: str = "") -> None:
        """One action, as an agent's transcript shows it: `⏺ title`, then its detail."""
        self.say(f"⏺ {title}")
        for line in detail.splitlines():
            self.say(f"  ⎿  {line}" if line.strip() else "")

    def work(self, what: str, seconds: float | None = None) -> None:
        """Spend one step on `what` (the working line shows meanwhile on a terminal)."""
        pause = step_seconds() if seconds is None else seconds
        if self.tty:
            self.out.write(f"✻ {what}… (esc to interrupt)")
            self.out.flush()
        time.sleep(pause)
        if self.tty:
            self.out.write("\r\x1b[K")
            self.out.flush()
