"""The lead run in the foreground (okstra its parent), watched as a tmux launch is:
what the CLI's `prepare --launch exec` and the app's hand-over both do."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..environment import Environment
from ..launch.watch import early_exit_line, watch_bound
from .lead import run_foreground

__all__ = ["run_watched_foreground"]


def run_watched_foreground(
    run_dir: Path,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    environment: Environment,
    *,
    say: Callable[[str], None],
    resumed: bool = False,
) -> tuple[int, str | None]:
    """Run the lead in the foreground (`run_foreground`, which records its
    end) and watch it as a tmux launch is watched: (its exit status, the
    `early_exit_line` when it ended within the watch's bound, else None). The CLI's
    `prepare --launch exec` and the app's hand-over both run the lead this way.

    Raises:
        OkstraError: the lead could not be started or its start recorded.
    """
    started = time.monotonic()
    code = run_foreground(run_dir, argv, env, cwd, environment, say=say, resumed=resumed)
    said = early_exit_line(code, time.monotonic() - started, str(run_dir), watch_bound(environment))
    return code, said
