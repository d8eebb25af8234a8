"""`okstra doctor`: can this machine run a team? Checked before the first setup, not at step 9.

For each provider: its CLI is on PATH, answers its version command, and — for a
provider that can lead — lists the launch flags okstra relies on (the same checks as
prepare's preflight). tmux is looked for too (the tmux launch backend needs it). Every
failure comes with the command that fixes it; install commands are data in the
provider files (`install = "npm install -g …"`).

Whether a CLI is logged in is told offline where the CLI allows it, by the rules of
the provider file's `[login]` table (an API-key variable that is set, a credentials
file that exists, the CLI's own status command). Only the names of variables and the
paths of files are reported — never a value, never the status command's output. A CLI
that is found but not logged in is not ready.

Each CLI found is named with where it came from: the file (links resolved) and the
PATH entry it was found through. A CLI found through a relative PATH entry
(`node_modules/.bin`, `.`, an empty entry) or an entry inside the current project is
flagged with a warning (`launch.cli_origin`): the project there chooses what runs.

The providers are checked side by side (each check runs the CLI a few times).
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..catalog.loaders import load_catalog
from ..catalog.models import LEADER, LOGIN_FILE_PLACEHOLDER, LoginSpec, ProviderSpec
from ..display import inert
from ..environment import Environment
from ..launch.checks import RoleInstance, install_hint, preflight, run_probe
from ..launch.cli_origin import CliOrigin, locate_cli
from ..records import dataclass

TMUX_INSTALL = "sudo apt-get install tmux  (macOS: brew install tmux)"
# A login status command answers at once, offline; one that does not is not waited on.
_STATUS_TIMEOUT = 5.0


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
    logged_in: bool | None = None  # None: cannot tell offline (or the CLI is missing)
    login: str | None = None  # what told (names and paths only), or what was looked at
    login_fix: str | None = None  # how to log in, when not
    origin: CliOrigin | None = None  # where PATH found it (file, entry, warning)

    @property
    def ready(self) -> bool:
        """Usable for a run: working, and not known to be logged out."""
        return self.ok and self.logged_in is not False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "ok": self.ok,
            "cli": self.cli,
            "path": self.path,
            "resolvedPath": self.origin.resolved if self.origin else None,
            "pathEntry": self.origin.entry if self.origin else None,
            "warning": self.origin.risk if self.origin else None,
            "version": self.version,
            "canLead": self.can_lead,
            "launchFlagsOk": self.flags_ok,
            "ready": self.ready,
            "loggedIn": self.logged_in,
            "login": self.login,
            "loginFix": self.login_fix,
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
        """A run can be launched: an enabled provider that can lead is ready."""
        return any(c.ready and c.can_lead and not c.disabled for c in self.providers)

    @property
    def tmux(self) -> Check | None:
        return next((c for c in self.checks if c.name == "tmux"), None)

    def ready_count(self) -> tuple[int, int]:
        """(ready, enabled) providers."""
        enabled = [c for c in self.providers if not c.disabled]
        return sum(1 for c in enabled if c.ready), len(enabled)

    def summary(self) -> str:
        """One line: `3 of 5 agent CLIs ready (claude, codex, …); tmux 3.3a`."""
        ready = [c.name for c in self.providers if c.ready and not c.disabled]
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
    provider: ProviderSpec,
    environment: Environment,
    *,
    disabled: bool,
    timeout: float,
    cwd: Path | None = None,
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
    logged_in: bool | None = None
    login_text: str | None = None
    login_fix: str | None = None
    if result.cli_path is not None and provider.login is not None:
        logged_in, login_text = logged_in_offline(
            provider.login, result.cli_path, environment, timeout=timeout
        )
        if logged_in is False:
            login_fix = provider.login.how or f"log in with `{provider.cli}`"
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
        logged_in=logged_in,
        login=login_text,
        login_fix=login_fix,
        origin=locate_cli(provider.cli, environment, cwd) if result.cli_path else None,
    )


def _expand_path(template: str, environment: Environment) -> Path:
    """A `[login]` file path: `{env.NAME:-default}` from the environment, `~` = HOME."""

    def value(match: re.Match[str]) -> str:
        return environment.get(match.group(1)) or match.group(2) or ""

    text = LOGIN_FILE_PLACEHOLDER.sub(value, template)
    home = environment.get("HOME") or os.path.expanduser("~")
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    return Path(text)


def _nonempty_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def logged_in_offline(
    login: LoginSpec,
    cli_path: str,
    environment: Environment,
    *,
    timeout: float,
    run_status: bool = True,
) -> tuple[bool | None, str]:
    """Whether the CLI has credentials, told offline by the provider's `[login]` rules.

    Returns:
        (True / False / None = cannot tell, what told or what was looked at). The text
        names variables and paths only — never a value, never the command's output.
    """
    for name in login.env:
        if environment.get(name):
            return True, f"{name} is set"
    files = [_expand_path(f, environment) for f in login.files]
    for path in files:
        if _nonempty_file(path):
            return True, f"credentials in {path}"
    looked = [*login.env, *(str(p) for p in files)]
    if login.status and not run_status:
        return None, f"`{Path(cli_path).name} {' '.join(login.status[1:])}` would tell"
    if login.status:
        argv = (cli_path, *login.status[1:])
        shown = " ".join((Path(cli_path).name, *login.status[1:]))
        try:
            code, out, err = run_probe(argv, environment, min(timeout, _STATUS_TIMEOUT))
        except (OSError, subprocess.TimeoutExpired):
            return None, f"`{shown}` did not answer"
        pattern = login.status_pattern
        answered = not pattern or re.search(pattern, out + err, re.IGNORECASE) is not None
        if answered and code == 0:
            return True, f"`{shown}` says so"
        if answered and code == 1:
            return False, f"`{shown}` says not logged in" + (
                f"; none of {', '.join(looked)}" if looked else ""
            )
        return None, f"`{shown}` gave no answer okstra understands (exit {code})"
    return False, f"none of {', '.join(looked)}"


def _tmux_check(environment: Environment, timeout: float, cwd: Path | None = None) -> Check:
    origin = locate_cli("tmux", environment, cwd)
    path = origin.path if origin is not None else None
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
            origin=origin,
        )
    version = done.stdout.strip() or done.stderr.strip() or None
    ok = done.returncode == 0
    return Check(
        name="tmux", kind="tool", ok=ok, cli="tmux", path=path, version=version, origin=origin
    )


def diagnose(environment: Environment, *, timeout: float = 10.0, cwd: Path | None = None) -> Report:
    """Check every provider's CLI and tmux.

    Args:
        environment: PATH and env the CLIs run with.
        timeout: seconds each command may take.
        cwd: the current directory (default: the process's): a CLI found inside it, or
            through a relative PATH entry, is flagged.

    Raises:
        DataFileError: a provider or config file is malformed (named).
    """
    catalog = load_catalog(environment)
    disabled = set(catalog.config.disabled_providers)
    providers = catalog.providers
    with ThreadPoolExecutor(max_workers=max(1, len(providers) + 1)) as pool:
        futures = [
            pool.submit(
                _provider_check,
                p,
                environment,
                disabled=p.id in disabled,
                timeout=timeout,
                cwd=cwd,
            )
            for p in providers
        ]
        tmux = pool.submit(_tmux_check, environment, timeout, cwd)
        checks = [f.result() for f in futures]
        checks.append(tmux.result())
    return Report(checks=tuple(checks))


def quick_report(environment: Environment, *, cwd: Path | None = None) -> Report:
    """A report that runs nothing: CLIs looked up on PATH, logins told by env and files.

    For the app's start screen (cheap enough for every start); `diagnose` runs the
    CLIs. A CLI found here counts as working; a status command is not run (unknown).

    Raises:
        DataFileError: a provider or config file is malformed (named).
    """
    catalog = load_catalog(environment)
    disabled = set(catalog.config.disabled_providers)
    checks: list[Check] = []
    for provider in catalog.providers:
        origin = locate_cli(provider.cli, environment, cwd)
        path = origin.path if origin is not None else None
        logged_in: bool | None = None
        login_text: str | None = None
        if path is not None and provider.login is not None:
            logged_in, login_text = logged_in_offline(
                provider.login, path, environment, timeout=0, run_status=False
            )
        checks.append(
            Check(
                name=provider.id,
                kind="provider",
                ok=path is not None,
                cli=provider.cli,
                path=path,
                can_lead=LEADER in provider.roles,
                problem=None if path else f"`{provider.cli}` is not on PATH",
                fix=None if path else install_hint(provider),
                install=provider.install,
                disabled=provider.id in disabled,
                logged_in=logged_in,
                login=login_text,
                origin=origin,
            )
        )
    tmux = locate_cli("tmux", environment, cwd)
    checks.append(
        Check(
            name="tmux",
            kind="tool",
            ok=tmux is not None,
            cli="tmux",
            path=tmux.path if tmux else None,
            origin=tmux,
        )
    )
    return Report(checks=tuple(checks))


def _where(check: dict[str, Any]) -> str:
    """Where a CLI came from: `/usr/bin/x (PATH entry /usr/bin)`, with `→ target` when
    the name is a link, or "" when it was not found."""
    path, resolved, entry = check["path"], check.get("resolvedPath"), check.get("pathEntry")
    if not path:
        return ""
    shown = path if resolved in (None, path) else f"{path} → {resolved}"
    if entry is None:
        return shown
    return f"{shown} (PATH entry {entry!r})" if entry == "" else f"{shown} (PATH entry {entry})"


def config_files(environment: Environment, cwd: Path | None = None) -> list[dict[str, Any]]:
    """The config files okstra reads (the project's when `cwd` is in one), as JSON."""
    from ..config import config_files_in_use
    from ..records import to_data

    root = cwd or Path.cwd()
    project = root if (root / ".okstra").is_dir() else None
    return [to_data(f) for f in config_files_in_use(environment.env, project)]


def _config_lines(files: list[dict[str, Any]]) -> list[str]:
    lines = ["config files:"] if files else []
    for item in files:
        state = "in use" if item["present"] else "absent"
        lines.append(f"     {item['scope']:<15} {item['path']} ({state})")
    return lines


def render(payload: dict[str, Any]) -> str:
    """The report (`Report.to_json()`) for people: one line per check, where each CLI
    came from, warnings and fixes below. Every value is shown inert."""
    lines = []
    for check in payload["checks"]:
        mark = "ok " if check["ok"] else ("-- " if check["disabled"] else "!! ")
        what = check["version"] or ""
        if check["disabled"]:
            what = "disabled in config" + (f"; {what}" if what else "")
        if check["ok"] and check.get("loggedIn") is False:
            mark = "-- " if check["disabled"] else "!! "
        lines.append(f"{mark}{check['name']:<12} {what}".rstrip())
        if _where(check):
            lines.append(f"     {_where(check)}")
        if check.get("warning"):
            lines.append(f"     warning: {check['warning']}")
        if not check["ok"]:
            lines.append(f"     {check['problem']}")
            if check["fix"]:
                lines.append(f"     fix: {check['fix']}")
        elif check.get("login"):
            state = {True: "logged in", False: "not logged in"}.get(
                check["loggedIn"], "login unknown"
            )
            lines.append(f"     {state}: {check['login']}")
            if check.get("loginFix"):
                lines.append(f"     fix: {check['loginFix']}")
    lines.extend(_config_lines(payload.get("configFiles") or []))
    lines.append("")
    lines.append(payload["summary"])
    warned = [c["name"] for c in payload["checks"] if c.get("warning")]
    if warned:
        lines.append(
            f"warning: {', '.join(warned)} found through a PATH entry the current project "
            "can fill: check that each is the program you mean to run"
        )
    if not payload["ok"]:
        lines.append(
            "no agent CLI that can lead a run is ready yet: install one of the above "
            "(and log in to it)"
        )
    return inert("\n".join(lines), keep_newlines=True) + "\n"
