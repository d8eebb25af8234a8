"""Where a CLI comes from: the file PATH finds, its entry, whether a repository can fill it.

A relative PATH entry (`node_modules/.bin`, `.`, or an empty one) or an absolute one
inside the current project (the current directory and the nearest parent holding
`.okstra` or `.git`, unless that is home or above) holds what the project ships. okstra
does not refuse such a CLI (it is the person's own configuration) but always warns
(`CliOrigin.risk`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..environment import Environment
from ..records import dataclass

_PROJECT_MARKERS = (".okstra", ".git")


@dataclass(frozen=True)
class CliOrigin:
    """Where PATH found one CLI: what is run (`path`), through which `entry` ("" the empty
    one, None when not looked up on PATH), the file (`resolved`), and the entry's `risk`."""

    command: str
    path: str
    entry: str | None
    resolved: str
    risk: str | None = None


def _local_roots(cwd: Path) -> list[Path]:
    """The current directory and the project above it, unless home or above home."""
    home = Path(os.path.expanduser("~")).resolve()
    roots = [cwd]
    roots += [p for p in cwd.parents if any((p / m).exists() for m in _PROJECT_MARKERS)][:1]
    return [r for r in roots if r != home and r not in home.parents]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def entry_risk(entry: str | None, cwd: Path) -> str | None:
    """Why PATH entry `entry` is one the current project can fill, or None."""
    if entry is None:
        return None
    if entry == "":
        return f"found through an empty PATH entry, which means the current directory ({cwd})"
    if not os.path.isabs(entry):
        return (
            f"found through the relative PATH entry '{entry}', resolved against the current "
            f"directory ({cwd}): the project there chooses what runs"
        )
    directory = Path(os.path.realpath(entry))
    for root in _local_roots(cwd):
        if _inside(directory, root):
            return (
                f"found through the PATH entry '{entry}', inside the current project ({root}): "
                "the project chooses what runs"
            )
    return None


def _current(cwd: Path | None) -> Path:
    try:
        return (cwd or Path.cwd()).resolve()
    except OSError:  # the current directory was removed: nothing is local to it
        return Path("/")


def locate_cli(command: str, environment: Environment, cwd: Path | None = None) -> CliOrigin | None:
    """Where `command` is found on `environment`'s PATH from `cwd` (None: not found)."""
    here = _current(cwd)
    if environment.which_override is not None:
        path = environment.which_override(command)
        found = None if path is None else (path, os.path.dirname(path) or None)
    else:
        found = environment.locate(command)
    if found is None:
        return None
    path, entry = found
    resolved = os.path.realpath(path if os.path.isabs(path) else here / path)
    return CliOrigin(command, path, entry, resolved, entry_risk(entry, here))


def warning_line(origin: CliOrigin | None) -> str | None:
    """One line for a person about a CLI found through a risky entry (None if not)."""
    if origin is None or origin.risk is None:
        return None
    return f"`{origin.command}` is {origin.resolved}, {origin.risk}"
