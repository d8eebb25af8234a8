"""Changes to the user's global config (its one writer, validated, locked, atomic).

Also reads the earlier okstra's global config and lists the config files in use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .catalog import GlobalConfig, load_global_config, parse_global_config
from .catalog.models import ModelDefaults
from .catalog.validate import CONFIG_KEYS, model_defaults
from .environment import Environment
from .errors import DataFileError, OkstraError
from .paths import user_dirs
from .records import dataclass
from .store import FileLock, atomic_write_bytes, atomic_write_json, read_bytes, read_json

# A config write is a short critical section: wait a little rather than fail.
_LOCK_TIMEOUT = 5.0


def update_global_config(
    changes: Mapping[str, Any], environment: Environment | None = None
) -> GlobalConfig:
    """Upsert keys of config.json (None removes one); the config as written."""
    env = environment or Environment.real()
    path = user_dirs(env.env).config_file
    with FileLock(path, timeout=_LOCK_TIMEOUT):
        # Never overwrite what the loader cannot read.
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
    """The theme config.json names, or None; DataFileError for a broken file."""
    env = environment or Environment.real()
    return load_global_config(user_dirs(env.env).config_file).theme


# --------------------------------------------------------------------------- earlier config

# Holds the earlier file's path the one-time note was about (another is noted again).
_NOTICE_MARKER = "earlier-config-noted"
_NOTICES: dict[str, list[str]] = {}


def earlier_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The earlier okstra's global config: `<OKSTRA_HOME or ~/.okstra>/config.json`."""
    env = os.environ if env is None else env
    home = env.get("OKSTRA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".okstra")
    return Path(home).expanduser() / "config.json"


def load_earlier_defaults(env: Mapping[str, str] | None = None) -> ModelDefaults:
    """The `modelDefaults` of the earlier global config (empty if none; `DataFileError`)."""
    path = earlier_config_file(env)
    if not path.is_file():
        return ModelDefaults()
    raw = read_json(path, what="earlier global config")
    if not isinstance(raw, dict):
        raise DataFileError("expected a JSON object", path=path)
    key = CONFIG_KEYS["model_defaults"]  # named as in config.json
    if key not in raw:
        return ModelDefaults()
    found = model_defaults(raw[key], path, earlier=True)
    return ModelDefaults(by_role=dict(found.by_role), source=str(path), notes=found.notes)


def earlier_config_notice(env: Mapping[str, str] | None = None) -> list[str]:
    """The one-time note that the earlier global config is read; [] once it was shown.

    A marker in the state dir remembers it; every caller in the process gets the same note.
    """
    env = os.environ if env is None else env
    earlier = earlier_config_file(env)
    key = str(earlier)
    if key in _NOTICES:
        return _NOTICES[key]
    marker = user_dirs(env).state / _NOTICE_MARKER
    try:
        shown = marker.is_file() and read_bytes(marker, what="marker").decode() == key
    except (OkstraError, UnicodeDecodeError):
        shown = False
    notes: list[str] = []
    if not shown:
        new = user_dirs(env).config_file
        notes.append(
            f"{earlier}: modelDefaults of the earlier global config are read below {new}; "
            f"move them to {new} (this note is shown once)"
        )
        # Not remembered on a failed write: the note shows again next time.
        with contextlib.suppress(OkstraError, OSError):
            atomic_write_bytes(marker, key.encode())
    _NOTICES[key] = notes
    return notes


@dataclass(frozen=True)
class ConfigFile:
    """One config file okstra reads, and whether it is there (`okstra doctor`)."""

    scope: str
    path: str
    present: bool


def config_files_in_use(
    env: Mapping[str, str] | None = None, project_root: Path | None = None
) -> list[ConfigFile]:
    """The config files okstra reads, highest scope first (project, user, earlier global)."""
    env = os.environ if env is None else env
    files: list[tuple[str, Path]] = []
    if project_root is not None:
        files.append(("project", project_root / ".okstra" / "project.json"))
    files.append(("user", user_dirs(env).config_file))
    files.append(("earlier global", earlier_config_file(env)))
    return [ConfigFile(scope=s, path=str(p), present=p.is_file()) for s, p in files]
