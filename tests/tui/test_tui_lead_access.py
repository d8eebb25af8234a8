"""The lead's access on the confirm screen: `x` moves ask → edits → full, the dry run
plans it (the launch preview says it) and the launch uses it (the manifest records it)."""

from __future__ import annotations

import json
from pathlib import Path

from tui_support import prefill, settle, wait_armed, wait_for

from okstra_tui.screens import ConfirmScreen
from okstra_tui.screens.launch import LaunchScreen

SIZE = (110, 40)


def _preview(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#preview-text").render())


async def test_x_chooses_the_leads_access_for_the_preview_and_the_launch(
    app_factory, project: Path
) -> None:
    app = app_factory(state=prefill(project, "confirm"), launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        await wait_for(pilot, app, lambda: app.screen.plan is not None, "the dry run", 60)
        assert app.screen.plan.lead_access == "ask"
        assert "Lead access: ask" in _preview(app)
        await wait_armed(pilot, app)
        for level in ("edits", "full", "ask", "edits"):
            await pilot.press("x")
            await wait_for(
                pilot,
                app,
                lambda level=level: (
                    app.screen.plan is not None and app.screen.plan.lead_access == level
                ),
                f"the dry run with {level}",
                60,
            )
            await settle(pilot, app)
            assert f"Lead access: {level}" in _preview(app)
        assert not (project / ".okstra" / "tasks").exists()  # looking prepares nothing
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, LaunchScreen), "launch")
        manifests = lambda: list((project / ".okstra" / "tasks").rglob("run-manifest.json"))  # noqa: E731
        await wait_for(pilot, app, lambda: bool(manifests()), "the run", 60)
        await settle(pilot, app)
    leader = json.loads(manifests()[0].read_text(encoding="utf-8"))["participants"][0]
    assert leader["leadAccess"] == "edits"
