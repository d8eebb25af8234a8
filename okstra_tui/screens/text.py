"""A text prompt: task group, task id, brief path, approved plan, directive, related tasks.

A refusal shows under the input, which keeps its value and focus. The brief and the
approved plan complete paths relative to the project; Ctrl+O edits the brief (a file)
or the multi-line directive (Ctrl+S submits it) in `$VISUAL`/`$EDITOR`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import Input, TextArea

from ..messages import Answered
from ..resources import ui_text
from ..widgets import block, line
from .base import PromptScreen
from .dialog import part

PATH_STEPS = frozenset({"brief", "approved_plan"})
MULTILINE_STEPS = frozenset({"directive"})
EDITABLE_STEPS = frozenset({"brief", "directive"})
DEFAULT_BRIEF = "brief.md"
# A directory with more entries than this is not listed for completion.
MAX_ENTRIES = 2000


def editor_command(env: dict[str, str] | os._Environ[str]) -> list[str]:
    """The person's editor: `$VISUAL`, else `$EDITOR`, else `vi` (split like a shell)."""
    for name in ("VISUAL", "EDITOR"):
        value = (env.get(name) or "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


class AnswerInput(Input):
    """The one-line answer box: Enter submits (shown in the footer), Tab accepts the
    grey completion on offer (else moves the focus on), as Right and End do."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Submit"),
        Binding("tab", "complete", "Complete", show=False),
    ]

    @property
    def completion(self) -> str:
        """The suggestion on offer for the current value ("" when none)."""
        suggestion = self._suggestion
        return suggestion if len(suggestion) > len(self.value) else ""

    def action_complete(self) -> None:
        """Accept the suggestion on offer; without one, Tab moves the focus on."""
        completion = self.completion
        if completion and self.cursor_at_end:
            self.value = completion
            self.cursor_position = len(completion)
            return
        self.screen.focus_next()


class ProjectPathSuggester(Suggester):
    """Suggest the rest of a path typed relative to `root` (or absolute, or `~/…`):
    `docs/br` shows the rest of the first match in grey (`docs/brief.md`). Several matches
    complete as far as they agree; a directory with its `/`; hidden entries only after a
    dot."""

    def __init__(self, root: Path) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.root = Path(root)

    def _directory(self, typed: str) -> Path:
        head = os.path.dirname(typed)
        base = Path(os.path.expanduser(head)) if head else Path()
        return base if base.is_absolute() else self.root / base

    async def get_suggestion(self, value: str) -> str | None:
        if not value or value.endswith(os.sep + os.sep):
            return None
        directory = self._directory(value)
        stem = os.path.basename(value)
        try:
            with os.scandir(directory) as entries:
                matches: list[tuple[str, bool]] = []
                for index, entry in enumerate(entries):
                    if index >= MAX_ENTRIES:
                        return None
                    if not entry.name.startswith(stem):
                        continue
                    if entry.name.startswith(".") and not stem.startswith("."):
                        continue
                    matches.append((entry.name, entry.is_dir()))
        except OSError:
            return None
        if not matches:
            return None
        matches.sort()
        names = [n for n, _ in matches]
        # Character by character: these are names, not paths.
        completed = os.path.commonprefix(names) if len(names) > 1 else ""  # noqa: RUF071
        if len(completed) <= len(stem):
            # One match, or no agreement beyond what is typed: the first match whole.
            name, is_dir = matches[0]
            completed = name + (os.sep if is_dir else "")
        suggestion = value[: len(value) - len(stem)] + completed
        return suggestion if suggestion != value else None


class TextScreen(PromptScreen):
    """Type an answer; Enter submits it (Ctrl+S for a multi-line answer)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Submit"),
        Binding("ctrl+o", "open_editor", "$EDITOR"),
    ]

    @property
    def default_text(self) -> str:
        """The answer the box starts with (data: shown inert, and what Enter submits)."""
        default = self.prompt.default or ""
        return block(default) if self.multiline else line(default)

    @property
    def multiline(self) -> bool:
        return self.step_kind in MULTILINE_STEPS

    def compose_body(self) -> ComposeResult:
        if self.multiline:
            area = TextArea(
                self.default_text,
                id="answer",
                soft_wrap=True,
                show_line_numbers=False,
                tab_behavior="focus",
            )
            area.border_subtitle = ui_text(self).get("app.text.multiline_hint")
            yield area
            return
        suggester = (
            ProjectPathSuggester(self.project_root) if self.step_kind in PATH_STEPS else None
        )
        yield AnswerInput(
            value=self.default_text,
            placeholder=line(self.prompt.meta.get("placeholder", "")),
            id="answer",
            select_on_focus=False,
            suggester=suggester,
        )

    def _answer(self) -> Input | TextArea | None:
        """The answer box (None once the screen is going)."""
        answer = part(self, "#answer", Widget)
        return answer if isinstance(answer, Input | TextArea) else None

    def on_mount(self) -> None:
        answer = self._answer()
        if answer is None:
            return
        answer.cursor_blink = getattr(self.app, "cursor_blink", True)
        if isinstance(answer, TextArea):
            answer.move_cursor(answer.document.end)
        answer.focus()

    def focus_answer(self) -> None:
        answer = self._answer()
        if answer is not None:
            answer.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Letters go into the box: "e" cannot be Edit here.
        if action == "edit":
            return False
        if action == "submit":
            return self.multiline  # one-line answers submit with Enter (the input's key)
        if action == "open_editor":
            return self.step_kind in EDITABLE_STEPS
        return super().check_action(action, parameters)

    def answer_text(self) -> str:
        answer = self._answer()
        if answer is None:
            return ""
        return answer.text if isinstance(answer, TextArea) else answer.value

    def unsaved_text(self) -> str:
        value = self.answer_text()
        return value if value.strip() and value != self.default_text else ""

    def show_error(self, message: str) -> None:
        super().show_error(message)
        answer = self._answer()
        if answer is not None:
            answer.set_class(bool(message), "-invalid")

    @on(Input.Changed, "#answer")
    @on(TextArea.Changed, "#answer")
    def _typing_clears_error(self) -> None:
        self.clear_error()

    @on(Input.Submitted, "#answer")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(Answered(event.value, step=self.prompt.id))

    def action_submit(self) -> None:
        self.post_message(Answered(self.answer_text(), step=self.prompt.id))

    def action_open_editor(self) -> None:
        """Edit the brief (a file, its path put here) or the directive (as text)."""
        if self.multiline:
            self._edit_text()
            return
        text = ui_text(self)
        box = part(self, "#answer", Input)
        if box is None or not self.is_active:
            return
        typed = box.value.strip() or DEFAULT_BRIEF
        path = self.project_root / os.path.expanduser(typed)  # an absolute path stays
        root = self.project_root.resolve()
        if not path.resolve().is_relative_to(root):
            self.show_error(text.get("app.text.editor_outside", path=typed, root=root))
            return
        command = self._editor_on(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            result = self._run_editor(command)
        except OSError as exc:
            self.show_error(text.get("app.text.editor_failed", command=command[0], error=exc))
            return
        if result != 0:
            self.show_error(text.get("app.text.editor_exit", command=command[0], code=result))
            return
        box.value = typed
        box.cursor_position = len(typed)
        self.clear_error()
        box.focus()
        if not path.exists():
            self.show_error(text.get("app.text.editor_not_saved", path=typed))

    def _edit_text(self) -> None:
        """The directive in the editor, through a private temporary file."""
        text = ui_text(self)
        area = part(self, "#answer", TextArea)
        if area is None or not self.is_active:
            return
        fd, name = tempfile.mkstemp(prefix="okstra-directive-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(area.text)
            command = self._editor_on(path)
            try:
                result = self._run_editor(command)
                edited = path.read_text(encoding="utf-8") if result == 0 else None
            except (OSError, UnicodeDecodeError) as exc:
                self.show_error(text.get("app.text.editor_failed", command=command[0], error=exc))
                return
        finally:
            path.unlink(missing_ok=True)
        if edited is None:
            self.show_error(text.get("app.text.editor_exit_text", command=command[0], code=result))
            return
        area.load_text(edited.rstrip("\n"))
        area.move_cursor(area.document.end)
        self.clear_error()
        area.focus()

    def _editor_on(self, path: Path) -> list[str]:
        env = getattr(getattr(self.app, "environment", None), "env", os.environ)
        return [*editor_command(env), str(path)]

    def _run_editor(self, command: list[str]) -> int:
        """Run the editor with the terminal handed to it; its exit code."""

        def run() -> int:
            return subprocess.run(command, cwd=self.project_root, check=False).returncode

        try:
            with self.app.suspend():
                return run()
        except SuspendNotSupported:
            if not self.app.is_headless:
                raise OSError("this terminal cannot hand itself to an editor") from None
            return run()  # headless (tests): nothing to hand over
