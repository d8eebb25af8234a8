"""`okstra doctor`: can this machine run a team? Checked before the first setup, not at step 9.

For each provider: its CLI is on PATH, answers its version command, and — for a
provider that can lead — lists the launch flags okstra relies on (the same checks as
prepare's preflight). tmux is looked for too (the tmux launch backend needs it). Every
failure comes with the command that fixes it; install commands are data in the
provider files (`install = "npm install -g …"`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

from .catalog.loaders import load_catalog
from .catalog.models import LEADER, ProviderSpec
from .environment import Environment
from .launch.preflight import RoleInstance, install_hint, preflight

TMUX_INSTALL = "sudo apt-get install tmux  (macOS: brew install tmux)"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    kind: str  # "provider" | "tool"
    ok: bool
    cli: str | None = None
    path: str | None = None
    version: str | None = None
    can_lead: bool = False
    flags_ok: bool | None = None
    problem: str | None = None
    fix: str | None = None
    install: str | None = None
    disabled: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "ok": self.ok,
            "cli": self.cli,
            "path": self.path,
            "version": self.version,
            "canLead": self.can_lead,
            "launchFlagsOk": self.flags_ok,
            "loggedIn": None,  # not something these CLIs tell offline
            "problem": self.problem,
            "fix": self.fix,
            "install": self.install,
            "disabled": self.disabled,
        }


@dataclass(frozen=True)
class Report:
    checks: tuple[Check, ...]

    @property
    def providers(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.kind == "provider")

    @property
    def ok(self) -> bool:
        """A run can be launched: at least one enabled provider that can lead works."""
        return any(c.ok and c.can_lead and not c.disabled for c in self.providers)

    def summary(self) -> str:
        """One line: `3 of 5 agent CLIs ready (claude, codex, …); tmux 3.3a`."""
        ready = [c.name for c in self.providers if c.ok and not c.disabled]
        total = sum(1 for c in self.providers if not c.disabled)
        tmux = next((c for c in self.checks if c.name == "tmux"), None)
        tmux_text = (
            "" if tmux is None else f"; {tmux.version or 'tmux'}" if tmux.ok else "; no tmux"
        )
        names = f" ({', '.join(ready)})" if ready else ""
        return f"{len(ready)} of {total} agent CLIs ready{names}{tmux_text}"

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "summary": self.summary(),
            "checks": [c.to_json() for c in self.checks],
        }


def _provider_check(
    provider: ProviderSpec, environment: Environment, *, disabled: bool, timeout: float
) -> Check:
    can_lead = LEADER in provider.roles
    role = LEADER if can_lead else provider.roles[0]
    (result,) = preflight(
        [RoleInstance(role=role, ordinal=1, provider=provider, runner="cli-wrapper")],
        environment,
        timeout=timeout,
    )
    fix = result.remedy
    if result.cli_path is None:
        fix = install_hint(provider)
    return Check(
        name=provider.id,
        kind="provider",
        ok=result.ok,
        cli=provider.cli,
        path=result.cli_path,
        version=result.version,
        can_lead=can_lead,
        flags_ok=(result.ok if can_lead and result.version is not None else None),
        problem=result.problem,
        fix=fix,
        install=provider.install,
        disabled=disabled,
    )


def _tmux_check(environment: Environment, timeout: float) -> Check:
    path = environment.which("tmux")
    if path is None:
        return Check(
            name="tmux",
            kind="tool",
            ok=False,
            cli="tmux",
            problem="tmux is not on PATH (the tmux launch backend needs it; exec works without)",
            fix=f"install it: {TMUX_INSTALL}",
            install=TMUX_INSTALL,
        )
    try:
        done = subprocess.run(
            [path, "-V"],
            env=dict(environment.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(
            name="tmux",
            kind="tool",
            ok=False,
            cli="tmux",
            path=path,
            problem=f"`tmux -V` failed: {exc}",
            fix=f"reinstall it: {TMUX_INSTALL}",
        )
    version = done.stdout.strip() or done.stderr.strip() or None
    return Check(
        name="tmux", kind="tool", ok=done.returncode == 0, cli="tmux", path=path, version=version
    )


def diagnose(environment: Environment, *, timeout: float = 10.0) -> Report:
    """Check every provider's CLI and tmux.

    Raises:
        DataFileError: a provider or config file is malformed (named).
    """
    catalog = load_catalog(environment)
    disabled = set(catalog.config.disabled_providers)
    checks = [
        _provider_check(p, environment, disabled=p.id in disabled, timeout=timeout)
        for p in catalog.providers
    ]
    checks.append(_tmux_check(environment, timeout))
    return Report(checks=tuple(checks))


def render(payload: dict[str, Any]) -> str:
    """The report (`Report.to_json()`) for people: one line per check, fixes below."""
    lines = []
    for check in payload["checks"]:
        mark = "ok " if check["ok"] else ("-- " if check["disabled"] else "!! ")
        what = check["version"] or ""
        if check["ok"] and check["path"]:
            what = f"{what}  ({check['path']})".strip()
        if check["disabled"]:
            what = "disabled in config" + (f"; {what}" if what else "")
        lines.append(f"{mark}{check['name']:<12} {what}".rstrip())
        if not check["ok"]:
            lines.append(f"     {check['problem']}")
            if check["fix"]:
                lines.append(f"     fix: {check['fix']}")
    lines.append("")
    lines.append(payload["summary"])
    if not payload["ok"]:
        lines.append("no agent CLI that can lead a run works yet: install one of the above")
    return "\n".join(lines) + "\n"
