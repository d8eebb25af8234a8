"""The user dirs okstra computes on Linux are the very ones platformdirs gives."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from unittest import mock

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core.paths import APP_NAME, _xdg_dirs, user_dirs

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the XDG path is taken on Linux only"
)

PATHS = st.sampled_from(["", "relative/dir", "/abs/dir", "/abs/dir/", "/", "//twice", "~/x"])
VARIABLES = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


@settings(max_examples=200, deadline=None)
@given(
    home=st.one_of(st.none(), st.sampled_from(["/home/someone", "/home/someone/", "/", "rel"])),
    values=st.tuples(*(st.one_of(st.none(), PATHS) for _ in VARIABLES)),
)
def test_the_xdg_path_agrees_with_platformdirs(
    home: str | None, values: tuple[str | None, ...]
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*VARIABLES, "HOME", "OKSTRA_HOME")}
    if home is not None:
        env["HOME"] = home
    env.update({k: v for k, v in zip(VARIABLES, values, strict=True) if v is not None})
    with mock.patch.dict(os.environ, env, clear=True):
        ours = _xdg_dirs()
        if ours is None:  # left to platformdirs: no or a relative HOME
            assert home is None or not home.startswith("/")
            return
        expected = {
            "config": platformdirs.user_config_dir(APP_NAME),
            "data": platformdirs.user_data_dir(APP_NAME),
            "state": platformdirs.user_state_dir(APP_NAME),
            "cache": platformdirs.user_cache_dir(APP_NAME),
        }
        assert {k: str(getattr(ours, k)) for k in expected} == expected
        assert user_dirs({}) == ours


def test_okstra_home_still_wins(tmp_path: Path) -> None:
    dirs = user_dirs({"OKSTRA_HOME": str(tmp_path)})
    assert dirs.cache == tmp_path / "cache"
