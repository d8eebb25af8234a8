"""A list of choices laid out as aligned columns, with disabled rows and their reasons.

An `OptionList` (not a `DataTable`): it skips and dims disabled options, the contract of
a model the resolver ruled out — visible, with why, but not choosable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from okstra_core.records import dataclass

from .plain import block, line


@dataclass(frozen=True)
class Row:
    """One choice: the `value` answered, the `cells` shown (aligned across rows), why it
    cannot be chosen, a `note` after the cells and a dimmed `detail` line."""

    value: str
    cells: tuple[str, ...]
    disabled_reason: str | None = None
    note: str | None = None
    detail: str | None = None


def inert_row(row: Row) -> Row:
    """`row` as it is shown: every cell, note, detail and reason inert (a cell one line)."""
    return dataclasses.replace(
        row,
        cells=tuple(line(cell) for cell in row.cells),
        disabled_reason=None if row.disabled_reason is None else block(row.disabled_reason),
        note=None if row.note is None else line(row.note),
        detail=None if row.detail is None else block(row.detail),
    )


def _widths(rows: Sequence[Row]) -> list[int]:
    """Each column's width in terminal cells (a Hangul or CJK letter takes two)."""
    count = max((len(r.cells) for r in rows), default=0)
    widths = [0] * count
    for row in rows:
        for i, cell in enumerate(row.cells):
            widths[i] = max(widths[i], cell_len(cell))
    return widths


def pad(cell: str, width: int) -> str:
    """`cell` followed by spaces up to `width` terminal cells (`str.ljust` counts characters)."""
    return cell + " " * max(0, width - cell_len(cell))


def line_width(row: Row, widths: Sequence[int]) -> int:
    """How wide, in terminal cells, the one-line form of `row` is (cells, gaps, note)."""
    cells = sum(widths[: len(row.cells) - 1]) + cell_len(row.cells[-1]) if row.cells else 0
    gaps = 2 * max(0, len(row.cells) - 1)
    note = cell_len(row.note) + 4 if row.note else 0
    return cells + gaps + note


def render_row(
    row: Row, widths: Sequence[int], *, stacked: bool = False, reason: bool = True
) -> Text:
    """The visible text of one row: cells, note, detail and (with `reason`) the disabled
    reason; `stacked` puts the first cell alone on its line, the others under it."""
    text = Text(no_wrap=False, overflow="fold")
    first_style = "bold" if not row.disabled_reason else ""
    if stacked and len(row.cells) > 1:
        text.append(row.cells[0], style=first_style)
        rest = " · ".join(c for c in row.cells[1:] if c)
        text.append(f"\n  {rest}")
    else:
        last = len(row.cells) - 1
        for i, cell in enumerate(row.cells):
            # The last column is not padded, so a narrow terminal wraps less.
            text.append(
                cell if i == last else pad(cell, widths[i]), style=first_style if i == 0 else ""
            )
            if i != last:
                text.append("  ")
    if row.note:
        text.append(f"  ({row.note})", style="italic")
    if row.detail:
        text.append(f"\n  {row.detail}", style="dim")
    if row.disabled_reason and reason:
        text.append(f"\n  ✗ {row.disabled_reason}", style="italic")
    return text


def _said_above(rows: Sequence[Row]) -> list[bool]:
    """For each row, whether the row above gives the same disabled reason (shown once)."""
    return [
        i > 0 and r.disabled_reason is not None and r.disabled_reason == rows[i - 1].disabled_reason
        for i, r in enumerate(rows)
    ]


class OptionTable(OptionList):
    """Choices as aligned columns; disabled rows show their reason and are skipped."""

    class LayoutChanged(Message):
        """The rows switched between columns and stacked (the header follows)."""

        def __init__(self, table: OptionTable) -> None:
            super().__init__()
            self.table = table

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select", "Choose")]

    def __init__(
        self,
        rows: Sequence[Row] = (),
        *,
        selected: str | None = None,
        header: Sequence[str] = (),
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._rows: list[Row] = []
        self._initial = selected
        self._stacked = False
        self.header = tuple(line(h) for h in header)
        self.set_rows(rows, selected=selected)

    def _column_widths(self) -> list[int]:
        rows = [*self._rows, Row("", self.header)] if self.header else self._rows
        return _widths(rows)

    def header_text(self) -> Text:
        """The column headings, aligned as the rows are drawn now (stacked: one line)."""
        if not self.header:
            return Text()
        if self._stacked:
            return Text(" · ".join(h for h in self.header if h), style="bold")
        return render_row(Row("", self.header), self._column_widths())

    @property
    def rows(self) -> tuple[Row, ...]:
        return tuple(self._rows)

    def set_rows(self, rows: Sequence[Row], *, selected: str | None = None) -> None:
        """Replace the rows and highlight `selected` (else the first enabled row)."""
        self._rows = [inert_row(row) for row in rows]
        self.clear_options()
        self.add_options(
            Option(shown, id=r.value, disabled=r.disabled_reason is not None)
            for r, shown in zip(self._rows, self._rendered(), strict=True)
        )
        self.select_value(selected)

    def _rendered(self, widths: list[int] | None = None) -> list[Text]:
        """Each row as drawn now (its disabled reason once for rows in a row giving it)."""
        widths = widths or self._column_widths()
        return [
            render_row(r, widths, stacked=self._stacked, reason=not above)
            for r, above in zip(self._rows, _said_above(self._rows), strict=True)
        ]

    def on_resize(self) -> None:
        # Columns side by side when they fit, else stacked: nothing is cut off.
        width = self.scrollable_content_region.width - 2  # the option's own padding
        widths = self._column_widths()
        stacked = any(line_width(r, widths) > width for r in self._rows)
        if stacked != self._stacked:
            self._stacked = stacked
            for index, shown in enumerate(self._rendered(widths)):
                self.replace_option_prompt_at_index(index, shown)
            self.post_message(self.LayoutChanged(self))

    def select_value(self, value: str | None) -> None:
        """Highlight the row answering `value`; fall back to the first enabled row."""
        enabled = [i for i, r in enumerate(self._rows) if r.disabled_reason is None]
        first = enabled[0] if enabled else None
        self.highlighted = next((i for i in enabled if self._rows[i].value == value), first)

    @property
    def highlighted_value(self) -> str | None:
        """The value of the highlighted row, if any."""
        if self.highlighted is None or not self._rows:
            return None
        return self._rows[self.highlighted].value

    def action_last(self) -> None:
        """End: the last enabled row, and the end of the list (disabled rows too)."""
        super().action_last()
        if self.highlighted is not None and self.highlighted < len(self._rows) - 1:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def action_first(self) -> None:
        """Home: the first enabled row, and the top of the list above it."""
        super().action_first()
        if self.highlighted:
            self.call_after_refresh(self.scroll_home, animate=False, immediate=True)

    def on_mount(self) -> None:
        # The first layout can reset a highlight set before mount.
        self.select_value(self._initial)
