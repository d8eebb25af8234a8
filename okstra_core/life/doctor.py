"""`okstra doctor`: can this machine run a team? Each provider's CLI verdict, tmux, Node.js.

Every failure comes with its fix. A CLI found through a relative PATH entry or inside the
current project is flagged (`readiness.cli`): the project there chooses what runs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.loaders import load_catalog
from ..discovery import default_project_root
from ..display import inert
from ..environment import Environment
from ..errors import OkstraError
from ..readiness import Readiness, check_clis
from ..readiness.cli import CliOrigin, locate_cli
from ..readiness.probes import logged_in_offline as logged_in_offline
from ..readiness.probes import run_concurrently
from ..records import config, dataclass, fields_of
from ..trust import TrustVerdict, verdict

if TYPE_CHECKING:
    from ..config import ConfigFile

TMUX_INSTALL = "sudo apt-get install tmux  (macOS: brew install tmux)"
# The agent CLIs installed with npm need this Node.js major version or newer (on Node 20
# npm silently installs an old `claude` release).
NODE_MINIMUM = 22
NODE_INSTALL = (
    f"install Node.js {NODE_MINIMUM} or newer (https://nodejs.org, or `nvm install {NODE_MINIMUM}`)"
)
_ORDER = (
    *("name", "kind", "ok", "cli", "path", "resolved_path", "path_entry", "warning", "version"),
    *("can_lead", "flags_ok", "ready", "logged_in", "login", "login_fix"),
)


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report (its JSON: `records.to_data`)."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"flags_ok": "launchFlagsOk"},
        skip=("origin",),
        views=("resolved_path", "path_entry", "warning", "ready"),
        first=_ORDER,
    )

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
    logged_in: bool | None = None  # None: cannot tell offline (or the CLI is missing)
    login: str | None = None  # what told (names and paths only), or what was looked at
    login_fix: str | None = None  # how to log in, when not
    origin: CliOrigin | None = None  # where PATH found it (file, entry, warning)
    demo: bool = False  # okstra's demo agent: listed, not counted among the agent CLIs

    @property
    def ready(self) -> bool:
        """Usable for a run: working, and not known to be logged out."""
        return self.ok and self.logged_in is not False

    @property
    def resolved_path(self) -> str | None:
        return self.origin.resolved if self.origin else None

    @property
    def path_entry(self) -> str | None:
        return self.origin.entry if self.origin else None

    @property
    def warning(self) -> str | None:
        return self.origin.risk if self.origin else None


@dataclass(frozen=True)
class Report:
    """The doctor's report (its JSON: `records.to_data`: `ok`, `summary`, `checks`)."""

    __pydantic_config__ = config(views=("ok", "summary"), first=("ok", "summary"))

    checks: tuple[Check, ...]

    @property
    def providers(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.kind == "provider")

    @property
    def agents(self) -> tuple[Check, ...]:
        """The providers that run an agent CLI (okstra's demo agent is not one)."""
        return tuple(c for c in self.providers if not c.demo)

    @property
    def ok(self) -> bool:
        """A run can be launched: an enabled agent CLI that can lead is ready."""
        return any(c.ready and c.can_lead and not c.disabled for c in self.agents)

    @property
    def tmux(self) -> Check | None:
        return next((c for c in self.checks if c.name == "tmux"), None)

    def ready_count(self) -> tuple[int, int]:
        """(ready, enabled) providers."""
        enabled = [c for c in self.agents if not c.disabled]
        return sum(1 for c in enabled if c.ready), len(enabled)

    def summary(self) -> str:
        """One line: `3 of 5 agent CLIs ready (claude, codex, …); tmux 3.3a`."""
        ready = [c.name for c in self.agents if c.ready and not c.disabled]
        total = sum(1 for c in self.agents if not c.disabled)
        tmux = self.tmux
        tmux_text = (
            "" if tmux is None else f"; {tmux.version or 'tmux'}" if tmux.ok else "; no tmux"
        )
        names = f" ({', '.join(ready)})" if ready else ""
        return f"{len(ready)} of {total} agent CLIs ready{names}{tmux_text}"


def provider_check(
    verdict: Readiness, *, install: str | None, disabled: bool, demo: bool = False
) -> Check:
    """The doctor's line for one provider's readiness verdict."""
    lead_ok = verdict.works and verdict.flags_problem is None
    problem, fix = verdict.problem, verdict.remedy
    if verdict.works and verdict.flags_problem is not None:
        problem, fix = verdict.flags_problem, verdict.flags_remedy
    return Check(
        name=verdict.provider_id,
        kind="provider",
        ok=lead_ok if verdict.can_lead else verdict.works,
        flags_ok=lead_ok if verdict.can_lead and verdict.version is not None else None,
        problem=problem,
        fix=fix,
        install=install,
        disabled=disabled,
        demo=demo,
        **fields_of(verdict, "cli path version can_lead logged_in login login_fix origin"),
    )


def _tool(
    name: str, environment: Environment, timeout: float, cwd: Path | None
) -> tuple[CliOrigin | None, str | None, str | None]:
    """(origin, first line of `name --version`/`-V`, why it could not be read)."""
    origin = locate_cli(name, environment, cwd)
    if origin is None:
        return None, None, None
    flag = "-V" if name == "tmux" else "--version"
    try:
        done = subprocess.run(
            [origin.path, flag],
            env=dict(environment.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return origin, None, f"`{name} {flag}` failed: {exc}"
    version = done.stdout.strip() or done.stderr.strip() or None
    if done.returncode != 0:
        return origin, None, f"`{name} {flag}` exited with status {done.returncode}"
    return origin, version, None


def _tool_check(
    name: str,
    found: tuple[CliOrigin | None, str | None, str | None],
    *,
    missing: str,
    install: str,
    missing_fix: str,
    fix: str,
) -> Check:
    """The doctor's line of a tool (`_tool`'s finding), `missing` when not on PATH."""
    origin, version, failed = found
    return Check(
        name=name,
        kind="tool",
        ok=origin is not None and failed is None,
        cli=name,
        path=origin.path if origin is not None else None,
        version=version,
        problem=missing if origin is None else failed,
        fix=missing_fix if origin is None else fix if failed else None,
        install=install if origin is None else None,
        origin=origin,
    )


def _tmux_check(environment: Environment, timeout: float, cwd: Path | None = None) -> Check:
    return _tool_check(
        "tmux",
        _tool("tmux", environment, timeout, cwd),
        missing="tmux is not on PATH (the tmux launch backend needs it; exec works without)",
        install=TMUX_INSTALL,
        missing_fix=f"install it: {TMUX_INSTALL}",
        fix=f"reinstall it: {TMUX_INSTALL}",
    )


def _node_check(environment: Environment, timeout: float, cwd: Path | None = None) -> Check:
    """Node.js, which the npm-installed agent CLIs run on: present, `NODE_MINIMUM`+."""
    origin, version, failed = _tool("node", environment, timeout, cwd)
    need = f"the agent CLIs installed with npm need Node.js {NODE_MINIMUM} or newer"
    major = re.match(r"v?(\d+)\.", version or "")
    if origin is not None and failed is None and major is None:
        failed = f"`node --version` said {version!r}, not a version okstra can read"
    elif major is not None and int(major.group(1)) < NODE_MINIMUM:
        failed = (
            f"Node.js {version} is older than {NODE_MINIMUM} ({need}; on older ones npm "
            "silently installs old releases)"
        )
    return _tool_check(
        "node",
        (origin, version, failed),
        missing=f"node is not on PATH ({need})",
        install=NODE_INSTALL,
        missing_fix=NODE_INSTALL,
        fix=f"{NODE_INSTALL}, then reinstall the agent CLIs",
    )


def diagnose(
    environment: Environment, *, timeout: float = 10.0, cwd: Path | None = None, fresh: bool = True
) -> Report:
    """Check every provider's CLI (`readiness.cli_readiness`), tmux and Node.js; with
    `fresh=False` a usable recorded verdict is reused (the start line)."""
    catalog = load_catalog(environment)
    disabled = set(catalog.config.disabled_providers)
    providers = catalog.providers
    tools: list[Check] = []
    verdicts: list[Readiness] = []

    def clis() -> None:
        verdicts.extend(check_clis(providers, environment, fresh=fresh, timeout=timeout, cwd=cwd))

    def tool_checks() -> None:
        tools.extend(
            (_tmux_check(environment, timeout, cwd), _node_check(environment, timeout, cwd))
        )

    run_concurrently([clis, tool_checks], 2)
    checks = [
        provider_check(v, install=p.install, disabled=p.id in disabled, demo=p.demo)
        for p, v in zip(providers, verdicts, strict=True)
    ]
    return Report(checks=(*checks, *tools))


@dataclass(frozen=True)
class GuideEntry:
    """An agent CLI not ready, for a first screen: its `state` (`missing`, `logged out`,
    `not working`) and `todo`, the one thing to do."""

    cli: str
    providers: tuple[str, ...]
    state: str
    can_lead: bool
    install: str | None
    todo: str


def setup_guide(report: Report) -> tuple[GuideEntry, ...]:
    """What stands between this machine and a run, one entry per CLI, lead-capable first."""
    if report.ok:
        return ()
    by_cli: dict[str, list[Check]] = {}
    for check in report.agents:
        if not check.disabled and not check.ready:
            by_cli.setdefault(check.cli or check.name, []).append(check)
    node = next((c for c in report.checks if c.name == "node" and c.kind == "tool"), None)
    # An npm-installed CLI needs a new enough Node.js first: its install line says so.
    node_first = None
    if node is not None and not node.ok:
        here = f"this one is {node.version}" if node.version else "none is on PATH"
        node_first = (
            f"needs Node.js {NODE_MINIMUM} or newer, {here}: `nvm install {NODE_MINIMUM}` first"
        )
    entries = []
    for cli, checks in by_cli.items():
        first = checks[0]
        if first.path is None:
            state, todo = "missing", first.install or first.fix or ""
            if node_first is not None and todo.startswith("npm "):
                todo = f"{todo}  ({node_first})"
        elif not first.ok:
            state, todo = "not working", first.fix or first.problem or ""
        else:
            state, todo = "logged out", first.login_fix or f"log in with `{cli}`"
        providers, can_lead = tuple(c.name for c in checks), any(c.can_lead for c in checks)
        entries.append(GuideEntry(cli, providers, state, can_lead, first.install, todo))
    return tuple(sorted(entries, key=lambda e: not e.can_lead))


@dataclass(frozen=True, kw_only=True)
class DoctorReply:
    """`okstra doctor`'s document: the report's keys, the project's trust, the config files."""

    __pydantic_config__ = config(camel_case=True, spread="report", omit_none=("project_trust",))

    report: Report
    project_trust: TrustVerdict | None = None
    config_files: tuple[ConfigFile, ...] = ()


def _where(check: Check) -> str:
    """Where a CLI came from: `/usr/bin/x → target (PATH entry /usr/bin)`, "" if not found."""
    path, resolved, entry = check.path, check.resolved_path, check.path_entry
    if not path:
        return ""
    shown = path if resolved in (None, path) else f"{path} → {resolved}"
    if entry is None:
        return shown
    return f"{shown} (PATH entry {entry!r})" if entry == "" else f"{shown} (PATH entry {entry})"


def config_files(environment: Environment, cwd: Path | None = None) -> tuple[ConfigFile, ...]:
    """The config files okstra reads (the project's when `cwd` is in one)."""
    from ..config import config_files_in_use

    root = cwd or Path.cwd()
    project = root if (root / ".okstra").is_dir() else None
    return tuple(config_files_in_use(environment.env, project))


def project_trust(environment: Environment, cwd: Path | None = None) -> TrustVerdict:
    """The current project's trust verdict (`okstra_core.trust`)."""
    try:
        root = default_project_root(cwd or Path.cwd(), environment.env)
        return verdict(root, environment.env)
    except OkstraError as exc:
        return TrustVerdict(project=str(cwd or Path.cwd()), trusted=False, why=exc.render())


def _check_lines(check: Check) -> list[str]:
    mark = "ok " if check.ok else ("-- " if check.disabled else "!! ")
    what = check.version or ""
    if check.disabled:
        what = "disabled in config" + (f"; {what}" if what else "")
    if check.ok and check.logged_in is False:
        mark = "-- " if check.disabled else "!! "
    lines = [f"{mark}{check.name:<12} {what}".rstrip()]
    if _where(check):
        lines.append(f"     {_where(check)}")
    if check.warning:
        lines.append(f"     warning: {check.warning}")
    if not check.ok:
        lines.append(f"     {check.problem}")
        if check.fix:
            lines.append(f"     fix: {check.fix}")
    elif check.login:
        state = {None: "login unknown", True: "logged in", False: "not logged in"}[check.logged_in]
        lines.append(f"     {state}: {check.login}")
        if check.login_fix:
            lines.append(f"     fix: {check.login_fix}")
    return lines


def render(shown: Report | DoctorReply) -> str:
    """The report for people: one line per check, then where, warnings and fixes (inert)."""
    reply = shown if isinstance(shown, DoctorReply) else DoctorReply(report=shown)
    report = reply.report
    lines = [line for check in report.checks for line in _check_lines(check)]
    trust = reply.project_trust
    if trust is not None:
        mark = "ok " if trust.trusted else "-- "
        lines += [f"{mark}project      {trust.project}", f"     {trust.why}"]
    if reply.config_files:
        lines.append("config files:")
    for item in reply.config_files:
        state = "in use" if item.present else "absent"
        lines.append(f"     {item.scope:<15} {item.path} ({state})")
    lines += ["", report.summary()]
    warned = [c.name for c in report.checks if c.warning]
    if warned:
        lines.append(
            f"warning: {', '.join(warned)} found through a PATH entry the current project "
            "can fill: check that each is the program you mean to run"
        )
    if not report.ok:
        lines.append(
            "no agent CLI that can lead a run is ready yet: install one of the above "
            "(and log in to it)"
        )
    return inert("\n".join(lines), keep_newlines=True) + "\n"
