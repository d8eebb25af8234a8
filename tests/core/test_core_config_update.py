"""`okstra_core.config`: upserting `<config dir>/config.json` (the app's theme)."""

from __future__ import annotations

import json

import pytest

from okstra_core.config import load_theme, save_theme, update_global_config
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.paths import user_dirs


@pytest.fixture
def env(okstra_home) -> Environment:
    return Environment(env={"OKSTRA_HOME": str(okstra_home)})


def test_save_theme_creates_the_file_and_load_reads_it(env) -> None:
    assert load_theme(env) is None
    config = save_theme("nord", env)
    assert config.theme == "nord"
    path = user_dirs(env.env).config_file
    assert json.loads(path.read_text()) == {"theme": "nord"}
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_theme(env) == "nord"


def test_update_keeps_every_other_key_and_none_removes(env) -> None:
    path = user_dirs(env.env).config_file
    path.parent.mkdir(parents=True)
    original = {"language": "ko", "disabledProviders": ["grok"], "theme": "gruvbox"}
    path.write_text(json.dumps(original))
    save_theme("nord", env)
    assert json.loads(path.read_text()) == {**original, "theme": "nord"}
    save_theme(None, env)
    assert json.loads(path.read_text()) == {"language": "ko", "disabledProviders": ["grok"]}


@pytest.mark.parametrize(
    "changes, field",
    [({"theme": 5}, "theme"), ({"theme": ""}, "theme"), ({"colour": "red"}, "colour")],
)
def test_an_invalid_change_is_refused_and_nothing_changes(env, changes, field) -> None:
    path = user_dirs(env.env).config_file
    path.parent.mkdir(parents=True)
    path.write_text('{"language": "ko"}')
    with pytest.raises(DataFileError) as refused:
        update_global_config(changes, env)
    assert refused.value.field == field and str(path) in refused.value.render()
    assert path.read_text() == '{"language": "ko"}'


def test_a_broken_file_is_never_overwritten(env) -> None:
    path = user_dirs(env.env).config_file
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"theme": ')
    with pytest.raises(DataFileError):
        save_theme("nord", env)
    assert path.read_bytes() == b'{"theme": '
