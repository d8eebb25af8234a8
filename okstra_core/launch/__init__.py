"""Launching the lead CLI: preflight, argv from templates, backends, resume sheet.

No shell string is ever built: every argv is a list handed to `exec`/`tmux` (after
`--`), so prompt text, paths and model names reach the CLI untouched. Each name is
documented in its module (`plan`, `backends`, `checks`, `session`, `sheet`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from ..catalog.argv import render_argv as render_argv
    from .backends import LaunchResult as LaunchResult
    from .backends import exec_now as exec_now
    from .backends import start as start
    from .checks import PreflightResult as PreflightResult
    from .checks import RoleInstance as RoleInstance
    from .checks import preflight as preflight
    from .plan import LaunchPlan as LaunchPlan
    from .plan import choose_backend as choose_backend
    from .plan import plan_launch as plan_launch
    from .plan import tmux_commands as tmux_commands
    from .plan import worker_argv as worker_argv
    from .session import discover_session as discover_session
    from .session import discover_sessions as discover_sessions
    from .session import find_session_once as find_session_once
    from .session import mint_session_id as mint_session_id
    from .sheet import PENDING as PENDING
    from .sheet import RESUME_JSON as RESUME_JSON
    from .sheet import ResumeCommand as ResumeCommand
    from .sheet import ResumeEntry as ResumeEntry
    from .sheet import ResumeSheet as ResumeSheet
    from .sheet import find_okstra as find_okstra
    from .sheet import read_resume_sheet as read_resume_sheet
    from .sheet import rebuild_resume_command as rebuild_resume_command
    from .sheet import render_resume_sheet as render_resume_sheet
    from .sheet import write_resume_sheet as write_resume_sheet

# Names load on first use: planning a launch (`plan`, `sheet`) never imports
# what starts the lead (`backends`, `foreground`), so `--launch none` never loads it.
_LAZY = by_module(
    {
        "..catalog.argv": ("render_argv",),
        ".backends": ("LaunchResult", "exec_now", "start"),
        ".plan": ("LaunchPlan", "choose_backend", "plan_launch", "tmux_commands", "worker_argv"),
        ".checks": ("PreflightResult", "RoleInstance", "preflight"),
        ".sheet": (
            "PENDING",
            "RESUME_JSON",
            "ResumeCommand",
            "ResumeEntry",
            "ResumeSheet",
            "find_okstra",
            "read_resume_sheet",
            "rebuild_resume_command",
            "render_resume_sheet",
            "write_resume_sheet",
        ),
        ".session": (
            "discover_session",
            "discover_sessions",
            "find_session_once",
            "mint_session_id",
        ),
    }
)


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = sorted(_LAZY)
