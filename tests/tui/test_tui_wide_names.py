"""Wide characters (Hangul) in task names: the app's columns are measured in cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.cells import cell_len
from tui_support import fixed_environment, start_loaded

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.prepare import prepare
from okstra_core.session import Wizard
from okstra_tui.widgets import OptionTable
from okstra_tui.widgets.option_table import Row, render_row

SIZE = (120, 40)


def prepared(project: Path, group: str, task_id: str) -> Any:
    argv = [
        "--project-root", str(project), "--task-group", group, "--task-id", task_id,
        "--task-type", "requirements-discovery", "--brief", "brief.md", "--host", "terminal",
    ]  # fmt: skip
    env = fixed_environment()
    return prepare(request_from_argv(argv, env), launch="none", environment=env)


def column_starts(table: OptionTable, marker: str) -> list[int]:
    """The cell at which `marker` (a later column's text) starts in each row's prompt."""
    starts = []
    for index in range(table.option_count):
        plain = str(table.get_option_at_index(index).prompt.plain).split("\n")[0]
        if marker in plain:
            starts.append(cell_len(plain[: plain.index(marker)]))
    return starts


def test_rows_pad_by_cells_not_characters() -> None:
    rows = [Row("a", ("로그인/화면", "x")), Row("b", ("perf/widget", "y"))]
    widths = [max(cell_len(r.cells[0]) for r in rows), 1]
    first, second = (render_row(r, widths).plain for r in rows)
    assert cell_len(first[: first.index("x")]) == cell_len(second[: second.index("y")])


async def test_a_hangul_task_group_keeps_the_columns_aligned(app_factory, project) -> None:
    prepared(project, "perf", "widget")
    prepared(project, "로그인", "화면")
    wizard = Wizard.init(None, project, host="terminal", environment=fixed_environment())
    for answer in ("new", "로그인", "목록"):
        wizard.submit(answer)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_loaded(pilot, app)
        runs = screen.query_one("#runs", OptionTable)
        assert {r.cells[1] for r in runs.rows} == {"perf/widget", "로그인/화면"}
        # The lead column starts at the same cell in both rows (and in the header).
        starts = column_starts(runs, "prepared")
        assert len(starts) == 2 and len(set(starts)) == 1, starts
        header = runs.header_text().plain
        assert cell_len(header[: header.index("Lead")]) == starts[0]
        # The setups list: the type column after a Hangul task lines up with "New setup"'s.
        setups = screen.query_one("#wizards", OptionTable)
        assert any("로그인" in r.cells[0] for r in setups.rows)
        cols = setups.header_text().plain
        progress_at = cell_len(cols[: cols.index("State")])
        hangul = next(i for i, r in enumerate(setups.rows) if "로그인" in r.cells[0])
        prompt = str(setups.get_option_at_index(hangul).prompt.plain).split("\n")[0]
        progress = setups.rows[hangul].cells[2]
        assert cell_len(prompt[: prompt.index(progress)]) == progress_at, (prompt, cols)
