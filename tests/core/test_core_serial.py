"""`records.to_data`: the one serializer, and what a record's `config` declares for it.

Every document and protocol reply is a record written by `to_data`; what it writes is
declared once per record (`records.config`). No other hand-written serializer may
appear: the one the errors keep (they sit below the records) is the only `to_json`
left (at most three may be, each saying why it is written by hand).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import pytest

from okstra_core.records import config, dataclass, field, to_data, validate

ROOT = Path(__file__).resolve().parents[2] / "okstra_core"


class Pair(NamedTuple):
    answered: int
    total: int


@dataclass(frozen=True, kw_only=True)
class Inner:
    __pydantic_config__ = config(camel_case=True)

    model_ref: str
    when: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class Outer:
    __pydantic_config__ = config(
        camel_case=True,
        aliases={"provider_id": "provider", "digest_text": "digest"},
        omit_none=("note",),
        omit_empty=("tags",),
        skip=("secret",),
        views=("digest_text", "shout"),
        first=("digest_text", "provider_id"),
    )

    provider_id: str
    inner: Inner
    note: str | None = None
    tags: tuple[str, ...] = ()
    where: Path = Path("/p")
    env: Mapping[str, str] = field(default_factory=dict)
    progress: Pair = Pair(0, 0)
    secret: str = "never written"

    @property
    def digest_text(self) -> str:
        return f"d-{self.provider_id}"

    def shout(self) -> str:
        return self.provider_id.upper()


def test_a_record_is_written_as_its_config_declares() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    value = Outer(
        provider_id="claude",
        inner=Inner(model_ref="claude/opus", when=when),
        env=MappingProxyType({"A": "1"}),
        progress=Pair(2, 14),
    )
    data = to_data(value)
    assert data == {
        "digest": "d-claude",
        "provider": "claude",
        "inner": {"modelRef": "claude/opus", "when": "2026-01-02T03:04:05+00:00"},
        "where": "/p",
        "env": {"A": "1"},
        "progress": {"answered": 2, "total": 14},
        "shout": "CLAUDE",
    }
    # The declared order: `first`, then the fields, then the views.
    assert list(data) == ["digest", "provider", "inner", "where", "env", "progress", "shout"]
    full = to_data(Outer(provider_id="x", inner=Inner(model_ref="m"), note="n", tags=("t",)))
    assert full["note"] == "n" and full["tags"] == ["t"] and full["inner"]["when"] is None


def test_the_names_written_are_the_names_read() -> None:
    value = Inner(model_ref="codex/gpt-5")
    assert validate(Inner, to_data(value)) == value


@dataclass(frozen=True, kw_only=True)
class Reply:
    __pydantic_config__ = config(spread="body", omit_empty=("notes",))

    ok: bool = True
    body: object
    notes: tuple[str, ...] = ()


def test_a_spread_field_writes_its_keys_in_its_place() -> None:
    from_record = to_data(Reply(body=Inner(model_ref="m"), notes=("n",)))
    assert list(from_record) == ["ok", "modelRef", "when", "notes"]
    from_mapping = to_data(Reply(body={"error": "no", "file": "f"}))
    assert from_mapping == {"ok": True, "error": "no", "file": "f"}


def test_a_record_without_config_writes_every_field_by_its_name() -> None:
    @dataclass(frozen=True)
    class Plain:
        a_b: int
        c: tuple[int, ...]

    assert to_data(Plain(1, (2, 3))) == {"a_b": 1, "c": [2, 3]}


# At most this many hand-written `to_json` methods may remain in okstra_core, each
# saying why it is written by hand (its docstring says "by hand").
MAX_HAND_WRITTEN = 3
# Files whose `to_json` methods are not counted, each with why. The doctor's report is
# moved to `records.to_data` by the readiness work; remove this entry when it is.
ALLOWED = {"life/doctor.py": "the doctor's report: converted with the readiness checks"}


def _to_json_methods() -> dict[str, ast.FunctionDef]:
    """`<file>:<class>` -> its `to_json` method, in every module of okstra_core."""
    found: dict[str, ast.FunctionDef] = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "to_json":
                        found[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = item
    return found


def test_at_most_three_hand_written_serializers_each_with_its_reason() -> None:
    found = _to_json_methods()
    counted = {k: v for k, v in found.items() if k.split(":")[0] not in ALLOWED}
    assert len(counted) <= MAX_HAND_WRITTEN, (
        "write a record's JSON with records.to_data and declare its shape in "
        f"records.config, not in a to_json method: {sorted(counted)}"
    )
    for name, method in counted.items():
        reason = ast.get_docstring(method) or ""
        assert "by hand" in reason, f"{name}: say in its docstring why it is written by hand"


def test_the_hand_written_serializer_left_is_the_errors() -> None:
    """The errors' own (they sit below the records); the walk that counts finds it."""
    found = _to_json_methods()
    assert {k for k in found if k.split(":")[0] not in ALLOWED} == {"errors.py:OkstraError"}


@pytest.mark.parametrize(
    ("error", "facts"),
    [
        ("assignment", {"candidates": ["c"], "constraints": ["k"]}),
        ("incomplete", {"runId": "r-001", "runState": "incomplete", "failed": "/x/b"}),
    ],
)
def test_an_error_writes_the_facts_its_class_names(error: str, facts: dict[str, object]) -> None:
    from okstra_core.errors import AssignmentResolutionError, IncompleteRunError, PrepareError

    if error == "assignment":
        exc: Exception = AssignmentResolutionError(["c"], ["k"])
    else:
        exc = IncompleteRunError(
            PrepareError("disk full", path="/x/b"),
            run_id="r-001",
            run_dir=Path("/x"),
            written=[Path("/x/a")],
            failed=Path("/x/b"),
            not_written=[Path("/x/b")],
            complete=False,
        )
    data = exc.to_json()  # type: ignore[attr-defined]
    assert data["ok"] is False and data["error"]
    for key, value in facts.items():
        assert data[key] == value
