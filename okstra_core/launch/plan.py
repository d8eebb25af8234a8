"""`plan_launch`: a provider's launch templates + this run's values → a `LaunchPlan`; the
backend choice and the tmux commands of a launch, as data (`backends` runs them).

tmux gets the CLI's argv after `--` as separate arguments, never a shell string; an
argument ending in `;` is escaped, `-c`'s `#` doubled, a one-element argv prefixed with
`env --` (tmux would run it through `sh -c`). `OKSTRA_TMUX_SOCKET` picks a private server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from okstra_core.catalog.argv import (
    WORKER_PLACEHOLDERS,
    placeholders_in,
    render_argv,
    render_element,
    render_env,
)
from okstra_core.catalog.models import DiscoverSpec, LaunchSpec, ProviderSpec, SessionIdKind
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError, LaunchError, OkstraError, UsageError
from okstra_core.launch.mcp import McpServer, Registered, register_mcp
from okstra_core.launch.session import discover_env_names, discover_glob, mint_session_id
from okstra_core.processes import TMUX_SOCKET_VAR
from okstra_core.store import decode_utf8, read_bytes

from ..records import config, dataclass, field
from ..vocabulary import LEAD_ASK

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Linux caps one argv element at 32 pages (MAX_ARG_STRLEN = 128 KiB, NUL included).
MAX_ARG_BYTES = 128 * 1024 - 1
# Stands in for the id while checking that a resume template renders.
_PROBE_ID = "00000000-0000-4000-8000-000000000000"
# Marks where the id goes while the rest is filled in (no argv can hold a NUL).
_ID_MARK = "\0okstra-session-id\0"
# Where a worker's access arguments go in its template.
_ACCESS = "{access}"


def escape_template(text: str) -> str:
    """`text` as a literal in a launch template (`{` → `{{`, `}` → `}}`)."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to start (and later resume) one lead CLI.

    `argv` is `launch.new` rendered (argv[0] the CLI's path), `env` only the extra
    variables, `session_id` None for a `discover` provider; `mcp_argv` (after the
    program) and `mcp_config` give the lead okstra's MCP server of the run.
    """

    # Its protocol data: what a consumer needs to run and resume the CLI.
    __pydantic_config__ = config(
        camel_case=True,
        aliases={"provider_id": "provider"},
        skip=(
            "discover",
            "source",
            "resume_template",
            "values",
            "resume_env",
            "discover_fixed",
            "mcp_config_bytes",
        ),
        views=("resume_argv",),
    )

    provider_id: str
    cli: str
    cli_path: str
    model: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    session_id: str | None
    session_id_kind: SessionIdKind
    project_root: Path
    prompt_file: Path
    discover: DiscoverSpec | None = None
    source: str = ""
    resume_template: tuple[str, ...] = ()
    values: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # The `{env.X}` variables the resume template reads, captured at planning time.
    resume_env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # `discover`, its glob resolved at planning time: a later lookup searches where it wrote.
    discover_fixed: DiscoverSpec | None = None
    mcp_argv: tuple[str, ...] = ()
    mcp_config: Path | None = None
    mcp_config_bytes: bytes | None = None

    @property
    def gives_mcp(self) -> bool:
        """Whether the CLI is given okstra's MCP server of the run."""
        return bool(self.mcp_argv) or self.mcp_config is not None

    def resume_argv_template(self) -> tuple[str, ...]:
        """`launch.resume` with every value but `{session_id}` filled in: a template whose
        rendering with the id is exactly `resume_argv(id)` (OkstraError if not)."""
        values = {**self.values, "session_id": _ID_MARK}
        rendered = render_argv(
            self.resume_template, values, self.resume_env, source=self.source, field="launch.resume"
        )
        template = _after_program(
            tuple(
                "{session_id}".join(escape_template(part) for part in element.split(_ID_MARK))
                for element in rendered
            ),
            tuple(escape_template(a) for a in self.mcp_argv),
        )
        probe = render_argv(
            template, {"session_id": _PROBE_ID}, {}, source=self.source, field="launch.resume"
        )
        if probe != self.resume_argv(_PROBE_ID):
            raise OkstraError(
                "the resume argv cannot be recorded ahead of its session id",
                path=self.source,
                field="launch.resume",
            )
        return template

    def resume_argv(self, session_id: str | None = None) -> tuple[str, ...] | None:
        """`launch.resume` rendered with the id (given, else planned), okstra's MCP server
        registered as at launch; None while the id is unknown."""
        sid = session_id or self.session_id
        if sid is None:
            return None
        values = {**self.values, "session_id": sid}
        argv = render_argv(
            self.resume_template, values, self.resume_env, source=self.source, field="launch.resume"
        )
        return _after_program(argv, self.mcp_argv)


def _after_program(argv: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` with `extra` (the MCP server's or the access arguments) after the program."""
    return (argv[0], *extra, *argv[1:]) if extra and argv else argv


def _check_argv(argv: tuple[str, ...], env: Mapping[str, str], source: str) -> None:
    for index, element in enumerate(argv):
        if "\0" in element:
            problem = f"argument {index} contains a NUL byte, which no program can receive"
        elif len(element.encode("utf-8", "surrogateescape")) > MAX_ARG_BYTES:
            problem = (
                f"argument {index} is longer than 128 KiB (the Linux limit of one argument); "
                "pass long text by file with {prompt_file}"
            )
        else:
            continue
        raise OkstraError(problem, path=source, field="launch.new")
    for name, value in env.items():
        if "\0" in value or _ENV_NAME.fullmatch(name) is None:
            raise OkstraError(
                f"invalid environment variable {name!r}", path=source, field="launch.env"
            )


def plan_launch(
    provider: ProviderSpec,
    *,
    model: str,
    prompt_file: Path,
    kickoff: str,
    project_root: Path,
    environment: Environment,
    prompt: str | None = None,
    mcp: McpServer | None = None,
    access: tuple[str, ...] = (),
) -> LaunchPlan:
    """Build the lead CLI's launch argv and environment; mint its session id.

    `model` is the model's `execution` value; `prompt` (for `{prompt}`) is read from
    `prompt_file` when None; `access` (`lead_access_argv`) goes after the program.
    Raises LaunchError (CLI not on PATH, prompt unreadable), DataFileError (unknown
    placeholder, `{session_id}` in a `discover` provider's `launch.new`), OkstraError
    (an argument with a NUL byte or over 128 KiB).
    """
    source = provider.source or f"provider {provider.id}"
    launch = provider.launch
    cli_path = _cli_path(provider, environment)
    session_id = mint_session_id(launch.session_id, environment)
    values = _template_values(
        launch,
        session_id,
        source=source,
        fixed={
            "cli": cli_path,
            "model": model,
            "prompt_file": str(prompt_file),
            "kickoff": kickoff,
            "project_root": str(project_root),
        },
        prompt_file=prompt_file,
        prompt=prompt,
    )
    given = tuple(escape_template(a) for a in access)  # the lead's access
    new_template, resume_template = (_after_program(t, given) for t in (launch.new, launch.resume))
    argv = render_argv(new_template, values, environment.env, source=source, field="launch.new")
    env = render_env(launch.env, values, environment.env, source=source, field="launch.env")
    argv, env, registered = _with_mcp(argv, env, provider, mcp, environment)
    _check_argv(argv, env, source)
    # Render the resume template now, so a broken one fails before anything runs.
    probe = {**values, "session_id": _PROBE_ID}
    render_argv(resume_template, probe, environment.env, source=source, field="launch.resume")
    return LaunchPlan(
        provider_id=provider.id,
        cli=provider.cli,
        cli_path=cli_path,
        model=model,
        argv=argv,
        env=MappingProxyType(env),
        session_id=session_id,
        session_id_kind=launch.session_id,
        project_root=project_root,
        prompt_file=prompt_file,
        discover=launch.discover,
        source=source,
        resume_template=resume_template,
        values=MappingProxyType(values),
        resume_env=MappingProxyType(_resume_env(launch, environment)),
        discover_fixed=_fixed_discover(launch, environment, source),
        mcp_argv=registered.argv if registered else (),
        mcp_config=registered.config if registered else None,
        mcp_config_bytes=registered.config_bytes if registered else None,
    )


def _with_mcp(
    argv: tuple[str, ...],
    env: dict[str, str],
    provider: ProviderSpec,
    mcp: McpServer | None,
    environment: Environment,
) -> tuple[tuple[str, ...], dict[str, str], Registered | None]:
    """The launch with okstra's MCP server's arguments after the program, its variables added."""
    registered = register_mcp(provider, mcp, environment) if mcp is not None else None
    if registered is None:
        return argv, env, None
    return (argv[0], *registered.argv, *argv[1:]), {**env, **registered.env}, registered


def _cli_path(provider: ProviderSpec, environment: Environment) -> str:
    cli_path = environment.which(provider.cli)
    if cli_path is None:
        raise LaunchError(
            f"`{provider.cli}` (provider {provider.id}) is not on PATH; install it or put it "
            "on PATH, then run the resume command"
        )
    return cli_path


def _template_values(
    launch: LaunchSpec,
    session_id: str | None,
    *,
    source: str,
    fixed: dict[str, str],
    prompt_file: Path,
    prompt: str | None,
) -> dict[str, str]:
    """The placeholder values of the launch templates: `fixed`, the session id, the prompt."""
    used = placeholders_in(launch.new) | placeholders_in(tuple(launch.env.values()))
    if session_id is None and "session_id" in used:
        raise DataFileError(
            'a provider with session_id = "discover" cannot pass {session_id} at launch '
            "(the CLI mints it)",
            path=source,
            field="launch.new",
        )
    values = dict(fixed)
    if session_id is not None:
        values["session_id"] = session_id
    if "prompt" in used or "prompt" in placeholders_in(launch.resume):
        if prompt is None:
            # A regular file only (never a FIFO or device), size-capped, UTF-8.
            data = read_bytes(prompt_file, what="cannot read the lead prompt:", error=LaunchError)
            prompt = decode_utf8(data, prompt_file, error=LaunchError)
        values["prompt"] = prompt
    return values


def _resume_env(launch: LaunchSpec, environment: Environment) -> dict[str, str]:
    """The environment variables the resume template reads, as they are now."""
    return {
        name[4:]: environment.env[name[4:]]
        for name in placeholders_in(launch.resume)
        if name.startswith("env.") and name[4:] in environment.env
    }


def _fixed_discover(
    launch: LaunchSpec, environment: Environment, source: str
) -> DiscoverSpec | None:
    """The discover spec with its glob resolved now, or None when it cannot be."""
    if launch.discover is None:
        return None
    try:
        concrete = discover_glob(launch.discover, environment, source=source)
    except DataFileError:
        # Unresolvable here: a later lookup says so instead of searching elsewhere.
        return None
    return replace(launch.discover, glob=escape_template(concrete), default_home="")


def lead_access_argv(provider: ProviderSpec, access: str) -> tuple[str, ...]:
    """The arguments that give the lead's CLI `access` (`ask`: none); UsageError naming
    `--lead-access` when the provider declares no such level."""
    if access == LEAD_ASK:
        return ()
    found: tuple[str, ...] | None = getattr(provider.launch.lead_access, access, None)
    if found is None:
        raise UsageError(
            f"the lead's provider {provider.id} has no {access!r} access (its file declares "
            "no [launch.lead_access] " + access + "): use --lead-access ask",
            field="--lead-access",
        )
    return found


def worker_argv(
    provider: ProviderSpec,
    *,
    model: str,
    writes: bool,
    values: Mapping[str, str],
    env: Mapping[str, str] | None = None,
    follow_up: bool = False,
) -> tuple[str, ...]:
    """The worker argv of `provider` for `model` (its `execution` value): `launch.worker`.

    A writing role gets `[launch.access] write`, others `read_only`, at the `{access}`
    element, else before the first `--`, else at the end (`launch.env` is the lead's only).
    `follow_up`: `launch.worker_resume` instead (`values` holding its `session_id`).
    DataFileError when the provider declares no such template or a value is missing.
    """
    launch = provider.launch
    if launch.worker is None:
        refusal = provider.worker_refusal() or "no worker"
        raise DataFileError(refusal, path=provider.source, field="launch.worker")
    name = "worker_resume" if follow_up else "worker"
    template = launch.worker_resume if follow_up else launch.worker
    if template is None:
        raise DataFileError(
            f"provider {provider.id!r} declares no [launch] worker_resume: its workers "
            "cannot be sent a follow-up",
            path=provider.source,
            field="launch.worker_resume",
        )
    filled = {"cli": provider.cli, **values, "model": model}
    kind = "write" if writes else "read_only"
    flags = launch.access.write if writes else launch.access.read_only

    def render(element: str, field: str) -> str:
        source, known = provider.source, WORKER_PLACEHOLDERS
        return render_element(element, filled, env or {}, source=source, field=field, known=known)

    access = tuple(
        render(element, f"launch.access.{kind}[{index}]") for index, element in enumerate(flags)
    )
    if _ACCESS in template:
        at = template.index(_ACCESS)
    else:
        at = template.index("--") if "--" in template else len(template)
    out: list[str] = []
    for index, element in enumerate(template):
        if index == at:
            out.extend(access)
        if element != _ACCESS:
            out.append(render(element, f"launch.{name}[{index}]"))
    if at == len(template):
        out.extend(access)
    return tuple(out)


Backend = Literal["exec", "tmux", "none"]
BACKEND_CHOICES: tuple[str, ...] = ("auto", "exec", "tmux", "none")
# The socket path comes last: it may contain spaces.
_REF_FORMAT = "#{session_name}:#{window_index} #{pane_id} #{socket_path}"
# What the new window runs until the lead CLI replaces it (in the same command list).
_PLACEHOLDER = ("/bin/sh", "-c", "exec sleep 86400")


def choose_backend(requested: str, environment: Environment) -> Backend:
    """Resolve `auto` (tmux inside tmux, else exec); OkstraError for an unknown name."""
    if requested == "auto":
        return "tmux" if environment.get("TMUX") else "exec"
    if requested in ("exec", "tmux", "none"):
        return requested  # type: ignore[return-value]
    raise OkstraError(
        f"unknown launch backend {requested!r}; expected one of {', '.join(BACKEND_CHOICES)}",
        field="--launch",
    )


def tmux_base(environment: Environment) -> list[str]:
    """`tmux`, on the private server named by OKSTRA_TMUX_SOCKET when set."""
    base = [environment.which("tmux") or "tmux"]
    socket = environment.get(TMUX_SOCKET_VAR)
    if socket:
        # A name is a server in tmux's own directory (`-L`); a path is the socket (`-S`).
        base += ["-S", socket] if "/" in socket else ["-L", socket]
    return base


def tmux_name(name: str) -> str:
    """A session/window name tmux takes literally (no `:`/`.` target syntax, no formats)."""
    cleaned = "".join(c if c.isalnum() or c in "-_" else "-" for c in name).strip("-")
    return cleaned[:60] or "okstra"


def _window_env(plan: LaunchPlan, environment: Environment) -> dict[str, str]:
    """The window's variables (it inherits the tmux server's environment, not okstra's):
    okstra's own, the provider's extra env and what discovery's glob reads."""
    env: dict[str, str] = {
        key: value
        for key, value in environment.env.items()
        if key.startswith("OKSTRA_") and key != "OKSTRA_READY_FILE"  # the app's, not the lead's
    }
    if plan.discover is not None:
        for name in discover_env_names(plan.discover):
            value = environment.get(name)
            if value:
                env[name] = value
    env.update(plan.env)
    return env


def tmux_commands(
    plan: LaunchPlan, window_name: str, cwd: Path, environment: Environment
) -> list[list[str]]:
    """The tmux command(s) `start(plan, "tmux", …)` runs to open the window (for dry runs).

    A new window inside tmux, else a detached session (`-2`, `-3`… when taken). It starts
    a placeholder, sets `remain-on-exit`, then respawns the pane with the CLI, in one
    command list: the pane (exit status, last lines) survives even an at-once exit.
    """
    name = tmux_name(window_name)
    env_flags: list[str] = []
    for key, value in _window_env(plan, environment).items():
        env_flags += ["-e", f"{key}={value}"]
    # -c is expanded as a tmux format: "#" starts a format, "##" is a literal "#".
    where = ["-c", str(cwd).replace("#", "##")]
    if environment.get("TMUX"):
        head = ["new-window", "-P", "-F", _REF_FORMAT, "-n", name, *where]
    else:
        head = ["new-session", "-d", "-P", "-F", _REF_FORMAT, "-s", name, "-n", name, *where]
    create = [*head, "--", *_PLACEHOLDER]
    # With a single argument tmux runs it through `sh -c`; two or more are exec'd as is.
    program = ["env", "--", *plan.argv] if len(plan.argv) == 1 else list(plan.argv)
    respawn = ["respawn-pane", "-k", *where, *env_flags, "--", *program]
    chained = [*create, ";", "set-option", "-w", "remain-on-exit", "on", ";"]
    # tmux ends a command at an argument ending in ";"; "\\;" there is a literal ";".
    chained += (arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in respawn)
    return [[*tmux_base(environment), *chained]]
