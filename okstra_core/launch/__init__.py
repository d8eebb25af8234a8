"""Launching the lead CLI: preflight, argv from templates, backends, resume sheet.

Nothing here ever builds a shell string: every argv is a list handed to `exec`/`tmux`
as separate elements (tmux gets them after `--`), so prompt text, paths and model
names with shell metacharacters reach the CLI untouched.

Public API (the contract `okstra_core.prepare` codes against)::

    @dataclass(frozen=True)
    class RoleInstance:                 # what preflight checks, one per role instance
        role: str                       # "leader", "analyser", …
        ordinal: int                    # 1-based
        provider: ProviderSpec
        runner: Runner                  # binding.runner
        @property spawns_cli -> bool    # leader unless current-session; others: cli-wrapper

    @dataclass(frozen=True)
    class PreflightResult:
        instance: str                   # "leader#1", "analyser#2"
        role: str; ordinal: int; provider_id: str; cli: str
        ok: bool
        cli_path: str | None            # resolved on the Environment's PATH
        version: str | None             # first line of the version command's output
        problem: str | None             # what is wrong (None when ok)
        remedy: str | None              # what to do about it
        def message() -> str            # "leader#1: claude: <problem> — <remedy>"
        # its JSON: records.to_data (camelCase, with `message`)

    def preflight(instances: Iterable[RoleInstance], environment: Environment,
                  *, timeout: float = 10.0) -> list[PreflightResult]
        # Only instances whose runner spawns a CLI; each CLI's version/--help is run
        # once however many instances use it. For the leader, every
        # `launch.required_flags` entry must appear in the `launch.help` command's
        # output (default `[cli, --help]`).

    @dataclass(frozen=True)
    class LaunchPlan:
        provider_id: str; cli: str; cli_path: str; model: str
        argv: tuple[str, ...]           # launch.new, templated, argv[0] = cli_path
        env: Mapping[str, str]          # launch.env templated (ONLY the extra variables)
        session_id: str | None          # minted now (uuid4/token); None for "discover"
        session_id_kind: SessionIdKind  # "uuid4" | "token" | "discover"
        project_root: Path; prompt_file: Path
        discover: DiscoverSpec | None
        def resume_argv(session_id: str | None = None) -> tuple[str, ...] | None
            # launch.resume templated with the (given or planned) id and the model;
            # None while the id is unknown.
        # its JSON: records.to_data (camelCase, with `resumeArgv`)

    def plan_launch(provider: ProviderSpec, *, model: str, prompt_file: Path,
                    kickoff: str, project_root: Path, environment: Environment,
                    prompt: str | None = None) -> LaunchPlan
        # model = the model's `execution` value. Raises LaunchError when the CLI is
        # not on PATH, OkstraError(path=provider.source, field="launch.…") for an
        # unknown placeholder. Placeholders: {cli} {session_id} {model} {prompt}
        # {prompt_file} {kickoff} {project_root} {env.NAME}; `{{`/`}}` escape braces.
        # {prompt} defaults to the prompt file's text when asked for.

    Backend = Literal["exec", "tmux", "none"]; def choose_backend("auto"|Backend, environment)
        # auto = tmux when TMUX is set, else exec

    @dataclass(frozen=True)
    class LaunchResult:
        backend: Backend
        session_id: str | None          # known id (minted, or discovered)
        window_ref: str | None          # tmux "session:window_index", e.g. "task-7:2"
        pending_discovery: bool         # a discover-provider whose id is not found yet
        exec_argv: tuple[str, ...] | None   # exec backend: the caller execs it
        exec_env: Mapping[str, str] | None  # full environment for that exec
        cwd: Path                       # where the CLI runs (exec_now chdirs there)
        launched_at: datetime
        error: LaunchError | None       # set instead of raising
        command: tuple[str, ...]        # the tmux command run / the argv to exec
        notes: tuple[str, ...]          # non-fatal remarks (discovery gave up, …)
        ok -> bool
        def raise_for_error() -> LaunchResult
        # its JSON: records.to_data (camelCase; `error` as text, no exec_env)

    def start(plan: LaunchPlan, backend: Backend, window_name: str, cwd: Path,
              environment: Environment, *, discover: bool = True,
              discover_timeout: float | None = None, settle: float | None = None,
              activity: ActivitySpec | None = None) -> LaunchResult
        # exec: returns exec_argv/exec_env, runs nothing. tmux: opens the window
        # (new-window inside tmux, else a detached new-session), watches the lead's
        # start (watch.py: until its screen waits for input by `activity`, it exits —
        # `.lead_exit`, the pane kept — or `settle` seconds, default
        # $OKSTRA_LAUNCH_WATCH or 5), then for "discover" providers waits (bounded by
        # discover.timeout_seconds) for the session id. none: nothing.
        # Failures come back in `.error` naming the failed command.

    def exec_now(result: LaunchResult) -> NoReturn     # os.execvpe for the CLI path
    def tmux_commands(plan, window_name, cwd, environment) -> list[list[str]]
        # the tmux argv(s) `start(…, "tmux", …)` would run — for dry runs.
    def tmux_base(environment) -> list[str]
        # ["tmux"] or ["tmux", "-L", $OKSTRA_TMUX_SOCKET]: tests and users can keep
        # okstra off their own tmux server.

    def discover_session(spec: DiscoverSpec, project_root, launched_at, environment,
                         *, timeout=None, source="") -> str | None
        # codex: newest rollout file under {env.CODEX_HOME} (or default_home) whose
        # first-line JSON `cwd_field` equals the project dir and mtime ≥ launch time;
        # polls until found or `timeout` (default spec.timeout_seconds; 0 = look once).

    @dataclass(frozen=True)
    class ResumeEntry:
        participant: str                # "participant-001"
        role: str; provider_id: str; cli: str; model: str
        cwd: Path
        session_id: str | None          # None = pending discovery
        session_id_kind: SessionIdKind
        resume_argv: tuple[str, ...] | None
        env: Mapping[str, str]          # the provider's extra env, exported on resume too
        pending_discovery -> bool; command() -> str | None   # one shell line for people
        @classmethod from_plan(plan, participant, role, *, session_id=None, cwd=None)

    def write_resume_sheet(run_dir: Path, entries: Sequence[ResumeEntry]) -> tuple[Path, Path]
        # resume.json (0600) and resume-lead.sh (0700), atomically; may be called again
        # once a pending id is discovered. A session id is only ever paired with the
        # CLI/provider that minted it.
    def render_resume_sheet(entries, *, run_dir=None, okstra=None) -> tuple[bytes, str]
        # contents, for dry runs/digests. With run_dir, a pending script runs
        # `<okstra> resume <run_dir> --exec "$@"` (okstra on PATH as the fallback).
    # write_resume_sheet(run_dir, entries, *, okstra=None) likewise.

    # While pending, an entry records `resume_template` (launch.resume with every value
    # but `{session_id}` filled in: `LaunchPlan.resume_argv_template()`) and `discover`
    # (the rule with its glob resolved at planning: `LaunchPlan.discover_fixed`);
    # `entry.with_session(id)` finishes it. `read_resume_sheet(run_dir) -> ResumeSheet`
    # (.entries, .okstra, .pending, .lead()) reads resume.json back strictly;
    # `find_okstra(environment)` is the okstra executable a script calls back.
    def worker_argv(provider, *, model, writes, values, env=None) -> tuple[str, ...]
        # launch.worker rendered (worker_argv.py): `[launch.access] write` when the
        # role writes, else `read_only`, at the `{access}` element (else before the
        # first `--`, else at the end). DataFileError when the provider declares no
        # worker (`ProviderSpec.worker_refusal()` says why) or a value is missing.
    def find_sessions(spec, project_root, launched_at, environment, *, source="") -> list[str]
    def discover_sessions(…same as discover_session…) -> list[str]   # every match, newest first
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .argv import PLACEHOLDERS as PLACEHOLDERS
    from .argv import render_argv as render_argv
    from .backends import LaunchResult as LaunchResult
    from .backends import exec_now as exec_now
    from .backends import start as start
    from .checks import PreflightResult as PreflightResult
    from .checks import RoleInstance as RoleInstance
    from .checks import preflight as preflight
    from .commands import BACKEND_CHOICES as BACKEND_CHOICES
    from .commands import Backend as Backend
    from .commands import choose_backend as choose_backend
    from .commands import tmux_base as tmux_base
    from .commands import tmux_commands as tmux_commands
    from .plan import LaunchPlan as LaunchPlan
    from .plan import plan_launch as plan_launch
    from .session import discover_session as discover_session
    from .session import discover_sessions as discover_sessions
    from .session import find_session_once as find_session_once
    from .session import find_sessions as find_sessions
    from .session import mint_session_id as mint_session_id
    from .sheet import PENDING as PENDING
    from .sheet import RESUME_JSON as RESUME_JSON
    from .sheet import RESUME_SCRIPT as RESUME_SCRIPT
    from .sheet import ResumeCommand as ResumeCommand
    from .sheet import ResumeEntry as ResumeEntry
    from .sheet import ResumeSheet as ResumeSheet
    from .sheet import check_session_id as check_session_id
    from .sheet import find_okstra as find_okstra
    from .sheet import read_resume_sheet as read_resume_sheet
    from .sheet import rebuild_resume_command as rebuild_resume_command
    from .sheet import render_resume_sheet as render_resume_sheet
    from .sheet import write_resume_sheet as write_resume_sheet
    from .worker_launch import worker_argv as worker_argv

# The package's names load on first use, each from its module: planning a launch, its
# tmux commands and its resume sheet (`plan`, `commands`, `sheet`) never import what
# starts the lead (`backends`, `foreground`; preflight, in `checks`, probes on plain
# threads, never logging), so a prepare that launches nothing (`--launch none`) never
# loads them.
_LAZY = by_module(
    {
        ".argv": ("PLACEHOLDERS", "render_argv"),
        ".commands": ("BACKEND_CHOICES", "Backend", "choose_backend", "tmux_base", "tmux_commands"),
        ".backends": ("LaunchResult", "exec_now", "start"),
        ".plan": ("LaunchPlan", "plan_launch"),
        ".checks": ("PreflightResult", "RoleInstance", "preflight"),
        ".sheet": (
            "PENDING",
            "RESUME_JSON",
            "RESUME_SCRIPT",
            "ResumeCommand",
            "ResumeEntry",
            "ResumeSheet",
            "check_session_id",
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
            "find_sessions",
            "mint_session_id",
        ),
        ".worker_launch": ("worker_argv",),
    }
)


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = sorted(_LAZY)
