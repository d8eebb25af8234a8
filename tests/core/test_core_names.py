"""The one name rule for task groups and ids (okstra_core.names)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core.errors import OkstraError
from okstra_core.life.project import is_name as is_run_name
from okstra_core.names import MAX_NAME_BYTES, is_name, name_problem
from okstra_core.records import RecordError
from okstra_core.request import RunRequest
from okstra_core.tasks import check_segment, slugify


@pytest.mark.parametrize(
    "name",
    ["로그인", "로그인-개선", "登录", "café", "Auth", "v1.2_rc-3", "१२३", "हिन्दी", "a" * 255],
)
def test_names_of_every_script_are_names(name: str) -> None:
    assert name_problem(name) is None
    assert is_name(name)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "empty"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "escape"),
        (".", "escape"),
        (".hidden", "start with a letter"),
        ("-x", "start with a letter"),
        ("a b", "whitespace"),
        ("a\x00b", "control character"),
        ("a\u202eb", "format character"),
        ("a\u200db", "format character"),
        ("cafe\u0301", "NFC"),
        ("가" * 86, "bytes long"),
        ("a:b", "':'"),
    ],
)
def test_what_is_not_a_name_is_named(value: str, why: str) -> None:
    problem = name_problem(value, "task group")
    assert problem is not None and why in problem and problem.startswith("task group")


def test_the_byte_bound_is_the_file_name_limit() -> None:
    assert is_name("가" * 85)  # 255 bytes
    assert len(("가" * 85).encode()) == MAX_NAME_BYTES
    assert not is_name("a" * 256)


@given(st.text(max_size=60))
def test_every_slug_okstra_makes_is_a_name_found_by_run_lookups(text: str) -> None:
    try:
        slug = check_segment(text, "task group")
    except OkstraError:
        return
    assert is_name(slug)
    assert unicodedata.normalize("NFC", slug) == slug
    assert is_run_name(f"{slug}/{slug}/requirements-discovery-001")


def test_a_hangul_group_is_one_name_for_wizard_prepare_and_lookups() -> None:
    assert check_segment("로그인 개선", "task group") == "로그인-개선"
    assert is_run_name("로그인-개선/화면/requirements-discovery-001")
    assert slugify("ＡＢＣ") == "abc"
    with pytest.raises(OkstraError, match="start with a letter"):
        check_segment("_x", "task group")


def test_related_task_keys_follow_the_name_rule() -> None:
    base: dict[str, object] = {
        "project_root": Path("/srv/project"),
        "task_group": "로그인",
        "task_id": "개선",
        "task_type": "requirements-discovery",
        "brief": "brief.md",
    }
    request = RunRequest(**base, related_tasks=("로그인/화면",))  # type: ignore[arg-type]
    assert request.related_tasks == ("로그인/화면",)
    for bad in ("../x", "a/.hidden", "a/b\u202e"):
        with pytest.raises(RecordError) as caught:
            RunRequest(**base, related_tasks=(bad,))  # type: ignore[arg-type]
        assert "group/id" in str(caught.value.errors()[0]["msg"])


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet="abcXYZ019._-/ é\u0301", max_size=12),
        st.text(alphabet="a.", min_size=250, max_size=260),
    )
)
def test_the_quick_ascii_answer_is_the_rule_s_answer(value: str) -> None:
    # `is_name` decides plain ASCII names without the character-by-character rule.
    assert is_name(value) == (name_problem(value) is None)
