"""(d) The terminal app: first screen ready, and each step transition.

Driven headless with Textual's Pilot at 120×40. The subject is okstra's app from
`make_app()` on a new wizard, walked to the confirm screen with Enter (typing the
text answers first, untimed). The baseline is a bare Textual app doing the same
screen pushes: each screen has a header, a label, an OptionList with as many options
as the okstra screen it stands for (or an Input for a text prompt) and a footer;
Enter moves to the next screen by `switch_screen`, as okstra does.

Timed: first screen = from entering `run_test()` to the first prompt screen being
mounted and idle; transition = from the key press to the next screen being mounted
and idle. Each is timed twice: wall time, and the CPU time of the UI thread (the one
running the event loop; `time.thread_time`), which a busy machine barely moves —
waiting for a core is not counted — and which is exactly the work on the UI thread
(the confirm screen's preflight worker is another thread and is not in it).

Sessions alternate (okstra, bare, bare, okstra, …) so both see the same load; the
notes give the spread of the per-pair ratios (each okstra session against the bare
session next to it: first screen, and the median transition of each).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from ._drive import answer_for, step_kind
from ._fixtures import Machine, make_machine
from ._harness import Figure, NotAvailable, Stats

SIZE = (120, 40)

# (wall seconds, UI-thread CPU seconds) of one timed span.
Span = tuple[float, float]


def _clock() -> Span:
    return time.perf_counter(), time.thread_time()


def _since(start: Span) -> Span:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def _okstra_app() -> Any:
    try:
        from okstra_tui.app import make_app
        from okstra_tui.screens.base import PromptScreen
    except ImportError as exc:
        raise NotAvailable(f"okstra_tui not importable: {exc}") from None
    return make_app, PromptScreen


async def _settle(pilot: Any, app: Any, old: Any) -> Any:
    """Wait until the app shows a screen other than `old`, mounted and idle."""
    for _ in range(2000):
        screen = app.screen
        if screen is not old and screen.is_mounted:
            await pilot.pause()
            return screen
        await pilot.pause()
    raise NotAvailable("the next screen never appeared")


async def _walk_okstra(machine: Machine, run_id: int) -> tuple[Span, list[Span], list[int]]:
    """One session: (first screen, transition times, option counts of each screen)."""
    make_app, prompt_screen = _okstra_app()
    from textual.widgets import Input, OptionList

    from okstra_core.environment import Environment

    state = machine.state(f"tui-{run_id}")
    start = _clock()
    app = make_app(
        project_root=machine.project,
        state=state,
        host="terminal",
        entry_mode="spawn-process",
        launch="none",
        environment=Environment(env=machine.env),
        cursor_blink=False,
    )
    transitions: list[Span] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = await _settle(pilot, app, None)
        if not isinstance(screen, prompt_screen):
            raise NotAvailable(f"first screen is {type(screen).__name__}, not a prompt")
        first = _since(start)
        counts = [len(screen.prompt.options)]
        while isinstance(screen, prompt_screen) and step_kind(screen.prompt.to_json()) != "confirm":
            prompt = screen.prompt.to_json()
            answer = answer_for(prompt, machine, largest_counts=False)
            if prompt.get("kind") == "text":
                screen.query_one(Input).value = answer
            else:
                options = screen.query_one("#options", OptionList)
                options.highlighted = options.get_option_index(answer)
            await pilot.pause()
            old = screen
            t0 = _clock()
            await pilot.press("enter")
            screen = await _settle(pilot, app, old)
            transitions.append(_since(t0))
            if isinstance(screen, prompt_screen):
                counts.append(len(screen.prompt.options))
            if len(transitions) > 100:
                raise NotAvailable("no confirm screen after 100 steps")
    return first, transitions, counts


def _bare_app(counts: list[int]) -> Any:
    from textual.app import App, ComposeResult
    from textual.screen import Screen
    from textual.widgets import Footer, Header, Input, OptionList, Static

    class Step(Screen[None]):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

        def compose(self) -> ComposeResult:
            yield Header()
            yield Static(f"Step {self.index + 1}", id="label")
            n = counts[self.index]
            if n:
                yield OptionList(*(f"option {i}" for i in range(n)), id="options")
            else:
                yield Input(value="answer", id="answer")
            yield Footer()

        def on_mount(self) -> None:
            self.query_one("#options, #answer").focus()

        def _next(self) -> None:
            if self.index + 1 < len(counts):
                self.app.switch_screen(Step(self.index + 1))

        def on_option_list_option_selected(self, _event: OptionList.OptionSelected) -> None:
            self._next()

        def on_input_submitted(self, _event: Input.Submitted) -> None:
            self._next()

    class Bare(App[None]):
        def on_mount(self) -> None:
            self.push_screen(Step(0))

    return Bare(), Step


async def _walk_bare(counts: list[int]) -> tuple[Span, list[Span]]:
    start = _clock()
    app, step_cls = _bare_app(counts)
    transitions: list[Span] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = await _settle(pilot, app, None)
        first = _since(start)
        for _ in range(len(counts) - 1):
            old = screen
            t0 = _clock()
            await pilot.press("enter")
            screen = await _settle(pilot, app, old)
            transitions.append(_since(t0))
            assert isinstance(screen, step_cls)
    return first, transitions


def _spread(ratios: list[float]) -> str:
    """The per-pair ratios: median (min–max)."""
    return f"pairs {statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}×)"


def measure(work: Path, repeat: int) -> list[Figure]:
    names = (
        "(d) TUI first screen ready (Pilot, 120×40)",
        "(d) TUI step transition (Pilot, 120×40)",
        "(d) TUI first screen, UI-thread CPU",
        "(d) TUI step transition, UI-thread CPU",
    )
    baseline_name = "bare Textual app, same screen pushes"
    runs = max(5, repeat // 2)
    try:
        machine = make_machine(work / "tui")
        # Warm-up: imports, CSS parsing caches, and the option counts the baseline copies.
        _, _, counts = asyncio.run(_walk_okstra(machine, 0))
        asyncio.run(_walk_bare(counts))
        # [wall, cpu] × [subject, baseline] × sessions
        firsts: list[list[list[Span]]] = [[], []]
        steps: list[list[list[Span]]] = [[], []]

        def okstra(i: int) -> None:
            first, spans, _ = asyncio.run(_walk_okstra(machine, i + 1))
            firsts[0].append([first])
            steps[0].append(spans)

        def bare() -> None:
            first, spans = asyncio.run(_walk_bare(counts))
            firsts[1].append([first])
            steps[1].append(spans)

        for i in range(runs):
            # Alternate who goes first, so neither always follows the other.
            if i % 2:
                bare()
                okstra(i)
            else:
                okstra(i)
                bare()
    except NotAvailable as exc:
        return [Figure(name, baseline_name=baseline_name, missing=str(exc)) for name in names]
    figures: list[Figure] = []
    for clock in (0, 1):  # wall, UI-thread CPU
        s_first = [session[0][clock] for session in firsts[0]]
        b_first = [session[0][clock] for session in firsts[1]]
        s_steps = [[span[clock] for span in session] for session in steps[0]]
        b_steps = [[span[clock] for span in session] for session in steps[1]]
        first_pairs = [s / b for s, b in zip(s_first, b_first, strict=True)]
        step_pairs = [
            statistics.median(s) / statistics.median(b)
            for s, b in zip(s_steps, b_steps, strict=True)
        ]
        figures.append(
            Figure(
                names[2 * clock],
                Stats(tuple(s_first)),
                Stats(tuple(b_first)),
                baseline_name,
                note=f"{runs} sessions; {_spread(first_pairs)}",
            )
        )
        figures.append(
            Figure(
                names[2 * clock + 1],
                Stats(tuple(t for session in s_steps for t in session)),
                Stats(tuple(t for session in b_steps for t in session)),
                baseline_name,
                note=f"{len(counts) - 1} transitions × {runs} sessions; {_spread(step_pairs)}",
            )
        )
    return figures
