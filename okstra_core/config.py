"""Changes to the user's global config, `<config dir>/config.json`.

The file is read by `catalog.load_global_config`; this module is its one writer. An
update is an upsert: the keys it names are set (or removed, for None), every other
key is kept as it was. The merged object is validated by the same parser the loader
uses before anything is written, and written atomically under the file's lock, so a
bad value or a broken file changes nothing and two writers never lose an update.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .catalog import GlobalConfig, load_global_config, parse_global_config
from .environment import Environment
from .paths import user_dirs
from .store import FileLock, atomic_write_json, read_json

# A config write is a short critical section: wait a little rather than fail.
_LOCK_TIMEOUT = 5.0


def update_global_config(
    changes: Mapping[str, Any], environment: Environment | None = None
) -> GlobalConfig:
    """Upsert keys of `<config dir>/config.json`, keeping every other key.

    Args:
        changes: key → new value; a None value removes the key.
        environment: where the config dir is (`OKSTRA_HOME`); the real one by default.

    Returns:
        The config as written (validated by the loader's own parser).

    Raises:
        DataFileError: the current file is broken, or a changed value is invalid
            (file and key named); the file is left as it was.
    """
    env = environment or Environment.real()
    path = user_dirs(env.env).config_file
    with FileLock(path, timeout=_LOCK_TIMEOUT):
        # The loader refuses a broken file by name: never overwrite what we cannot read.
        load_global_config(path)
        raw: dict[str, Any] = dict(read_json(path, what="config file")) if path.exists() else {}
        for key, value in changes.items():
            if value is None:
                raw.pop(key, None)
            else:
                raw[key] = value
        config = parse_global_config(raw, Path(path))
        atomic_write_json(path, raw)
    return config


def save_theme(theme: str | None, environment: Environment | None = None) -> GlobalConfig:
    """Remember the terminal app's theme (`theme` in config.json; None forgets it)."""
    return update_global_config({"theme": theme}, environment)


def load_theme(environment: Environment | None = None) -> str | None:
    """The theme config.json names, or None (absent file or key).

    Raises:
        DataFileError: the config file is broken (file and key named).
    """
    env = environment or Environment.real()
    return load_global_config(user_dirs(env.env).config_file).theme
