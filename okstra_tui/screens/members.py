"""The runs screen's members table, changed in place: only the cells that changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from ..team_view import COLUMNS, MemberRow, table_diff

if TYPE_CHECKING:  # its CSS loads with the runs screen
    from textual.widgets import DataTable


def apply_rows(
    table: DataTable[Text], shown: dict[str, tuple[str, ...]], rows: tuple[MemberRow, ...]
) -> bool:
    """Make `table` (showing `shown`, updated here) show `rows`; whether anything changed."""
    diff = table_diff(shown, rows)
    if diff.empty:
        return False
    if diff.rebuild:
        table.clear()
        shown.clear()
        diff = table_diff(shown, rows)
    for key in diff.remove:
        table.remove_row(key)
        del shown[key]
    for key, column, cell in diff.update:
        table.update_cell(key, COLUMNS[column], Text(cell), update_width=True)
    for row in diff.add:
        table.add_row(*(Text(cell) for cell in row.cells), key=row.key)
    for row in rows:
        shown[row.key] = row.cells
    return True
