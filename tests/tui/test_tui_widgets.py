"""The option table and small presentation helpers, without the engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult
from textual.widgets import Header
from textual.widgets._header import HeaderTitle

from okstra_core.display import age, age_since
from okstra_core.wizard.text import load_text
from okstra_tui.resources import screens_dir, stylesheet
from okstra_tui.screens.base import progress_text
from okstra_tui.widgets import OptionTable, Row
from okstra_tui.widgets.option_table import render_row

EN = load_text({})

ROWS = [
    Row("claude/opus", ("claude/opus", "Claude Opus", "claude")),
    Row("grok/big", ("grok/big", "Grok", "grok"), disabled_reason="grok is not installed"),
    Row("codex/gpt", ("codex/gpt", "GPT", "codex"), note="default:project"),
]


class TableApp(App[None]):
    def __init__(self, selected: str | None) -> None:
        super().__init__()
        self.selected = selected
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield OptionTable(ROWS, selected=self.selected, id="options")

    def on_option_list_option_selected(self, event: OptionTable.OptionSelected) -> None:
        self.chosen.append(str(event.option.id))


def test_render_row_aligns_columns_and_shows_reason() -> None:
    text = render_row(ROWS[1], [11, 11, 6]).plain
    assert text.startswith("grok/big     Grok         grok")
    assert "✗ grok is not installed" in text
    assert "(default:project)" in render_row(ROWS[2], [11, 11, 6]).plain


async def test_disabled_rows_are_skipped_and_not_selectable() -> None:
    app = TableApp(selected="grok/big")
    async with app.run_test() as pilot:
        table = app.query_one(OptionTable)
        # A disabled default falls back to the first selectable row.
        assert table.highlighted_value == "claude/opus"
        await pilot.press("down")
        assert table.highlighted_value == "codex/gpt"
        await pilot.press("enter")
        assert app.chosen == ["codex/gpt"]
        assert table.get_option_at_index(1).disabled


async def test_default_is_preselected() -> None:
    app = TableApp(selected="codex/gpt")
    async with app.run_test() as pilot:
        await pilot.press("enter")
        assert app.chosen == ["codex/gpt"]


def test_progress_and_ago() -> None:
    assert progress_text((0, 9), EN) == "Step 1 of ~9"
    assert progress_text((9, 9), EN) == "Step 10 of ~10"
    # One age format in the app and the CLI (`okstra_core.display.age`).
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert age_since(now - timedelta(seconds=5), now) == "5s"
    assert age_since(now - timedelta(minutes=7, seconds=59), now) == "7m"
    assert age_since(now - timedelta(hours=3), now) == "3h"
    assert age_since(now - timedelta(days=2, hours=23), now) == "2d"
    assert age_since(now + timedelta(seconds=3), now) == "0s"  # a clock a little ahead
    assert age_since(None, now) == age(None) == "—"


def test_every_screen_has_its_stylesheet() -> None:
    for name in (
        "app",
        "start",
        "pick",
        "text",
        "role_count",
        "role_add",
        "role_model",
        "confirm",
        "edit",
        "launch",
        "delete",
    ):
        assert stylesheet(name).is_file(), name
    assert screens_dir().name == "screens"


class HeaderApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Header()


async def test_a_title_change_while_the_header_loses_its_title_does_not_end_the_app() -> None:
    """The header's title watcher tolerates a header whose title child is gone.

    This is what happens when a title changes while a screen is switched away; the
    pinned Textual raised `NoMatches` there, which ended the app.
    """
    from okstra_tui._textual_fixes import apply

    apply()  # as `make_app` does

    app = HeaderApp()
    async with app.run_test() as pilot:
        header = app.query_one(Header)
        await header.query_one(HeaderTitle).remove()
        app.title = "changed while the title is gone"
        app.sub_title = "and again"
        await pilot.pause()
        assert app.is_running and app.return_value is None
        assert app._exception is None
