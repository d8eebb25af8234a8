"""Preflight: before anything is written, check each CLI okstra will spawn (SPEC §8).

For every role instance whose runner spawns a CLI: the CLI is on PATH and answers its
version command within a timeout; for the leader, every `launch.required_flags` entry
appears in the output of its help command. Each CLI is run once however many
instances use it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from okstra_core.catalog.models import LEADER, ProviderSpec, Runner
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.launch.argv import render_argv

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class RoleInstance:
    """One role instance as preflight sees it.

    Attributes:
        role: the role id (`leader`, `analyser`, …).
        ordinal: 1-based instance number.
        provider: the provider of its model.
        runner: how it runs (`binding.runner`).
    """

    role: str
    ordinal: int
    provider: ProviderSpec
    runner: Runner

    @property
    def label(self) -> str:
        return f"{self.role}#{self.ordinal}"

    @property
    def spawns_cli(self) -> bool:
        """The leader is spawned unless the host session is the lead; others via cli-wrapper."""
        if self.role == LEADER:
            return self.runner != "current-session"
        return self.runner == "cli-wrapper"


@dataclass(frozen=True)
class PreflightResult:
    """The verdict for one role instance."""

    instance: str
    role: str
    ordinal: int
    provider_id: str
    cli: str
    ok: bool
    cli_path: str | None = None
    version: str | None = None
    problem: str | None = None
    remedy: str | None = None

    def message(self) -> str:
        """One line for a person: `leader#1: claude: <problem> — <remedy>`."""
        if self.ok:
            return f"{self.instance}: {self.cli}: ok ({self.version or 'version unknown'})"
        return f"{self.instance}: {self.cli}: {self.problem} — {self.remedy}"

    def to_json(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "role": self.role,
            "ordinal": self.ordinal,
            "provider": self.provider_id,
            "cli": self.cli,
            "ok": self.ok,
            "cliPath": self.cli_path,
            "version": self.version,
            "problem": self.problem,
            "remedy": self.remedy,
            "message": self.message(),
        }


@dataclass(frozen=True)
class _Probe:
    cli_path: str | None
    version: str | None
    problem: str | None
    remedy: str | None
    help_text: str | None = None


def install_hint(provider: ProviderSpec) -> str:
    """What to do about a CLI that is not on PATH: its install command when known."""
    if provider.install:
        return f"install it with `{provider.install}` (or put `{provider.cli}` on PATH)"
    return f"install the {provider.display_label} CLI (`{provider.cli}`) or put it on PATH"


def _run(argv: tuple[str, ...], environment: Environment, timeout: float) -> tuple[int, str, str]:
    done = subprocess.run(
        list(argv),
        env=dict(environment.env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _first_line(*texts: str) -> str:
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def _command(
    provider: ProviderSpec, template: tuple[str, ...], cli_path: str, field: str
) -> tuple[str, ...]:
    source = provider.source or f"provider {provider.id}"
    return render_argv(template, {"cli": cli_path}, {}, source=source, field=field)


def _probe_version(provider: ProviderSpec, environment: Environment, timeout: float) -> _Probe:
    cli_path = environment.which(provider.cli)
    if cli_path is None:
        return _Probe(
            None,
            None,
            f"`{provider.cli}` is not on PATH",
            install_hint(provider) + ", or choose a model of another provider for this role",
        )
    try:
        argv = _command(provider, provider.launch.version, cli_path, "launch.version")
    except OkstraError as exc:
        return _Probe(
            cli_path, None, f"bad version command: {exc.render()}", "fix the provider file"
        )
    shown = shlex.join([provider.cli, *argv[1:]])
    try:
        code, out, err = _run(argv, environment, timeout)
    except subprocess.TimeoutExpired:
        return _Probe(
            cli_path,
            None,
            f"`{shown}` did not answer within {timeout:g} s",
            f"check that `{cli_path}` runs in a terminal, then retry",
        )
    except OSError as exc:
        return _Probe(
            cli_path,
            None,
            f"`{shown}` could not run: {exc.strerror or exc}",
            f"reinstall `{provider.cli}` or fix its permissions",
        )
    if code != 0:
        said = _first_line(err, out)
        return _Probe(
            cli_path,
            None,
            f"`{shown}` exited with status {code}" + (f": {said}" if said else ""),
            f"check that `{cli_path}` runs in a terminal, then retry",
        )
    return _Probe(cli_path, _first_line(out, err) or None, None, None)


def _probe_flags(
    provider: ProviderSpec, probe: _Probe, environment: Environment, timeout: float
) -> _Probe:
    flags = provider.launch.required_flags
    if not flags or probe.problem is not None or probe.cli_path is None:
        return probe
    template = provider.launch.help or ("{cli}", "--help")
    try:
        argv = _command(provider, template, probe.cli_path, "launch.help")
    except OkstraError as exc:
        return _Probe(
            probe.cli_path,
            probe.version,
            f"bad help command: {exc.render()}",
            "fix the provider file",
        )
    shown = shlex.join([provider.cli, *argv[1:]])
    try:
        _code, out, err = _run(argv, environment, timeout)
    except subprocess.TimeoutExpired:
        return _Probe(
            probe.cli_path,
            probe.version,
            f"`{shown}` did not answer within {timeout:g} s",
            f"check that `{probe.cli_path}` runs in a terminal, then retry",
        )
    except OSError as exc:
        return _Probe(
            probe.cli_path,
            probe.version,
            f"`{shown}` could not run: {exc}",
            f"reinstall `{provider.cli}`",
        )
    text = out + "\n" + err
    # A flag counts only as a whole word: `--model` is not found in `--model-provider`.
    missing = [
        flag for flag in flags if re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is None
    ]
    if missing:
        return _Probe(
            probe.cli_path,
            probe.version,
            f"this version ({probe.version or 'unknown'}) does not list "
            f"{', '.join(missing)} in `{shown}`",
            f"upgrade `{provider.cli}` to a version that supports them, or choose a leader "
            "model of another provider",
        )
    return probe


def preflight(
    instances: Iterable[RoleInstance],
    environment: Environment,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[PreflightResult]:
    """Check every CLI okstra will spawn; one result per role instance that spawns one.

    Args:
        instances: the run's role instances (leader first, by convention).
        environment: PATH and env the CLIs run with.
        timeout: seconds each version/help command may take.

    Returns:
        Results in the order of `instances`; instances that spawn nothing are left out.
    """
    versions: dict[str, _Probe] = {}
    helps: dict[str, _Probe] = {}
    results: list[PreflightResult] = []
    for inst in instances:
        if not inst.spawns_cli:
            continue
        provider = inst.provider
        probe = versions.get(provider.id)
        if probe is None:
            probe = versions[provider.id] = _probe_version(provider, environment, timeout)
        if inst.role == LEADER:
            checked = helps.get(provider.id)
            if checked is None:
                checked = helps[provider.id] = _probe_flags(provider, probe, environment, timeout)
            probe = checked
        results.append(
            PreflightResult(
                instance=inst.label,
                role=inst.role,
                ordinal=inst.ordinal,
                provider_id=provider.id,
                cli=provider.cli,
                ok=probe.problem is None,
                cli_path=probe.cli_path,
                version=probe.version,
                problem=probe.problem,
                remedy=probe.remedy,
            )
        )
    return results
