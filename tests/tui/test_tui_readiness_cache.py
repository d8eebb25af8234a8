"""The app reads the one readiness verdict: its model step offers the same options
(selectable or not, with the same reasons and notes) with an empty, a warm and a stale
readiness cache, as every command does (tests/life/test_readiness_one_verdict.py).

The fake CLIs' login okstra cannot tell (claude, codex: selectable, with a note) and
the Gemini CLI is known to be logged out (its models not selectable).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from tui_support import drive_to, fixed_environment, prefill

from okstra_core import derived
from okstra_core.paths import user_dirs
from okstra_core.readiness import cli as recorded
from okstra_tui.widgets import OptionTable


def _records() -> Path:
    return user_dirs(fixed_environment()).cache / recorded.KIND.name


def _empty() -> None:
    shutil.rmtree(_records(), ignore_errors=True)


def _stale() -> None:
    """Every record older than `MAX_AGE`, and saying the opposite of what it said."""
    cache = user_dirs(fixed_environment()).cache
    entries = sorted(_records().glob("*.entry"))
    assert entries, "the warm cache holds no readiness record"
    for entry in entries:
        key = entry.name.removesuffix(".entry")
        verdict = derived.recall_value(cache, recorded.KIND, key, recorded.Verdict)
        assert verdict is not None
        turned = verdict._replace(
            logged_in=verdict.logged_in is not True,
            problem=None if verdict.problem else "planted",
            at=time.time() - 2 * recorded.MAX_AGE,
        )
        derived.keep_value(cache, recorded.KIND, key, turned)


async def _model_step(app_factory: Any, state: Path, tmp_path: Path, name: str) -> Any:
    copy = tmp_path / f"{name}.json"
    copy.write_bytes(state.read_bytes())
    app = app_factory(state=copy)
    async with app.run_test(size=(100, 30)) as pilot:
        await drive_to(pilot, app, "role_model")
        table = app.screen.query_one("#options", OptionTable)
        rows = [(r.value, r.disabled_reason, r.note) for r in table.rows]
        return app.screen.prompt.id, app.screen.prompt.help, rows


async def test_the_model_step_offers_the_same_with_an_empty_a_warm_and_a_stale_cache(
    app_factory: Any, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged_out = tmp_path / "no-gemini-login"
    logged_out.mkdir()
    monkeypatch.setenv("GEMINI_CLI_HOME", str(logged_out))
    state = prefill(project, "role_model")
    _empty()
    empty = await _model_step(app_factory, state, tmp_path, "empty")
    warm = await _model_step(app_factory, state, tmp_path, "warm")
    _stale()
    stale = await _model_step(app_factory, state, tmp_path, "stale")
    assert empty == warm == stale
    rows = empty[2]
    gemini = [r for r in rows if r[0].startswith("antigravity/")]
    assert gemini and all("not logged in" in (r[1] or "") for r in gemini), gemini
    assert any(r[1] is None for r in rows), rows
