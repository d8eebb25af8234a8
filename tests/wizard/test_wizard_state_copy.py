"""`WizardState.copy` is a deep copy: equal to `copy.deepcopy`, sharing nothing mutable."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core.wizard.state import AnsweredStep, LegacySource, StaleNote, WizardState

TEXT = st.text(max_size=8)


@st.composite
def states(draw: st.DrawFn) -> WizardState:
    steps = draw(st.lists(TEXT, unique=True, max_size=5))
    return WizardState(
        role_counts=draw(st.dictionaries(TEXT, st.integers(0, 64), max_size=3)),
        role_models=draw(st.dictionaries(TEXT, st.lists(TEXT, min_size=1, max_size=3), max_size=3)),
        role_selection_order=draw(st.lists(TEXT, max_size=3)),
        legacy_source=draw(st.none() | st.just(LegacySource(path="s.json", sha256="0" * 64))),
        project_root="/p",
        host_runtime="terminal",
        available_functions=draw(st.lists(TEXT, max_size=2)),
        answered=[AnsweredStep(step=s, answer=draw(TEXT)) for s in steps],
        confirmed=draw(st.none() | st.booleans()),
        remembered_answers=draw(st.dictionaries(TEXT, TEXT, max_size=3)),
        revision=draw(st.integers(0, 10)),
        stale=draw(st.none() | st.just(StaleNote(step="x", answer="y", reason="z"))),
    )


def _mutables(value: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, list):
        found.append(value)
        for item in value:
            found += _mutables(item)
    elif isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found += _mutables(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        found.append(value)
        for item in dataclasses.fields(value):
            found += _mutables(getattr(value, item.name))
    return found


@settings(max_examples=200, deadline=None)
@given(state=states())
def test_copy_is_deep(state: WizardState) -> None:
    twin = state.copy()
    assert twin == copy.deepcopy(state) == state
    originals = {id(m) for m in _mutables(state)}
    assert not originals & {id(m) for m in _mutables(twin)}
    # Changing the copy leaves the original as it was.
    before = copy.deepcopy(state)
    twin.role_counts["new"] = 1
    twin.answered.append(AnsweredStep(step="new-step", answer="a"))
    for entry in twin.answered:
        entry.answer += "!"
    for refs in twin.role_models.values():
        refs.append("x/y")
    assert state == before
