"""The confirmation block (every value with its provenance) and the preflight results,
shown in `Plain` widgets (they quote data)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text

from okstra_core.wizard.text import WizardText

from .plain import Plain
from .provenance import provenance_words

if TYPE_CHECKING:
    from okstra_core.launch import PreflightResult
    from okstra_core.wizard.confirm import Confirmation


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
        self.confirmation = confirmation


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
