"""Where okstra reads and writes: user dirs (`OKSTRA_HOME`), the workspace, resources."""

from __future__ import annotations

import functools
import os
import posixpath
import sys
from collections.abc import Mapping
from pathlib import Path

from .errors import UsageError
from .records import dataclass

APP_NAME = "okstra"


@dataclass(frozen=True)
class UserDirs:
    """The per-user directories (`cache` holds derived data only: removing it loses nothing)."""

    config: Path
    data: Path
    state: Path
    cache: Path

    @property
    def wizards(self) -> Path:
        return self.state / "wizards"

    @property
    def runs_index(self) -> Path:
        return self.data / "runs.jsonl"

    @property
    def config_file(self) -> Path:
        return self.config / "config.json"

    @property
    def user_providers(self) -> Path:
        return self.config / "providers"


def directory_variable(env: Mapping[str, str], variable: str) -> Path | None:
    """The absolute directory a variable names, None when unset (`UsageError` if relative)."""
    value = env.get(variable)
    if not value:
        return None
    path = Path(os.path.expanduser(value))  # `~user` of no user stays as it is
    if not path.is_absolute():
        raise UsageError(
            f"{variable}={value!r} is not an absolute path: okstra's directories are "
            "absolute (a relative one would be read from wherever okstra runs)",
            field=variable,
        )
    return path


def _okstra_home(env: Mapping[str, str]) -> Path | None:
    """`OKSTRA_HOME`, absolute, existing or with an existing parent."""
    root = directory_variable(env, "OKSTRA_HOME")
    if root is not None and not os.path.isdir(root) and not os.path.isdir(root.parent):
        raise UsageError(
            f"OKSTRA_HOME={str(root)!r} does not exist, nor does {root.parent}: okstra "
            "creates the home directory itself but not the directories above it",
            field="OKSTRA_HOME",
        )
    return root


def user_dirs(env: Mapping[str, str] | None = None) -> UserDirs:
    """Return the user dirs, honouring `OKSTRA_HOME`."""
    env = os.environ if env is None else env
    root = _okstra_home(env)
    if root is not None:
        return UserDirs(**{name: root / name for name in _XDG})
    found = _xdg_dirs()
    if found is not None:
        return found
    import platformdirs  # deferred: only needed without OKSTRA_HOME, off the XDG path

    dirs = {name: getattr(platformdirs, f"user_{name}_dir")(APP_NAME) for name in _XDG}
    return UserDirs(**{name: Path(found) for name, found in dirs.items()})


def _bundled(package_dir: Path, data_name: str) -> Path:
    """Find a data dir shipped in the wheel, or the checkout's top-level copy."""
    shipped = package_dir / "_data" / data_name
    if shipped.is_dir():
        return shipped
    return package_dir.parent / data_name


@functools.cache  # fixed for the process: a realpath walk every catalog file would ask for
def bundled_prompts_root() -> Path:
    """The `prompts/` directory that ships with okstra."""
    return _bundled(Path(__file__).resolve().parent, "prompts")


def bundled_demo_root() -> Path:
    """The sample project that ships with okstra (`demo/`; `okstra demo` copies it)."""
    return _bundled(Path(__file__).resolve().parent, "demo")


def prompts_root(env: Mapping[str, str] | None = None) -> Path:
    """The active `prompts/` root: `OKSTRA_WORKSPACE` when set, else the bundled one."""
    env = os.environ if env is None else env
    ws = directory_variable(env, "OKSTRA_WORKSPACE")
    if ws is not None:
        return ws
    return bundled_prompts_root()


def resource(relative: str, env: Mapping[str, str] | None = None) -> Path:
    """Resolve a path under `prompts/`: the workspace first, then the bundled data."""
    primary = prompts_root(env) / relative
    if primary.exists():
        return primary
    return bundled_prompts_root() / relative


# (XDG variable, default under HOME) of each user dir.
_XDG = {
    "config": ("XDG_CONFIG_HOME", "/.config"),
    "data": ("XDG_DATA_HOME", "/.local/share"),
    "state": ("XDG_STATE_HOME", "/.local/state"),
    "cache": ("XDG_CACHE_HOME", "/.cache"),
}


def _xdg_dirs() -> UserDirs | None:
    """The user dirs platformdirs gives on Linux with an absolute HOME, without importing it."""
    if not sys.platform.startswith("linux"):
        return None
    home = os.environ.get("HOME", "")
    if not posixpath.isabs(home):
        return None
    home = home.rstrip("/")
    out: dict[str, Path] = {}
    for name, (variable, default) in _XDG.items():
        value = os.environ.get(variable, "")
        base = value if posixpath.isabs(value) else (home + default)
        out[name] = Path(os.path.join(base, APP_NAME))
    return UserDirs(**out)
