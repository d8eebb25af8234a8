"""Is an agent CLI ready? The one verdict every screen and command reads.

`cli_readiness` checks that a provider's CLI is found on PATH (`origin`), that its version
command answers within the timeout, that (for a provider that can lead) its help lists
every `launch.required_flags` entry as a whole word, and that it is not known to be logged
out (`login.py`); "cannot tell" is ready, with `Readiness.login_note`.

Running a CLI costs about a second of CPU on Node, so a verdict is recorded (derived
data) keyed by everything it follows from: the provider's version, help, flag and login
rules; the CLI file (resolved path, size, mtime, inode); which login variables are set
(names only) and the credentials files' state. A record only makes the verdict faster,
never different: it is used while younger than `MAX_AGE` (a keychain login may have
changed; using it never makes it younger) and only when it cannot have turned since;
`fresh=True` (the doctor) always runs the CLI.

A relative PATH entry (`node_modules/.bin`, `.`, or an empty one) or an absolute one
inside the current project (the current directory and the nearest parent holding
`.okstra` or `.git`, unless that is home or above) holds what the project ships. okstra
does not refuse such a CLI (it is the person's own configuration) but always warns
(`CliOrigin.risk`).
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from .. import derived
from ..catalog.argv import render_argv
from ..catalog.models import LEADER, ProviderSpec
from ..environment import Environment
from ..errors import OkstraError
from ..paths import user_dirs
from ..records import config, dataclass
from .probes import (
    MAX_PARALLEL_PROBES,
    expand_path,
    first_line,
    login_fix,
    run_concurrently,
    run_probe,
    told_by_evidence,
    told_by_status,
)

DEFAULT_TIMEOUT = 10.0

MAX_AGE = 3600.0
KIND = derived.Kind("readiness", keep=32, code=("readiness/cli.py", "readiness/probes.py"))


class Verdict(NamedTuple):
    """What running the CLI told (see `Readiness` for the fields)."""

    version: str | None
    problem: str | None
    remedy: str | None
    flags_problem: str | None
    flags_remedy: str | None
    logged_in: bool | None
    login: str | None
    at: float = 0.0


def _stat(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_mode:o}"


def key_for(provider: ProviderSpec, resolved: str, environment: Environment) -> str:
    """The key of the verdict on this CLI file with this login evidence."""
    launch = provider.launch
    parts: list[str | None] = [
        provider.id,
        repr((launch.version, launch.help, launch.required_flags, provider.roles)),
        resolved,
        _stat(resolved),
    ]
    login = provider.login
    if login is not None:
        parts.append(repr((login.env, login.files, login.status, login.status_pattern)))
        parts += [f"{name}={'set' if environment.get(name) else 'unset'}" for name in login.env]
        parts += [_stat(str(expand_path(f, environment))) for f in login.files]
    return derived.key(KIND, *parts)


def recall(key: str, environment: Environment) -> Verdict | None:
    """The recorded verdict under `key`, unless it is older than `MAX_AGE`."""
    verdict = derived.recall_value(user_dirs(environment.env).cache, KIND, key, Verdict)
    if verdict is None or not 0 <= time.time() - verdict.at <= MAX_AGE:
        return None
    return verdict


def keep_if_new(key: str, verdict: Verdict, kept: Verdict | None, environment: Environment) -> None:
    """Record `verdict` (best effort) unless the same one is kept and under half its age."""
    same = kept is not None and kept._replace(at=0.0) == verdict._replace(at=0.0)
    if same and kept is not None and time.time() - kept.at < MAX_AGE / 2:
        return
    cache = user_dirs(environment.env).cache
    derived.keep_value(cache, KIND, key, verdict._replace(at=time.time()))


_PROJECT_MARKERS = (".okstra", ".git")


@dataclass(frozen=True)
class CliOrigin:
    """Where PATH found one CLI: what is run (`path`), through which `entry` ("" the empty
    one, None when not looked up on PATH), the file (`resolved`), and the entry's `risk`."""

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
    """Where `command` is found on `environment`'s PATH from `cwd` (None: not found)."""
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


@dataclass(frozen=True)
class CliLookup:
    """Which CLI a provider runs, and where PATH found it (`path` None: not found)."""

    provider_id: str
    cli: str
    can_lead: bool
    path: str | None = None
    origin: CliOrigin | None = None


@dataclass(frozen=True)
class Readiness(CliLookup):
    """The verdict on one provider's CLI (see the module).

    `can_lead`: the provider has the leader role, so its launch flags are checked.
    `problem`/`remedy`: why it does not run and what to do; `flags_problem`/`flags_remedy`:
    its help lacks a launch flag (or failed). `logged_in` None: cannot tell or not checked;
    `login`: what told (variable names and paths only) or what was looked at.
    """

    __pydantic_config__ = config(
        camel_case=True, aliases={"provider_id": "provider"}, skip=("origin",), views=("ready",)
    )

    version: str | None = None
    problem: str | None = None
    remedy: str | None = None
    flags_problem: str | None = None
    flags_remedy: str | None = None
    logged_in: bool | None = None
    login: str | None = None
    login_fix: str | None = None

    @property
    def works(self) -> bool:
        """Found and answering (whatever its flags and login)."""
        return self.path is not None and self.problem is None

    def usable(self, *, lead: bool) -> bool:
        """Ready to run a role instance: as the lead (`lead`), its flags count too."""
        if not self.works or self.logged_in is False:
            return False
        return not lead or self.flags_problem is None

    @property
    def ready(self) -> bool:
        """Ready for every role of its provider (the leader's flags included)."""
        return self.usable(lead=self.can_lead)

    def why_not(self, *, lead: bool) -> tuple[str, str] | None:
        """(what is wrong, what to do) for an instance (`lead`), or None when usable."""
        if self.path is None or self.problem is not None:
            return (self.problem or f"`{self.cli}` is not on PATH", self.remedy or "")
        if lead and self.flags_problem is not None:
            return self.flags_problem, self.flags_remedy or ""
        if self.logged_in is False:
            return f"`{self.cli}` is not logged in", self.login_fix or ""
        return None

    def refusal(self, *, lead: bool) -> tuple[str, str] | None:
        """`why_not` as the preflight and the wizard's confirmation say it (another
        provider offered when the CLI is not on PATH)."""
        wrong = self.why_not(lead=lead)
        if wrong is None:
            return None
        problem, remedy = wrong
        if self.path is None:
            remedy = f"{remedy}, or choose a model of another provider for this role"
        return problem, remedy

    @property
    def login_note(self) -> str | None:
        """A line when the CLI runs but no `[login]` rule told whether it is logged in."""
        if not self.works or self.logged_in is not None or self.login is None:
            return None
        return (
            f"okstra cannot tell whether `{self.cli}` is logged in ({self.login}); "
            "it may ask you to log in when it starts"
        )

    @property
    def warning(self) -> str | None:
        """A line about a PATH entry the current project can fill (None if not)."""
        origin = self.origin
        if origin is None or origin.risk is None:
            return None
        return f"`{origin.command}` is {origin.resolved}, {origin.risk}"


def install_hint(provider: ProviderSpec) -> str:
    """What to do about a CLI that is not on PATH: its install command when known."""
    if provider.install:
        return f"install it with `{provider.install}` (or put `{provider.cli}` on PATH)"
    return f"install the {provider.display_label} CLI (`{provider.cli}`) or put it on PATH"


def _answer(
    provider: ProviderSpec,
    template: tuple[str, ...],
    field: str,
    cli_path: str,
    environment: Environment,
    timeout: float,
) -> tuple[str, tuple[int, str, str] | None, str | None, str | None]:
    """Run one of the CLI's commands: (shown, (code, out, err) or None, problem, remedy)."""
    source = provider.source or f"provider {provider.id}"
    try:
        argv = render_argv(template, {"cli": cli_path}, {}, source=source, field=field)
    except OkstraError as exc:
        return "", None, f"bad {field} command: {exc.render()}", "fix the provider file"
    shown = shlex.join([provider.cli, *argv[1:]])
    try:
        return shown, run_probe(argv, environment, timeout), None, None
    except TimeoutError:
        problem = f"`{shown}` did not answer within {timeout:g} s"
        return shown, None, problem, f"check that `{cli_path}` runs in a terminal, then retry"
    except OSError as exc:
        problem = f"`{shown}` could not run: {exc.strerror or exc}"
        return shown, None, problem, f"reinstall `{provider.cli}` or fix its permissions"


def _version(
    provider: ProviderSpec, cli_path: str, environment: Environment, timeout: float
) -> tuple[str | None, str | None, str | None]:
    """(version, problem, remedy) from the version command."""
    shown, done, problem, remedy = _answer(
        provider, provider.launch.version, "launch.version", cli_path, environment, timeout
    )
    if done is None:
        return None, problem, remedy
    code, out, err = done
    if code != 0:
        said = first_line(err, out)
        problem = f"`{shown}` exited with status {code}" + (f": {said}" if said else "")
        return None, problem, f"check that `{cli_path}` runs in a terminal, then retry"
    return first_line(out, err) or None, None, None


def _flags(
    provider: ProviderSpec, cli_path: str, environment: Environment, timeout: float
) -> tuple[str, tuple[str, ...], str | None, str | None]:
    """(the help command shown, the launch flags its output lacks, problem, remedy)."""
    flags = provider.launch.required_flags
    if not flags or LEADER not in provider.roles:
        return "", (), None, None
    template = provider.launch.help or ("{cli}", "--help")
    shown, done, problem, remedy = _answer(
        provider, template, "launch.help", cli_path, environment, timeout
    )
    if done is None:
        return shown, (), problem, remedy
    text = done[1] + "\n" + done[2]
    # A flag counts only as a whole word: `--model` is not found in `--model-provider`.
    missing = [f for f in flags if re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text) is None]
    return shown, tuple(missing), None, None


def _probe(
    provider: ProviderSpec,
    path: str,
    environment: Environment,
    timeout: float,
    told: bool | None,
    looked: str,
) -> Verdict:
    """Run the CLI: version, launch flags and (when nothing else told) login status."""
    jobs: list[Callable[[], Any]] = [
        partial(_version, provider, path, environment, timeout),
        partial(_flags, provider, path, environment, timeout),
    ]
    login = provider.login
    if login is not None and told is None:
        jobs.append(partial(told_by_status, login, path, environment, looked, timeout=timeout))
    done = run_concurrently(jobs, MAX_PARALLEL_PROBES)
    (version, problem, remedy), (shown, missing, flags_problem, flags_remedy) = done[0], done[1]
    if missing:
        flags_problem = (
            f"this version ({version or 'unknown'}) does not list {', '.join(missing)} in `{shown}`"
        )
        flags_remedy = (
            f"upgrade `{provider.cli}` to a version that supports them, or choose a leader "
            "model of another provider"
        )
    status: tuple[bool | None, str | None] = done[2] if len(done) > 2 else (None, None)
    if problem is not None:
        flags_problem = flags_remedy = None  # it does not run: its help says nothing
    return Verdict(version, problem, remedy, flags_problem, flags_remedy, status[0], status[1])


def _reused(
    kept: Verdict | None,
    provider: ProviderSpec,
    path: str,
    environment: Environment,
    told: bool | None,
    looked: str,
) -> Verdict | None:
    """The recorded verdict as far as it cannot have turned since, or None (probe).

    A CLI that did not run is run again; a logout its status command told is asked again
    (a login leaves nothing the key sees), keeping the recorded version and flags.
    """
    if kept is None or kept.problem is not None:
        return None
    login = provider.login
    if kept.logged_in is False and told is None and login is not None and login.status:
        status = told_by_status(login, path, environment, looked, timeout=DEFAULT_TIMEOUT)
        return kept._replace(logged_in=status[0], login=status[1])
    return kept


def cli_readiness(
    provider: ProviderSpec,
    environment: Environment,
    *,
    fresh: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
) -> Readiness:
    """Whether `provider`'s CLI is ready; never raises for what the CLI does.

    Args:
        fresh: run the CLI even when a usable verdict is recorded (the doctor).
    """
    base = Readiness(provider.id, provider.cli, can_lead=LEADER in provider.roles)
    origin = locate_cli(provider.cli, environment, cwd)
    if origin is None:
        problem = f"`{provider.cli}` is not on PATH"
        return replace(base, problem=problem, remedy=install_hint(provider))
    told, text = told_by_evidence(provider.login, environment) if provider.login else (None, "")
    key = key_for(provider, origin.resolved, environment)
    kept = recall(key, environment)
    verdict = None if fresh else _reused(kept, provider, origin.path, environment, told, text)
    if verdict is None:
        verdict = _probe(provider, origin.path, environment, timeout, told, text)
        keep_if_new(key, verdict, kept, environment)
    if told:
        verdict = verdict._replace(logged_in=told, login=text)
    found = verdict._asdict()
    del found["at"]
    fix = None
    if provider.login is not None and verdict.logged_in is False:
        fix = login_fix(provider.login, provider.cli)
    return replace(base, path=origin.path, origin=origin, login_fix=fix, **found)


def check_clis(
    providers: Iterable[ProviderSpec],
    environment: Environment,
    *,
    fresh: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
) -> list[Readiness]:
    """`cli_readiness` of each provider, side by side; in the order given."""
    wanted: Sequence[ProviderSpec] = list(providers)
    jobs = [
        partial(cli_readiness, p, environment, fresh=fresh, timeout=timeout, cwd=cwd)
        for p in wanted
    ]
    return run_concurrently(jobs, max(1, len(jobs)))
