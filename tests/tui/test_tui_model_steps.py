"""Model steps: one key accepts the remaining defaults; provenance shown in words."""

from __future__ import annotations

import json

from tui_support import drive_to, prefill, settle, step_kind

from okstra_core.session import Wizard
from okstra_tui.screens import RoleModelScreen
from okstra_tui.widgets import ConfirmationView, OptionTable


async def test_d_accepts_every_remaining_default_up_to_the_confirmation(
    app_factory, project, tmp_path
) -> None:
    path = prefill(project, "role_model")
    # What Enter on each screen would give: the engine's defaults, one by one up to the
    # confirmation (on a copy of the state file).
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    expected = Wizard.open(copy)
    while expected.prompt().meta.get("stepKind") != "confirm":
        expected.submit(expected.prompt().default)
    app = app_factory(state=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "role_model")
        first = app.screen.prompt.id
        await pilot.press("d")
        await settle(pilot, app)
        assert step_kind(app) == "confirm"
        saved = json.loads(path.read_text())
        assert saved["roleModels"] == expected.state.role_models
        assert saved["directive"] == expected.state.directive
        steps = [a["step"] for a in saved["answered"]]
        assert steps[steps.index(first) :] == [
            a.step for a in expected.state.answered[steps.index(first) :]
        ]


async def test_d_is_offered_only_where_a_default_can_be_taken(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_pick"))
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "task_pick")
        assert app.screen.check_action("accept_defaults", ()) is False
        await pilot.press("d")  # not a key of this screen: nothing is answered
        await settle(pilot, app)
        assert step_kind(app) == "task_pick"


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


def _only_claude(tmp_path, monkeypatch) -> None:
    """PATH with the claude CLI alone: an analyser's second default candidate (another
    provider's model) cannot run, so its preselected model is not a default."""
    from tests.conftest import write_fake_cli

    directory = tmp_path / "only-claude"
    write_fake_cli(directory, "claude")
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")


async def test_d_stops_at_the_first_model_whose_default_cannot_be_chosen(
    app_factory, project, tmp_path, monkeypatch
) -> None:
    from textual.widgets._footer import FooterKey

    _only_claude(tmp_path, monkeypatch)
    path = prefill(project, "role_model")
    app = app_factory(state=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "role_model")
        assert app.screen.prompt.id == "role-model:leader:1"
        keys = {k.key: k.description for k in app.screen.query(FooterKey)}
        assert keys.get("d") == "All defaults", keys  # the footer names the key
        await pilot.press("d")
        await settle(pilot, app)
        # analyser #2: every default candidate is another provider's (or taken), so the
        # preselected model is merely the first one that can run: the person chooses.
        assert isinstance(app.screen, RoleModelScreen)
        prompt = app.screen.prompt
        assert prompt.id == "role-model:analyser:2"
        preselected = next(o for o in prompt.options if o.value == prompt.default)
        assert not str(preselected.meta.get("provenance") or "").startswith("default:")
        saved = json.loads(path.read_text())
        assert saved["roleModels"] == {
            "leader": ["claude/opus-4.6"],
            "analyser": ["claude/opus-4.6"],
        }
        # Pressed again here, it accepts nothing and says so; nothing is written.
        before = path.read_bytes()
        await pilot.press("d")
        await settle(pilot, app)
        assert app.screen.prompt.id == "role-model:analyser:2"
        assert "No default to accept here" in str(app.screen.query_one("#error").render())
        assert path.read_bytes() == before
