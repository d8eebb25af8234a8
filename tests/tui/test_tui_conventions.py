"""App conventions: what quitting tells the person, the start screen's column headings."""

from __future__ import annotations

from textual.widgets import Static
from tui_support import drive_to, prefill, settle

from okstra_core.session import Wizard
from okstra_tui.screens.start import StartScreen

SIZE = (100, 30)


async def test_quitting_a_setup_in_progress_names_the_project_to_resume_in(
    app_factory, project
) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_type")
        await pilot.press("q")
    assert app.saved_setup == project.resolve()
    line = app.text.get("app.quit.saved", project=app.saved_setup)
    assert line == f"Setup saved — run `okstra` in {project.resolve()} to resume"


async def test_quitting_with_nothing_saved_says_nothing(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")  # New setup: created, never answered …
        await settle(pilot, app)
        await pilot.press("q")  # … and removed again on quit
    assert app.saved_setup is None


async def test_quitting_a_confirmed_setup_says_nothing(app_factory, project) -> None:
    path = prefill(project, "confirm")
    Wizard.open(path).submit("confirm")
    app = app_factory(state=path, launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("q")
    assert app.saved_setup is None


async def test_the_start_screen_has_column_headings_aligned_with_the_rows(
    app_factory, project
) -> None:
    wizard = Wizard.init(None, project, host="terminal")
    for answer in ("new", "grp", "one"):
        wizard.submit(answer)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, StartScreen)
        heading = str(screen.query_one("#columns", Static).render())
        table = screen.query_one("#wizards")
        row = str(table.get_option_at_index(1).prompt)
        for title, cell in zip(
            ("Task", "Task type", "State", "Last update"), table.rows[1].cells, strict=True
        ):
            assert heading.index(title) == row.index(cell), (title, cell, heading, row)
