"""Where a CLI comes from: the file PATH finds, the PATH entry it was found through, and
whether that entry is one a repository can fill.

okstra runs an agent's CLI by its name, looked up on PATH like a shell does. A PATH
entry that is relative (`node_modules/.bin`, `.`, or an empty entry, which means the
current directory) is resolved against wherever okstra runs, and an absolute entry
inside the current project (`$PWD/node_modules/.bin`, added by a tool such as direnv)
holds what the project ships: in a repository someone else wrote, `claude` may then
be any program. Such an entry is the person's own configuration — their shell runs
it for every command they type — so okstra does not refuse it, but it never runs such
a CLI without saying so: the doctor and the preflight name the entry and warn
(`CliOrigin.risk`).

"The current project" is the current directory and the nearest directory above it
that holds `.okstra` or `.git` — unless that directory is the home directory or above
it (a PATH entry under `~/bin` is not made local by running okstra in `~`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..environment import Environment
from ..records import dataclass

_PROJECT_MARKERS = (".okstra", ".git")


@dataclass(frozen=True)
class CliOrigin:
    """Where PATH found one CLI.

    Attributes:
        command: the name looked up (`claude`).
        path: what PATH look-up gave (what is run), e.g. `node_modules/.bin/claude`.
        entry: the PATH entry it was found through ("" = the empty entry; None when
            the command had a directory part or a test replaced the look-up).
        resolved: the absolute path of the file, links resolved.
        risk: why the entry is one a repository can fill (a sentence), or None.
    """

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
    """Where `command` is found on `environment`'s PATH (None: not found).

    Args:
        command: the CLI's name.
        environment: its PATH (or its test look-up).
        cwd: the current directory (default: the process's).
    """
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
