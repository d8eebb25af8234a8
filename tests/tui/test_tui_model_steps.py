"""Model steps: one key accepts the remaining defaults; provenance shown in words."""

from __future__ import annotations

import json

from tui_support import drive_to, prefill, settle, step_kind

from okstra_core.wizard import Wizard
from okstra_tui.screens import RoleModelScreen
from okstra_tui.widgets import ConfirmationView, OptionTable


async def test_d_accepts_every_remaining_model_default(app_factory, project, tmp_path) -> None:
    path = prefill(project, "role_model")
    # What Enter on each model screen would give: the engine's defaults, one by one
    # (on a copy of the state file).
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    expected = Wizard.open(copy)
    while expected.prompt().meta.get("stepKind") == "role_model":
        expected.submit(expected.prompt().default)
    want = expected.state.role_models
    app = app_factory(state=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "role_model")
        first = app.screen.prompt.id
        await pilot.press("d")
        await settle(pilot, app)
        assert step_kind(app) == "directive_pick"
        saved = json.loads(path.read_text())
        assert saved["roleModels"] == want
        steps = [a["step"] for a in saved["answered"]]
        assert steps[steps.index(first) :] == [
            s for s in steps[steps.index(first) :] if s.startswith("role-model:")
        ]


async def test_provenance_is_shown_in_words(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "role_model"))
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "role_model")
        assert isinstance(app.screen, RoleModelScreen)
        table = app.screen.query_one("#options", OptionTable)
        notes = {r.note for r in table.rows if r.note}
        assert "okstra's default" in notes
        assert not any(n.startswith("default:") for n in notes)
    app = app_factory(state=prefill(project, "confirm"), launch="none")
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "confirm")
        text = str(app.screen.query_one(ConfirmationView).render())
        assert "okstra's default" in text and "your choice" in text
        assert "default:bundled" not in text
