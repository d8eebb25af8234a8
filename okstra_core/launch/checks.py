"""Preflight: before anything is written, check each CLI okstra will spawn.

For every role instance whose runner spawns a CLI: the CLI is on PATH and answers its
version command within a timeout; for the leader, every `launch.required_flags` entry
appears in the output of its help command. Each CLI is run once however many
instances use it.

The probes run concurrently (a CLI on Node takes a few tenths of a second just to
start): every version command and the leader's help command at once, so the checks
take about as long as the slowest single probe. Each probe runs in its own process
group and is bounded by the timeout: when it expires the whole group is killed, so a
CLI that leaves a child holding its output open cannot stall preflight. Results come
back in the order of the instances whatever order the probes finish in.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, TypeVar

from okstra_core.catalog.models import LEADER, ProviderSpec, Runner
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.launch.argv import render_argv

from ..records import config, dataclass
from .cli_origin import locate_cli, warning_line

DEFAULT_TIMEOUT = 10.0
# At most this many probes run at once (a team names a handful of providers).
MAX_PARALLEL_PROBES = 8
# After a timeout kill, how long the killed group gets to close its pipes.
_REAP_GRACE = 2.0


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
    """The verdict for one role instance (its data ends with the `message`)."""

    __pydantic_config__ = config(
        camel_case=True, aliases={"provider_id": "provider"}, views=("message",)
    )

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
    # The CLI was found through a PATH entry the current project can fill (see
    # `cli_origin`): run all the same, and said.
    warning: str | None = None

    def message(self) -> str:
        """One line for a person: `leader#1: claude: <problem> — <remedy>`."""
        said = f"; warning: {self.warning}" if self.warning else ""
        if self.ok:
            return f"{self.instance}: {self.cli}: ok ({self.version or 'version unknown'}){said}"
        return f"{self.instance}: {self.cli}: {self.problem} — {self.remedy}{said}"


@dataclass(frozen=True)
class _Probe:
    """What probing one CLI found: where it is, its version, or what is wrong."""

    cli_path: str | None
    version: str | None
    problem: str | None
    remedy: str | None


def install_hint(provider: ProviderSpec) -> str:
    """What to do about a CLI that is not on PATH: its install command when known."""
    if provider.install:
        return f"install it with `{provider.install}` (or put `{provider.cli}` on PATH)"
    return f"install the {provider.display_label} CLI (`{provider.cli}`) or put it on PATH"


def _run(argv: tuple[str, ...], environment: Environment, timeout: float) -> tuple[int, str, str]:
    """Run one probe; on timeout kill its whole process group and raise `TimeoutExpired`."""
    proc = subprocess.Popen(
        list(argv),
        env=dict(environment.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise
    except BaseException:
        _kill_group(proc)
        raise
    return proc.returncode, out, err


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the probe and everything it started; reap it without waiting on its pipes."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:  # already gone (or its group is): kill the process itself
        proc.kill()
    try:
        proc.communicate(timeout=_REAP_GRACE)
    except subprocess.TimeoutExpired:
        # A descendant that left the group still holds a pipe: stop reading it.
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()


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


def _probe_version(
    provider: ProviderSpec, cli_path: str | None, environment: Environment, timeout: float
) -> _Probe:
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


@dataclass(frozen=True)
class _Help:
    """What the leader's help command said (`text`), or why it could not be read."""

    shown: str = ""
    text: str | None = None
    problem: str | None = None
    remedy: str | None = None


def _probe_help(
    provider: ProviderSpec, cli_path: str | None, environment: Environment, timeout: float
) -> _Help:
    """Run the help command of a provider whose leader needs flags (nothing otherwise)."""
    if not provider.launch.required_flags or cli_path is None:
        return _Help()
    template = provider.launch.help or ("{cli}", "--help")
    try:
        argv = _command(provider, template, cli_path, "launch.help")
    except OkstraError as exc:
        return _Help(problem=f"bad help command: {exc.render()}", remedy="fix the provider file")
    shown = shlex.join([provider.cli, *argv[1:]])
    try:
        _code, out, err = _run(argv, environment, timeout)
    except subprocess.TimeoutExpired:
        return _Help(
            shown,
            problem=f"`{shown}` did not answer within {timeout:g} s",
            remedy=f"check that `{cli_path}` runs in a terminal, then retry",
        )
    except OSError as exc:
        return _Help(
            shown,
            problem=f"`{shown}` could not run: {exc}",
            remedy=f"reinstall `{provider.cli}`",
        )
    return _Help(shown, out + "\n" + err)


def _check_flags(provider: ProviderSpec, probe: _Probe, help_: _Help) -> _Probe:
    """The leader's verdict: the version probe's, else the help command's, else the flags'."""
    flags = provider.launch.required_flags
    if not flags or probe.problem is not None or probe.cli_path is None:
        return probe
    if help_.problem is not None:
        return _Probe(probe.cli_path, probe.version, help_.problem, help_.remedy)
    text = help_.text or ""
    # A flag counts only as a whole word: `--model` is not found in `--model-provider`.
    missing = [
        flag for flag in flags if re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is None
    ]
    if missing:
        return _Probe(
            probe.cli_path,
            probe.version,
            f"this version ({probe.version or 'unknown'}) does not list "
            f"{', '.join(missing)} in `{help_.shown}`",
            f"upgrade `{provider.cli}` to a version that supports them, or choose a leader "
            "model of another provider",
        )
    return probe


_T = TypeVar("_T")


def run_concurrently(jobs: Sequence[Callable[[], _T]], limit: int) -> list[_T]:
    """Run `jobs` on up to `limit` threads; their results in order.

    The first exception a job raised is raised here once every job has ended. Plain
    threads: a process that only preflights has no use for an executor's machinery
    (`concurrent.futures` imports `logging`).
    """
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    pending = iter(range(len(jobs)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = jobs[index]()
            except BaseException as exc:  # handed to the caller below
                with lock:
                    errors.append(exc)

    threads = [
        threading.Thread(target=worker, name=f"okstra-preflight-{n}", daemon=True)
        for n in range(max(1, min(limit, len(jobs))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def preflight(
    instances: Iterable[RoleInstance],
    environment: Environment,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[PreflightResult]:
    """Check every CLI okstra will spawn; one result per role instance that spawns one.

    Every probe runs at once (the leader's help command too, without waiting for its
    version), each bounded by `timeout`, so the whole check takes about as long as
    its slowest probe.

    Args:
        instances: the run's role instances (leader first, by convention).
        environment: PATH and env the CLIs run with.
        timeout: seconds each version/help command may take.

    Returns:
        Results in the order of `instances`; instances that spawn nothing are left out.
    """
    spawning = [inst for inst in instances if inst.spawns_cli]
    providers: dict[str, ProviderSpec] = {}
    leaders: set[str] = set()
    for inst in spawning:
        providers.setdefault(inst.provider.id, inst.provider)
        if inst.role == LEADER:
            leaders.add(inst.provider.id)
    origins = {pid: locate_cli(p.cli, environment) for pid, p in providers.items()}
    paths = {pid: origin.path if origin else None for pid, origin in origins.items()}

    version_ids = list(providers)
    help_ids = sorted(leaders)
    jobs: list[Callable[[], Any]] = [
        partial(_probe_version, providers[pid], paths[pid], environment, timeout)
        for pid in version_ids
    ]
    jobs += [
        partial(_probe_help, providers[pid], paths[pid], environment, timeout) for pid in help_ids
    ]
    done = run_concurrently(jobs, MAX_PARALLEL_PROBES)
    versions: dict[str, _Probe] = dict(zip(version_ids, done[: len(version_ids)], strict=True))
    helps: dict[str, _Help] = dict(zip(help_ids, done[len(version_ids) :], strict=True))

    def verdict(inst: RoleInstance) -> _Probe:
        version = versions[inst.provider.id]
        if inst.role != LEADER:
            return version
        return _check_flags(inst.provider, version, helps[inst.provider.id])

    results: list[PreflightResult] = []
    for inst in spawning:
        probe = verdict(inst)
        results.append(
            PreflightResult(
                instance=inst.label,
                role=inst.role,
                ordinal=inst.ordinal,
                provider_id=inst.provider.id,
                cli=inst.provider.cli,
                ok=probe.problem is None,
                cli_path=probe.cli_path,
                version=probe.version,
                problem=probe.problem,
                remedy=probe.remedy,
                warning=warning_line(origins[inst.provider.id]),
            )
        )
    return results


def run_probe(
    argv: tuple[str, ...], environment: Environment, timeout: float
) -> tuple[int, str, str]:
    """Run a probe command (no stdin, own process group, killed on timeout).

    Returns:
        (exit status, stdout, stderr).

    Raises:
        OSError: it could not start.
        subprocess.TimeoutExpired: it ran longer than `timeout` (it was killed).
    """
    return _run(argv, environment, timeout)
