"""Whether an agent CLI is ready: found, running, accepting the launch flags, logged in.

One verdict (`cli_readiness`, in `cli.py`) for every command and screen: the wizard,
`okstra team` and `models`, prepare's preflight, `okstra doctor`, `worker start`, the
app, with where PATH finds a CLI and the verdicts recorded between processes; running
a CLI and reading its login are in `probes.py`.
"""

from __future__ import annotations

from .cli import DEFAULT_TIMEOUT, Readiness, check_clis, cli_readiness, install_hint

__all__ = ["DEFAULT_TIMEOUT", "Readiness", "check_clis", "cli_readiness", "install_hint"]
