"""The confirm screen's views: the confirmation block (every value with its provenance)
and the preflight results, shown in `Plain` widgets (they quote data), and the launch
preview: what Launch will run and write, built from the dry-run prepare (the plan
`okstra prepare --dry-run` prints): the exact lead command, the launch backend, the tmux
session and window, every file written."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text

from okstra_core.wizard.text import WizardText

from .plain import Plain

if TYPE_CHECKING:
    from okstra_core.launch import PreflightResult
    from okstra_core.prepare import PrepareResult
    from okstra_core.wizard.confirm import Confirmation


def provenance_words(code: str | None, text: WizardText) -> str:
    """The catalog's words for a provenance code ("" for none; unknown codes as is):
    `default:bundled` → "okstra's default" (the engine records provenance as codes:
    `chosen`, `default:<scope>`, `reused:<run>`)."""
    if not code:
        return ""
    kind, _, detail = code.partition(":")
    if kind == "default" and text.has(f"app.provenance.default_{detail}"):
        return text.get(f"app.provenance.default_{detail}")
    if kind == "reused" and detail:
        return text.get("app.provenance.reused", run=detail)
    if kind == "converted" and detail:
        return text.get("app.provenance.converted", version=detail)
    if text.has(f"app.provenance.{kind}") and not detail:
        return text.get(f"app.provenance.{kind}")
    return code


def hang(value: str) -> str:
    """A multi-line value's later lines indented under its first (after `label: `)."""
    first, newline, rest = value.partition("\n")
    if not newline:
        return value
    colon = first.find(": ")
    indent = " " * (cell_len(first[: colon + 2]) if colon >= 0 else 4)
    return first + "".join(f"\n{indent}{part}" for part in rest.split("\n"))


def confirmation_text(confirmation: Confirmation, catalog: WizardText | None = None) -> Text:
    """The engine's confirmation lines, each value followed by why it is there."""
    text = Text()
    for i, line in enumerate(confirmation.lines):
        if i:
            text.append("\n")
        # The provenance after the first line of the value.
        first, newline, rest = hang(line.text).partition("\n")
        style = "bold" if line.key in ("header", "team") else ""
        text.append(first, style=style)
        if line.provenance:
            words = provenance_words(line.provenance, catalog) if catalog else line.provenance
            text.append(f"  {words}", style="italic dim")
        if newline:
            text.append(newline + rest, style=style)
    return text


def preflight_text(
    results: Sequence[PreflightResult] | None,
    notes: Sequence[str] = (),
    error: str | None = None,
    *,
    catalog: WizardText,
) -> Text:
    """Preflight per role instance: ✓ CLI and version, or ✗ what is wrong and what to do."""
    text = Text(catalog.get("app.confirm.preflight"), style="bold")
    if results is None and error is None:
        text.append("\n  " + catalog.get("app.confirm.checking"), style="italic")
        return text
    for result in results or ():
        if result.ok:
            text.append("\n  ✓ ", style="bold green")
            text.append(f"{result.instance}: {result.cli} {result.version or ''}".rstrip())
        else:
            text.append("\n  ✗ ", style="bold red")
            text.append(result.message())
    for note in notes:
        text.append("\n  ! ", style="bold yellow")
        text.append(note)
    if error:
        text.append("\n  ✗ ", style="bold red")
        text.append(error)
    if not results and not notes and not error:
        text.append("\n  " + catalog.get("app.confirm.nothing_to_check"), style="italic")
    return text


class ConfirmationView(Plain):
    """Read-only view of the engine's confirmation block."""

    def __init__(self, confirmation: Confirmation, *, text: WizardText) -> None:
        super().__init__(confirmation_text(confirmation, text), id="confirmation")


class PreflightView(Plain):
    """The preflight results of the confirm screen's dry run."""

    def __init__(self, *, text: WizardText) -> None:
        super().__init__(preflight_text(None, catalog=text), id="preflight")
        self.catalog = text

    def set_preflight(
        self,
        results: Sequence[PreflightResult],
        notes: Sequence[str] = (),
        error: str | None = None,
    ) -> None:
        """Show the preflight results (or why the dry run refused the setup)."""
        self.update(preflight_text(results, notes, error, catalog=self.catalog))


def shown_path(path: Path, root: Path) -> str:
    """A path relative to the project when it is inside it (shorter, same meaning)."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def argv_text(argv: Sequence[str], which: Callable[[str], str | None] | None = None) -> str:
    """An argv as the shell line a person would type; with `which`, a program that PATH
    finds anyway is shown by its bare name."""
    words = [str(a) for a in argv]
    if which is not None and words and which(Path(words[0]).name) == words[0]:
        words[0] = Path(words[0]).name
    return shlex.join(words)


def _flag(command: Sequence[str], flag: str) -> str | None:
    """The value after `flag` in a tmux command (None when absent)."""
    words = list(command)
    for index, word in enumerate(words[:-1]):
        if word == flag:
            return words[index + 1]
    return None


def tmux_target(plan: PrepareResult) -> tuple[str | None, str | None]:
    """(new session name or None for the current session, window name) of a tmux launch."""
    if not plan.tmux_commands:
        return None, None
    command = plan.tmux_commands[0]
    session = _flag(command, "-s") if "new-session" in command else None
    return session, _flag(command, "-n")


def preview_title(plan: PrepareResult | None, catalog: WizardText) -> str:
    """The one line shown while the panel is collapsed: backend, window and file count."""
    if plan is None:
        return catalog.get("app.preview.title_pending")
    return catalog.get(
        "app.preview.title", backend=short_backend(plan, catalog), files=len(plan.files)
    )


def short_backend(plan: PrepareResult, catalog: WizardText) -> str:
    """The backend in a few words, for the collapsed panel's title."""
    if plan.entry_mode == "current-session" or plan.lead_argv is None:
        return catalog.get("app.preview.short_current_session")
    if plan.backend == "tmux":
        return catalog.get("app.preview.short_tmux", window=tmux_target(plan)[1])
    return catalog.get(f"app.preview.short_{plan.backend}")


def backend_words(plan: PrepareResult, catalog: WizardText) -> str:
    """How the lead starts, in words (tmux window, this terminal, or not at all)."""
    if plan.entry_mode == "current-session" or plan.lead_argv is None:
        return catalog.get("app.preview.backend_current_session")
    if plan.backend == "tmux":
        session, window = tmux_target(plan)
        if session is not None:
            return catalog.get("app.preview.backend_tmux_session", session=session, window=window)
        return catalog.get("app.preview.backend_tmux_window", window=window)
    if plan.backend == "exec":
        return catalog.get("app.preview.backend_exec")
    return catalog.get("app.preview.backend_none")


def preview_text(
    plan: PrepareResult | None,
    root: Path,
    catalog: WizardText,
    error: str | None = None,
    which: Callable[[str], str | None] | None = None,
) -> Text:
    """The panel's body: lead command, backend, run directory, the files written."""
    text = Text()
    if plan is None:
        text.append(error or catalog.get("app.preview.pending"), style="italic")
        return text

    def heading(key: str, **values: object) -> None:
        if text:
            text.append("\n")
        text.append(catalog.get(f"app.preview.{key}", **values), style="bold")
        text.append("\n")

    heading("command")
    if plan.lead_argv is not None:
        text.append(f"  cd {shlex.quote(str(root))} && {argv_text(plan.lead_argv, which)}\n")
        if plan.lead_session_id:
            text.append("  " + catalog.get("app.preview.fresh_session_id") + "\n", style="dim")
        meaning = catalog.get(f"app.preview.lead_access_meaning.{plan.lead_access}")
        access = catalog.get("app.preview.lead_access", access=plan.lead_access, meaning=meaning)
        text.append(f"  {access}\n")
    else:
        prompt = shown_path(plan.lead_prompt_path, root)
        text.append(f"  {catalog.get('app.preview.no_command', prompt=prompt)}\n")
    heading("backend")
    text.append(f"  {backend_words(plan, catalog)}\n")
    if plan.base_ref and plan.base_commit:
        base = catalog.get("app.preview.base", ref=plan.base_ref, commit=plan.base_commit[:12])
        text.append(f"  {base}\n")
    heading("files", run_id=plan.run_id, count=len(plan.files))
    for planned in plan.files:
        text.append(f"  {shown_path(planned.path, root)}")
        if planned.action == "append":
            text.append("  " + catalog.get("app.preview.appended"), style="dim")
        text.append("\n")
    text.rstrip()
    return text
