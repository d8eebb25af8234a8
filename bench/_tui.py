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
(the confirm screen's preflight worker is another thread and is not in it). Every
session starts after a full garbage collection, so none inherits another's garbage.

Sessions alternate (okstra, bare, bare, okstra, …) so both see the same load; the
notes give the spread of the per-pair ratios (each okstra session against the bare
session next to it: first screen, and the median transition of each).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra_core.records import to_data

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


@dataclass(frozen=True)
class Shape:
    """What one okstra screen shows, for the baseline to show the same."""

    options: int  # rows of the option table (0: a text input instead)
    history: int  # entries of the history panel
    help: bool  # a help line under the prompt's label
    role: bool  # a role description line
    keys: int  # keys shown in the footer
    confirm: bool  # the confirm screen: summary, preflight, preview, three buttons
    summary: int  # lines of the confirm screen's summary

    @classmethod
    def of(cls, screen: Any) -> Shape:
        prompt = screen.prompt
        confirm = step_kind(to_data(prompt)) == "confirm"
        return cls(
            options=len(prompt.options),
            history=len(screen.view.history),
            help=bool(prompt.help),
            role=bool(screen.query("#role")),
            keys=sum(1 for _n, b, _e, _t in screen.active_bindings.values() if b.show),
            confirm=confirm,
            summary=len(screen.view.confirmation.lines) if confirm else 0,
        )


async def _walk_okstra(machine: Machine, run_id: int) -> tuple[Span, list[Span], list[Shape]]:
    """One session: (first screen, transition times, the shape of each screen)."""
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
        shapes = [Shape.of(screen)]
        while isinstance(screen, prompt_screen) and step_kind(to_data(screen.prompt)) != "confirm":
            prompt = to_data(screen.prompt)
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
                await pilot.pause()
                shapes.append(Shape.of(screen))
            if len(transitions) > 100:
                raise NotAvailable("no confirm screen after 100 steps")
    return first, transitions, shapes


# The bare app's layout: okstra's (app.tcss) in its essentials — the history panel
# on the left, the prompt on the right, bordered lists, the error line hidden.
BARE_CSS = """
#main { height: 1fr; }
#history { width: 34; height: 1fr; border: round $primary 50%; }
#prompt { width: 1fr; height: 1fr; padding: 0 1; }
#label { text-style: bold; margin-bottom: 1; }
#help { color: $text-muted; margin-bottom: 1; }
#options { height: 1fr; border: round $foreground 30%; }
#options:focus { border: round $accent; }
#error { display: none; }
#summary { height: 1fr; border: round $foreground 30%; }
#preflight { height: auto; max-height: 8; }
#actions { height: auto; }
"""


def _bare_app(shapes: list[Shape], *, same: bool) -> Any:
    """A bare Textual app pushing a screen per okstra screen.

    `same`: each screen shows what okstra's does (history panel, help and role lines,
    as many footer keys, the confirm screen's parts) with Textual's own widgets and
    no engine; otherwise the minimal screens of the first version of this measurement
    (header, label, the options or an input, footer).
    """
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Horizontal, Vertical, VerticalScroll
    from textual.screen import Screen
    from textual.widgets import Button, Collapsible, Footer, Header, Input, OptionList, Static

    class Step(Screen[None]):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index
            shape = shapes[self.index]
            if same:
                for k in range(shape.keys):
                    self._bindings.bind(f"f{k + 1}", "noop", f"Key {k + 1}")

        def action_noop(self) -> None:
            pass

        def compose(self) -> ComposeResult:
            shape = shapes[self.index]
            yield Header()
            if not same:
                yield Static(f"Step {self.index + 1}", id="label")
                yield from self._answer(shape)
                yield Footer()
                return
            with Horizontal(id="main"):
                history = [f"Step {i + 1}: answer {i + 1}" for i in range(shape.history)]
                yield OptionList(*(history or ["(nothing answered yet)"]), id="history")
                with Vertical(id="prompt"):
                    yield Static(f"Step {self.index + 1}", id="label")
                    if shape.help:
                        yield Static("What this step is for.", id="help")
                    if shape.role:
                        yield Static("What this role does.", id="role")
                    if shape.confirm:
                        with VerticalScroll(id="summary"):
                            yield Static("\n".join(f"line {i}" for i in range(shape.summary)))
                        yield Static("preflight", id="preflight")
                        with Collapsible(title="preview", collapsed=True):
                            yield Static("argv")
                        with Horizontal(id="actions"):
                            for label in ("Launch", "Edit", "Abort"):
                                yield Button(label)
                    else:
                        yield from self._answer(shape)
                    yield Static("", id="error")
            yield Footer()

        def _answer(self, shape: Shape) -> ComposeResult:
            if shape.options:
                yield OptionList(*(f"option {i}" for i in range(shape.options)), id="options")
            else:
                yield Input(value="answer", id="answer")

        def on_mount(self) -> None:
            self.query_one("#options, #answer, Button").focus()

        def _next(self) -> None:
            if self.index + 1 < len(shapes):
                self.app.switch_screen(Step(self.index + 1))

        def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
            if event.option_list.id != "history":
                self._next()

        def on_input_submitted(self, _event: Input.Submitted) -> None:
            self._next()

    class Bare(App[None]):
        CSS = BARE_CSS if same else ""
        BINDINGS = [Binding("q", "quit", "Quit")] if same else []

        def on_mount(self) -> None:
            self.push_screen(Step(0))

    return Bare(), Step


async def _walk_bare(shapes: list[Shape], *, same: bool) -> tuple[Span, list[Span]]:
    start = _clock()
    app, step_cls = _bare_app(shapes, same=same)
    transitions: list[Span] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = await _settle(pilot, app, None)
        first = _since(start)
        for _ in range(len(shapes) - 1):
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
    baselines = {
        "same": "bare Textual app, the same screens",
        "minimal": "bare Textual app, minimal screens",
    }
    rows = [
        (base, clock, what)
        for base in baselines
        for clock in ("wall", "UI-thread CPU")
        for what in ("first screen", "step transition")
    ]

    def name(base: str, clock: str, what: str) -> str:
        suffix = "" if base == "same" else ", vs minimal screens"
        return f"(d) TUI {what}, {clock}{suffix}"

    runs = max(5, repeat // 2)
    try:
        machine = make_machine(work / "tui")
        # Warm-up: imports, CSS parsing caches, and the screens the baselines copy.
        _, _, shapes = asyncio.run(_walk_okstra(machine, 0))
        for same in (True, False):
            asyncio.run(_walk_bare(shapes, same=same))
        # who -> sessions -> (first, transitions)
        sessions: dict[str, list[tuple[Span, list[Span]]]] = {
            "okstra": [],
            "same": [],
            "minimal": [],
        }

        def one(who: str, i: int) -> None:
            # Each session starts with no garbage left by the one before: a full
            # collection otherwise lands in whichever session happens to trigger it.
            gc.collect()
            if who == "okstra":
                first, spans, _ = asyncio.run(_walk_okstra(machine, i + 1))
            else:
                first, spans = asyncio.run(_walk_bare(shapes, same=who == "same"))
            sessions[who].append((first, spans))

        order = ["okstra", "same", "minimal"]
        for i in range(runs):
            # Rotate who goes first, so none always follows the same one.
            for who in order[i % 3 :] + order[: i % 3]:
                one(who, i)
    except NotAvailable as exc:
        return [
            Figure(name(*row), baseline_name=baselines[row[0]], missing=str(exc)) for row in rows
        ]
    figures: list[Figure] = []
    for base, clock, what in rows:
        k = 0 if clock == "wall" else 1
        subject, baseline = sessions["okstra"], sessions[base]
        if what == "first screen":
            s_times = [first[k] for first, _ in subject]
            b_times = [first[k] for first, _ in baseline]
            pairs = [s / b for s, b in zip(s_times, b_times, strict=True)]
            note = f"{runs} sessions; {_spread(pairs)}"
        else:
            s_sessions = [[span[k] for span in spans] for _, spans in subject]
            b_sessions = [[span[k] for span in spans] for _, spans in baseline]
            s_times = [t for session in s_sessions for t in session]
            b_times = [t for session in b_sessions for t in session]
            pairs = [
                statistics.median(s) / statistics.median(b)
                for s, b in zip(s_sessions, b_sessions, strict=True)
            ]
            note = f"{len(shapes) - 1} transitions × {runs} sessions; {_spread(pairs)}"
        figures.append(
            Figure(
                name(base, clock, what),
                Stats(tuple(s_times)),
                Stats(tuple(b_times)),
                baselines[base],
                note=note,
            )
        )
    return figures
