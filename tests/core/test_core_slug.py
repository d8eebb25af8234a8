"""Task names keep the letters of every script (slug rule, see docs/decisions.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_core.errors import OkstraError
from okstra_core.tasks import check_segment, slugify


@pytest.mark.parametrize(
    ("typed", "slug"),
    [
        ("로그인 개선", "로그인-개선"),
        ("登录 改进", "登录-改进"),
        ("ログイン", "ログイン"),
        ("Café Menu", "café-menu"),
        ("ＡＢＣ１２", "abc12"),
        ("fix: 버그#12", "fix-버그-12"),
        ("Hello  World!", "hello-world"),
        ("grp", "grp"),
        ("v1.2_rc-3", "v1.2_rc-3"),
    ],
)
def test_slug_keeps_letters_of_every_script(typed: str, slug: str) -> None:
    assert slugify(typed) == slug


@pytest.mark.parametrize("typed", ["a/b", "a\\b", "..", ".", "!!!", "   "])
def test_segments_that_would_escape_or_vanish_are_refused(typed: str) -> None:
    with pytest.raises(OkstraError):
        check_segment(typed, "task group")


@given(st.text(max_size=40))
def test_a_slug_is_its_own_slug_and_never_a_path(text: str) -> None:
    slug = slugify(text)
    assert slugify(slug) == slug
    assert "/" not in slug and "\\" not in slug and "\x00" not in slug
    assert not slug.startswith("-") and not slug.endswith("-")
