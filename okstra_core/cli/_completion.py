"""Shell completion (argcomplete): `okstra completion bash|zsh|fish` prints the script.

At each Tab the shell asks okstra, which answers from the same argparse parsers, with
values from the current project (run ids, worker labels, roles, wizard state names).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..catalog.models import TASK_TYPES
from ..environment import Environment
from . import add_command, run_dir, say

SHELLS = ("bash", "zsh", "fish")
HOSTS = ("claude-code", "codex", "terminal")
Completer = Callable[..., Iterable[str]]


def _project_root(parsed: argparse.Namespace) -> Path | None:
    """The project the command line names (`--project-root`), else the one here."""
    from ..discovery import default_project_root
    from ..errors import OkstraError

    given = getattr(parsed, "project_root", None)
    try:
        return Path(given) if given else default_project_root(Path.cwd())
    except (OkstraError, OSError):  # no project here: nothing to offer
        return None


def run_ids(parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The project's runs, by run id and by `<task>/<run-id>` (`okstra runs` names)."""
    from ..life.project import run_places

    root = _project_root(parsed_args)
    if root is None:
        return []
    names: set[str] = set()
    for place, real in run_places(root):
        if real:
            names.update((place.name, f"{place.task}/{place.name}"))
    return sorted(names)


def worker_labels(parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The labels of the run's members (`analyser#1`, `leader#1`)."""
    from ..life.report import read_run_manifest
    from ..life.workers.team import members

    run = getattr(parsed_args, "run", None)
    if not run:
        return []
    manifest = read_run_manifest(run_dir(run))[1]
    return [member.short for member in members(manifest)]


def role_names(**_: Any) -> list[str]:
    """Every role of the task types okstra knows (bundled and the user's)."""
    from ..catalog import load_catalog

    catalog = load_catalog(Environment.real())
    return sorted({r.role for p in catalog.profiles.values() for r in p.roles})


def state_names(**_: Any) -> list[str]:
    """The wizard state files (`--state NAME`), newest first."""
    from ..session import list_wizards

    return [s.path.stem for s in list_wizards(Environment.real()) if s.problem is None]


# Each argument's values by its `dest` (a flag's or a positional's).
COMPLETERS: dict[str, Completer] = {
    "run": run_ids,
    "who": worker_labels,
    "role": role_names,
    "state": state_names,
    "task_type": lambda **_: list(TASK_TYPES),
    "host": lambda **_: list(HOSTS),
}


def _safe(completer: Completer) -> Completer:
    """A completer that offers nothing rather than fail (a Tab never shows an error)."""

    def complete(**kwargs: Any) -> Iterable[str]:
        try:
            return list(completer(**kwargs))
        except Exception:  # a damaged run or catalog: offer nothing, never an error
            return []

    return complete


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def completion_parser() -> argparse.ArgumentParser:
    """The whole command line — the headless commands plus the app's options — with a
    completer on every argument whose values okstra knows."""
    from . import build_parser
    from ._app import app_parser

    parser = build_parser()
    known = set(parser._option_string_actions)
    for action in app_parser()._actions:
        if action.option_strings and not known & set(action.option_strings):
            parser._add_action(action)
    for each in _parsers(parser):
        for action in each._actions:
            completer = COMPLETERS.get(action.dest)
            if completer is not None and not action.choices:
                action.completer = _safe(completer)  # type: ignore[attr-defined]
    return parser


def complete() -> None:
    """Answer the shell's completion request (`_ARGCOMPLETE` is set) and exit."""
    import argcomplete

    # Flags are offered once a `-` is typed; before that, commands and values.
    argcomplete.autocomplete(completion_parser(), always_complete_options=False)


def script(shell: str) -> str:
    """The completion script for `shell` (one of SHELLS)."""
    from argcomplete.shell_integration import shellcode

    return shellcode(["okstra"], shell=shell)


def register(sub: Any) -> None:
    """Add `okstra completion SHELL`."""
    add_command(
        sub, "completion", "print a shell completion script (bash, zsh or fish)",
        "source <(okstra completion bash)                       this bash session",
        "okstra completion bash > ~/.local/share/bash-completion/completions/okstra",
        'okstra completion zsh > "${fpath[1]}/_okstra"',
        "okstra completion fish > ~/.config/fish/completions/okstra.fish",
        description="Print the completion script for a shell; load it from its startup file.",
        args=(("shell", dict(choices=SHELLS, help="the shell to complete in")),),
    ).set_defaults(handler=_completion, human=lambda out: say(str(out["script"])))  # fmt: skip


def _completion(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    return {"ok": True, "shell": ns.shell, "script": script(ns.shell)}, 0
