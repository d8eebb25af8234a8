"""`records.dataclass` behaves as `dataclasses.dataclass` does.

It shares one `__repr__`, `__eq__` and `__hash__` among all records, and for frozen
records one `__setattr__` and `__delattr__`, instead of compiling them per class; the
standard decorator is the oracle: every combination of `frozen`, `eq`, `repr` and
`unsafe_hash`, with a class that defines none of the three methods or one of them
itself, must give the same repr, comparisons, hashability and hash equality, the same
answers to assigning and deleting attributes (on the class and on a plain subclass),
copies and replacements — or the same refusal.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest

from okstra_core.records import dataclass as record

BODIES: dict[str, dict[str, Any]] = {
    "plain": {},
    "own hash": {"__hash__": lambda self: 7},
    "own eq": {"__eq__": lambda self, other: True},
    "own repr": {"__repr__": lambda self: "mine"},
    "hash None": {"__hash__": None},
}
COMBOS = list(itertools.product([False, True], repeat=4))


def _make(decorator: Callable[..., Any], options: dict[str, bool], body: dict[str, Any]) -> Any:
    namespace = dict(body)
    namespace["__annotations__"] = {"a": "int", "b": "str", "c": "list[int]", "d": "int"}
    namespace["a"] = 1
    namespace["b"] = "x"
    namespace["c"] = dataclasses.field(default_factory=list, hash=False)
    namespace["d"] = dataclasses.field(default=0, compare=False, repr=False)
    return decorator(**options)(type("C", (), namespace))


def _behaviour(cls: Any) -> list[object]:
    x, y, z, w = cls(1, "x", [1]), cls(1, "x", [1]), cls(2, "x", [1]), cls(1, "x", [1], 5)
    seen: list[object] = [
        re.sub(r" at 0x[0-9a-f]+", "", repr(x)),
        x == y,
        x == z,
        x != y,
        x == w,  # `d` is not compared
        x == 3,
        cls.__hash__ is None,
        cls.__match_args__,
    ]
    try:
        seen.append(hash(x) == hash(y))
        seen.append(hash(x) == hash(w))
    except TypeError as exc:
        seen.append(f"unhashable: {exc}")
    seen += _mutations(cls(1, "x", [1]))
    seen += _mutations(type("Sub", (cls,), {})(1, "x", [1]))
    seen.append(repr(copy.deepcopy(x)) == repr(x) and copy.copy(x) == x)
    seen.append(dataclasses.replace(x, a=9).a)
    return seen


def _mutations(value: Any) -> list[object]:
    """What assigning and deleting a field, and setting a new attribute, do."""
    seen: list[object] = []
    for act in (
        lambda: setattr(value, "a", 5),
        lambda: setattr(value, "extra", 1),
        lambda: setattr(value, "extra", 2),
        lambda: delattr(value, "b"),
        lambda: delattr(value, "extra"),
    ):
        try:
            act()
            seen.append(("ok", value.a, getattr(value, "extra", None)))
        except (dataclasses.FrozenInstanceError, AttributeError) as exc:
            seen.append((type(exc).__name__, str(exc)))
    return seen


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize(("frozen", "eq", "repr_", "unsafe_hash"), COMBOS)
def test_the_same_behaviour_as_the_standard_decorator(
    body: str, frozen: bool, eq: bool, repr_: bool, unsafe_hash: bool
) -> None:
    options = {"frozen": frozen, "eq": eq, "repr": repr_, "unsafe_hash": unsafe_hash}
    outcomes: list[list[object]] = []
    for decorator in (dataclasses.dataclass, record):
        try:
            cls = _make(decorator, options, BODIES[body])
        except TypeError as exc:
            outcomes.append(["refused", str(exc)])
            continue
        outcomes.append(_behaviour(cls))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize(
    ("base_frozen", "child_frozen"), list(itertools.product([False, True], repeat=2))
)
def test_frozen_and_not_frozen_mix_as_the_standard_decorator_allows(
    base_frozen: bool, child_frozen: bool
) -> None:
    outcomes: list[object] = []
    for decorator in (dataclasses.dataclass, record):
        base = decorator(frozen=base_frozen)(type("Base", (), {"__annotations__": {"a": "int"}}))
        try:
            child = decorator(frozen=child_frozen)(
                type("Child", (base,), {"__annotations__": {"b": "int"}})
            )
        except TypeError as exc:
            outcomes.append(("refused", str(exc)))
            continue
        outcomes.append(_mutations(child(1, 2)))
    assert outcomes[0] == outcomes[1]


def test_a_frozen_class_may_not_bring_its_own_setattr() -> None:
    namespace = {"__annotations__": {"a": "int"}, "__setattr__": lambda self, n, v: None}
    refusals = []
    for decorator in (dataclasses.dataclass, record):
        with pytest.raises(TypeError) as err:
            decorator(frozen=True)(type("C", (), dict(namespace)))
        refusals.append(str(err.value))
    assert refusals[0] == refusals[1]


def test_a_subclass_compares_and_hashes_its_own_fields() -> None:
    @record(frozen=True)
    class Base:
        a: int

    @record(frozen=True)
    class Child(Base):
        b: int

    class Plain(Base):  # not a dataclass: compares as its base, only with its own class
        pass

    assert Child(1, 2) != Child(1, 3) and hash(Child(1, 2)) == hash(Child(1, 2))
    assert Base(1) != Child(1, 2) and Plain(1) == Plain(1) and Plain(1) != Base(1)
    assert (
        repr(Child(1, 2))
        == "test_a_subclass_compares_and_hashes_its_own_fields.<locals>.Child(a=1, b=2)"
    )
    assert dataclasses.replace(Child(1, 2), b=5) == Child(1, 5)


def test_a_recursive_value_is_shown_once() -> None:
    @record
    class Node:
        items: list[Any]

    node = Node([])
    node.items.append(node)
    assert repr(node).endswith("Node(items=[...])")


def test_a_frozen_record_with_slots_is_the_standard_decorators() -> None:
    outcomes = []
    for decorator in (dataclasses.dataclass, record):
        cls = decorator(frozen=True, slots=True)(
            type("S", (), {"__annotations__": {"a": "int"}, "__module__": __name__})
        )
        value = cls(1)
        outcomes.append([_mutations_of_a(value), copy.deepcopy(value) == value, hash(value)])
    assert outcomes[0] == outcomes[1]


def _mutations_of_a(value: Any) -> list[object]:
    seen: list[object] = []
    for act in (lambda: setattr(value, "a", 5), lambda: delattr(value, "a")):
        try:
            act()
            seen.append("ok")
        except (dataclasses.FrozenInstanceError, AttributeError, TypeError) as exc:
            seen.append(type(exc).__name__)
    return seen
