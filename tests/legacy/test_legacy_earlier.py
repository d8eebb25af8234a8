"""The earlier okstra's v2 shape and its companions (`<name>.v2.json`, taken-over and
invalid content-addressed ones): read, converted, never written."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from legacy_support import FIXTURES, LegacyWorld

from okstra_core.compat import (
    LegacyOpen,
    earlier_companion_source,
    is_earlier_v2,
    open_legacy,
)
from okstra_core.errors import StateFileError
from okstra_core.store import atomic_write_json
from okstra_core.wizard import state as state_mod

V1 = "rd_spawn_workers_models.json"
EARLIER = "v2_rd_role_block.json"


def _open(world: LegacyWorld, path: Path) -> LegacyOpen:
    return open_legacy(
        path,
        profile_loader=world.profile,
        pool=world.pool,
        scopes=world.scopes,
        environment=world.environment,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _record(path: Path) -> dict[str, str]:
    return {"path": str(path.resolve()), "sha256": _digest(path)}


def _earlier_companion_of(v1: Path, **changes: Any) -> dict[str, Any]:
    """What the earlier okstra saved next to `v1` after converting it (its v2 shape)."""
    payload = orjson.loads((FIXTURES / EARLIER).read_bytes())
    payload.update(changes)
    payload["legacySource"] = _record(v1)
    return payload


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_the_earlier_shape_is_told_from_okstras_own(world: LegacyWorld) -> None:
    for name in sorted(p.name for p in FIXTURES.glob("v2_*.json")):
        assert is_earlier_v2(orjson.loads((FIXTURES / name).read_bytes())), name
    for name in sorted(p.name for p in FIXTURES.glob("*.json") if not p.name.startswith("v2_")):
        assert not is_earlier_v2(orjson.loads((FIXTURES / name).read_bytes())), name
    own = {
        "executionIdentityVersion": 2,
        "roleCounts": {},
        "roleModels": {},
        "roleSelectionOrder": [],
        "project_root": "/p",
        "host_runtime": "terminal",
        "answered": [{"step": "task_pick", "answer": "new"}],
    }
    assert not is_earlier_v2(own)
    # A typo in okstra's own file stays an error of that file, not a conversion.
    typo = {**own, "answerd": []}
    assert not is_earlier_v2(typo)
    with pytest.raises(StateFileError, match="unknown field"):
        state_mod.parse_v2(typo, "x.json")
    # Only an integer 2 is a v2 version.
    assert not is_earlier_v2({**typo, "executionIdentityVersion": True, "use_defaults": False})


def test_an_earlier_v2_file_converts_with_its_answers(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    source = v1_copy(EARLIER)
    before = source.read_bytes()
    opened = _open(world, source)
    assert not opened.resumed
    assert opened.companion.name == f"{EARLIER}.v2.{_digest(source)}.json"
    parsed = state_mod.parse_v2(opened.state, str(opened.companion))
    assert parsed.legacy_source is not None
    assert parsed.legacy_source.path == str(source.resolve())
    assert parsed.answer_of("role-model:analyser:2") == "codex/gpt-5.6-sol"
    assert parsed.answer_of("directive") == "Focus on guest checkout only."
    assert {e.provenance for e in parsed.answered} == {"converted:v2"}
    # The new task's id is a slug now; the answer's echo keeps what was typed.
    assert parsed.task_key == "checkout/chk-120"
    entry = parsed.entry("task_id")
    assert entry is not None and "CHK-120" in entry.echo
    assert any("CHK-120" in note for note in opened.notes)
    assert source.read_bytes() == before
    assert not opened.companion.exists()  # nothing is written here


def test_dropped_earlier_choices_are_named_in_notes(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    opened = _open(world, v1_copy("v2_converted_from_v1_stale_models.json"))
    assert opened.state["roleCounts"] == {"critic": 1}
    assert "planner" not in opened.state["roleModels"]
    notes = "\n".join(opened.notes)
    assert "roleCounts.planner = 4" in notes and "1..3" in notes
    assert "roleModels.planner" in notes


def test_dropped_answers_are_named_in_notes(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    opened = _open(world, v1_copy("v2_impl_confirmed_current_session.json"))
    assert any("selected_stages" in note and "'1,2'" in note for note in opened.notes)
    # Bookkeeping of the earlier wizard is read silently (docs/compatibility.md).
    assert not any("use_defaults" in note or "profile_workers" in note for note in opened.notes)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"roleCounts": {"analyser": True}}, "roleCounts.analyser"),
        ({"roleCounts": [2]}, "roleCounts"),
        ({"roleModels": {"analyser": "claude/opus-4.6"}}, "roleModels.analyser"),
        ({"roleSelectionOrder": "role-count:analyser"}, "roleSelectionOrder"),
        ({"answered": ["task_pick", 3]}, "answered[1]"),
        ({"use_defaults": "no"}, "use_defaults"),
        ({"task_id": 114}, "task_id"),
        ({"host_entry_mode": "sideways"}, "host_entry_mode"),
        ({"project_root": ""}, "project_root"),
    ],
)
def test_malformed_earlier_v2_names_file_and_field(
    world: LegacyWorld, tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    raw = orjson.loads((FIXTURES / EARLIER).read_bytes())
    raw.update(change)
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(raw))
    with pytest.raises(StateFileError) as info:
        _open(world, path)
    assert info.value.path == str(path)
    assert info.value.field == field


def test_older_v2_json_companion_is_taken_over_and_left_alone(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    older = v1.with_name(f"{V1}.v2.json")
    atomic_write_json(older, _earlier_companion_of(v1, directive="from the earlier okstra"))
    before = _tree(v1.parent)

    opened = _open(world, v1)
    assert not opened.resumed
    assert opened.companion.name == f"{V1}.v2.{_digest(v1)}.json"
    assert opened.state["directive"] == "from the earlier okstra"
    assert opened.state["legacySource"] == _record(v1)
    assert any(str(older) in note and "taken over" in note for note in opened.notes)
    assert _tree(v1.parent) == before

    # Once okstra saved its own companion, that is what resumes.
    atomic_write_json(opened.companion, {**opened.state, "revision": 1})
    again = _open(world, v1)
    assert again.resumed and again.companion == opened.companion
    assert not any("taken over" in note for note in again.notes)


def test_older_v2_json_of_another_source_is_ignored(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    payload = _earlier_companion_of(v1, directive="stale")
    payload["legacySource"]["sha256"] = "0" * 64  # the v1 file changed since
    atomic_write_json(v1.with_name(f"{V1}.v2.json"), payload)
    opened = _open(world, v1)
    assert opened.state["directive"] != "stale"
    assert not any("taken over" in note for note in opened.notes)


def test_earlier_content_addressed_companion_is_taken_over_into_a_free_name(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    digest = _digest(v1)
    theirs = v1.with_name(f"{V1}.v2.{digest}.json")
    atomic_write_json(theirs, _earlier_companion_of(v1, directive="theirs"))
    saved = theirs.read_bytes()

    opened = _open(world, v1)
    assert opened.companion.name == f"{V1}.v2.{digest}.1.json"
    assert opened.state["directive"] == "theirs"
    atomic_write_json(opened.companion, opened.state)

    again = _open(world, v1)
    assert again.resumed and again.companion == opened.companion
    assert theirs.read_bytes() == saved


def test_invalid_matching_companion_is_skipped_with_a_note(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    first = _open(world, v1)
    broken = {**first.state, "roleCounts": {"analyser": True}}
    atomic_write_json(first.companion, broken)
    saved = first.companion.read_bytes()

    opened = _open(world, v1)
    assert not opened.resumed
    assert opened.companion.name == f"{V1}.v2.{_digest(v1)}.1.json"
    assert opened.state["roleCounts"] == first.state["roleCounts"]  # converted afresh
    note = next(n for n in opened.notes if "skipped" in n)
    assert str(first.companion) in note and "roleCounts.analyser" in note
    assert first.companion.read_bytes() == saved


def test_companion_that_is_not_an_object_belongs_to_nobody(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    first = _open(world, v1)
    first.companion.write_text("[]")
    opened = _open(world, v1)
    assert not opened.resumed
    assert opened.companion.name.endswith(".1.json")
    assert first.companion.read_text() == "[]"


def test_an_earlier_companion_opened_directly_is_its_source(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(V1)
    payload = _earlier_companion_of(v1)
    older = v1.with_name(f"{V1}.v2.json")
    assert earlier_companion_source(payload, older) == v1.resolve()
    # Gone source: the companion is a file of its own.
    assert earlier_companion_source(payload, older.with_name("elsewhere.json")) is not None
    v1.unlink()
    assert earlier_companion_source(payload, older) is None
