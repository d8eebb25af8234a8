"""Records of the data okstra ships in `prompts/` and reads from config.

The shared contract of the whole core: loaders build them; the pool, resolver, wizard
and prepare read them. Plain frozen dataclasses (`okstra_core.records`), so a catalog
read back from the cache needs no pydantic; the loaders check files against them
(constraints in the annotations, unknown keys refused) and the rules across fields run
in `__post_init__`, so a record built in code obeys them too.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Literal

from .. import records
from ..records import dataclass, field
from ..vocabulary import EntryMode as EntryMode
from ..vocabulary import Runner as Runner
from .activity import ActivitySpec
from .rules import ENV_NAME, DataProblem, check_id
from .settings import DEFAULT_NOTIFY, TeamSettings

if TYPE_CHECKING:
    from pydantic import Field, StrictBool, StrictInt, StrictStr


# Every record refuses unknown keys (the default of `records.config`).
_CONFIG = records.config()


Distinct = Literal["model", "provider"]
SessionIdKind = Literal["uuid4", "token", "discover"]
# One line of text shown to a person (an install command, how to log in).
_ONE_LINE = r"^[^\r\n]+$"

LEADER = "leader"
# The bundled task types in their profiles' `order`. Task types are the profiles: a
# profile file in a workspace adds one, with no change here.
TASK_TYPES: tuple[str, ...] = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "implementation",
    "final-verification",
    "release-handoff",
)


# The most instances of one role a profile may allow (and a state file may hold): each
# is a CLI process and a prompt option, so the bound keeps both sane.
MAX_ROLE_COUNT = 16


class RoleKind(StrEnum):
    FIXED = "fixed"
    ADJUSTABLE = "adjustable"
    OPTIONAL = "optional"
    DYNAMIC = "dynamic"


@dataclass(frozen=True, kw_only=True)
class RoleRequirement:
    """One `[[roles]]` entry of a profile's front matter."""

    __pydantic_config__ = _CONFIG

    role: Annotated[StrictStr, Field(min_length=1)]
    duty: Annotated[StrictStr, Field(min_length=1)]
    min: Annotated[StrictInt, Field(ge=0)] = 1
    max: Annotated[StrictInt, Field(ge=0)] = 1
    recommended: StrictInt | None = None
    distinct: Distinct = "model"
    exclude_models_of: tuple[StrictStr, ...] = ()
    dynamic: StrictBool = False
    # Whether the role changes the project: its workers run with the provider's
    # `[launch.access] write` arguments, every other role's with `read_only`.
    writes: StrictBool = False
    description: StrictStr = ""

    @property
    def kind(self) -> RoleKind:
        if self.dynamic:
            return RoleKind.DYNAMIC
        if self.min == self.max:
            return RoleKind.FIXED
        if self.min == 0:
            return RoleKind.OPTIONAL
        return RoleKind.ADJUSTABLE

    @property
    def recommended_count(self) -> int:
        """Recommended count; defaults to max for optional roles' "add" and min otherwise."""
        if self.recommended is not None:
            return self.recommended
        return self.max if self.kind is RoleKind.OPTIONAL else self.min


@dataclass(frozen=True, kw_only=True)
class Profile:
    """A phase's role profile: `prompts/profiles/<task-type>.md`."""

    __pydantic_config__ = _CONFIG

    task_type: StrictStr
    title: StrictStr = ""
    summary: StrictStr = ""
    # Where the task type is listed (lower first; then by name).
    order: Annotated[StrictInt, Field(ge=0, le=1_000_000)] = 1000
    # Whether prepare needs an approved plan (a stage-scoped phase of work).
    needs_approved_plan: StrictBool = False
    roles: tuple[RoleRequirement, ...]
    body: StrictStr = ""
    source: StrictStr = ""

    def __post_init__(self) -> None:
        _check_profile(self)

    def role(self, role_id: str) -> RoleRequirement | None:
        return next((r for r in self.roles if r.role == role_id), None)

    @property
    def static_roles(self) -> tuple[RoleRequirement, ...]:
        """Roles selected in the wizard (all but dynamic), in profile order."""
        return tuple(r for r in self.roles if not r.dynamic)

    @property
    def dynamic_roles(self) -> tuple[RoleRequirement, ...]:
        return tuple(r for r in self.roles if r.dynamic)


@dataclass(frozen=True, kw_only=True)
class DiscoverSpec:
    """How to find a session id that the CLI minted itself (codex)."""

    __pydantic_config__ = _CONFIG

    glob: StrictStr  # e.g. "{env.CODEX_HOME}/sessions/**/rollout-*.jsonl"
    id_pattern: StrictStr  # regex with one group capturing the id from the file name
    cwd_field: StrictStr = "payload.cwd"  # dotted path in the first JSON line
    # Strict: a boolean or a numeric string is a mistake in the file, not a number.
    timeout_seconds: Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)] = 10.0
    default_home: StrictStr = ""  # used for {env.X} when X is unset, e.g. "~/.codex"


@dataclass(frozen=True, kw_only=True)
class AccessSpec:
    """`[launch.access]`: a worker's extra arguments at its template's `{access}` element."""

    __pydantic_config__ = _CONFIG

    read_only: tuple[StrictStr, ...] = ()
    write: tuple[StrictStr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class LeadAccessSpec:
    """`[launch.lead_access]`: the lead CLI's extra arguments (right after the program,
    on launch and resume) per access above `ask` (the CLI's own prompts); a level left
    out is refused for its lead (`prepare --lead-access`)."""

    __pydantic_config__ = _CONFIG

    edits: tuple[StrictStr, ...] | None = None  # edit files without asking
    full: tuple[StrictStr, ...] | None = None  # edit and run commands without asking


UsageFormat = Literal["claude-json", "codex-jsonl"]


@dataclass(frozen=True, kw_only=True)
class UsageSpec:
    """`[usage] format` of a provider file: how its CLI reports what a worker's turn used.

    `claude-json`: stdout is one JSON result object (`claude -p --output-format json`):
    its `result` is the answer, `usage` the tokens, `total_cost_usd` the cost.
    `codex-jsonl`: stdout is JSONL events (`codex exec --json`), `turn.completed`
    carrying the tokens. The worker template asks its CLI for that output; okstra reads
    it (`okstra_core.life.workers.usage`). Without `[usage]`, a worker's usage shows `—`.
    """

    __pydantic_config__ = _CONFIG

    format: UsageFormat


@dataclass(frozen=True, kw_only=True)
class LaunchSpec:
    """argv templates of a provider CLI; never run through a shell."""

    __pydantic_config__ = _CONFIG

    version: tuple[StrictStr, ...]
    new: tuple[StrictStr, ...]
    resume: tuple[StrictStr, ...]
    session_id: SessionIdKind = "uuid4"
    discover: DiscoverSpec | None = None
    env: dict[StrictStr, StrictStr] = field(default_factory=dict)
    # Flags the leader launch relies on; preflight checks the CLI's --help mentions them.
    required_flags: tuple[StrictStr, ...] = ()
    help: tuple[StrictStr, ...] = ()
    # A worker's one-shot run (prompt on stdin, result on stdout or `{result_file}`).
    worker: tuple[StrictStr, ...] | None = None
    access: AccessSpec = field(default_factory=AccessSpec)
    lead_access: LeadAccessSpec = field(default_factory=LeadAccessSpec)  # `prepare --lead-access`
    # An ended worker's follow-up turn in its own conversation (`okstra worker send`).
    worker_resume: tuple[StrictStr, ...] | None = None
    # A CLI minting its own id: a regex whose one group finds it in the worker's output.
    worker_session_pattern: StrictStr | None = None
    mcp: tuple[StrictStr, ...] | None = None  # okstra's MCP server for the lead's CLI
    mcp_env: dict[StrictStr, StrictStr] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class LoginSpec:
    """`[login]`: how `okstra doctor` tells, offline, whether the CLI has credentials.

    Checked in order: an `env` variable that is set, or a `files` entry that exists
    (non-empty) means logged in; else the `status` command answers (exit 0 = logged
    in, 1 = not — only when its output matches `status_pattern`, so a CLI that does
    not know the command is not read as "logged out"). Rules but no answer: with a
    `status` command okstra cannot tell; without one, not logged in. Only names and
    paths are ever shown, never a value or the command's output.
    """

    __pydantic_config__ = _CONFIG

    env: tuple[StrictStr, ...] = ()
    # Paths; `~` is the user's home, `{env.NAME:-default}` an environment variable.
    files: tuple[StrictStr, ...] = ()
    status: tuple[StrictStr, ...] = ()
    status_pattern: StrictStr = ""
    # How a person logs in (shown by doctor when not logged in).
    how: Annotated[StrictStr, Field(min_length=1, max_length=300, pattern=_ONE_LINE)] | None = None


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One `[[models]]` entry of a provider file."""

    __pydantic_config__ = _CONFIG

    id: Annotated[StrictStr, Field(min_length=1)]
    display: Annotated[StrictStr, Field(min_length=1)]
    execution: Annotated[StrictStr, Field(min_length=1)]
    aliases: tuple[StrictStr, ...] = ()
    version: Literal["pinned", "channel"] = "channel"
    default_for: tuple[StrictStr, ...] = ()
    roles: tuple[StrictStr, ...] = ()  # empty = every role of the provider


@dataclass(frozen=True, kw_only=True)
class ProviderSpec:
    """A provider: `prompts/providers/<id>.toml` or `<config>/providers/<id>.toml`."""

    __pydantic_config__ = _CONFIG

    id: Annotated[StrictStr, Field(min_length=1)]
    display_label: Annotated[StrictStr, Field(min_length=1)]
    cli: Annotated[StrictStr, Field(min_length=1)]
    # How a person installs the CLI (one command line, shown by doctor and preflight;
    # okstra never runs it).
    install: Annotated[StrictStr, Field(min_length=1, max_length=300, pattern=_ONE_LINE)] | None = (
        None
    )
    roles: tuple[StrictStr, ...]
    launch: LaunchSpec
    models: tuple[ModelSpec, ...]
    login: LoginSpec | None = None
    # What its CLI's screen shows when it waits for input or sits idle (`activity.py`).
    activity: ActivitySpec | None = None
    # How its CLI reports what a worker's turn used (`UsageSpec`); None: it does not.
    usage: UsageSpec | None = None
    # A demo provider (okstra's scripted demo agent): its models are listed last and
    # are chosen only when named — a `modelDefaults` entry or a person's pick — never
    # to fill a team, and it names no `default_for`.
    demo: StrictBool = False
    source: StrictStr = ""
    bundled: StrictBool = True

    def __post_init__(self) -> None:
        _check_provider(self)

    def worker_refusal(self) -> str | None:
        """Why this provider cannot run workers (None when it can)."""
        if self.launch.worker is None:
            return f"provider {self.id!r} declares no [launch] worker: it cannot run workers"
        return None


@dataclass(frozen=True, kw_only=True)
class HostSpec:
    """A host runtime: `prompts/hosts/<id>.toml`."""

    __pydantic_config__ = _CONFIG

    id: StrictStr
    display_label: StrictStr
    native_provider: StrictStr | None = None
    entry_modes: tuple[EntryMode, ...] = ("spawn-process",)
    native_sessions: StrictBool = False
    # Environment variables whose presence means okstra runs inside this host.
    detect_env: tuple[StrictStr, ...] = ()
    source: StrictStr = ""


@dataclass(frozen=True, kw_only=True)
class ModelDefaults:
    """`modelDefaults`: role -> non-empty list of model refs."""

    __pydantic_config__ = _CONFIG

    by_role: dict[StrictStr, tuple[StrictStr, ...]] = field(default_factory=dict)
    source: StrictStr = ""
    notes: tuple[StrictStr, ...] = ()  # what reading left out (a non-object block)


@dataclass(frozen=True, kw_only=True)
class GlobalConfig:
    """`<config dir>/config.json`: each field but `source` is a key of the file, named as
    files name it (`modelDefaults`; `worktrees` holds `worktrees_dir`)."""

    __pydantic_config__ = records.config(camel_case=True, aliases={"worktrees_dir": "worktrees"})

    model_defaults: ModelDefaults = field(default_factory=ModelDefaults)
    disabled_providers: tuple[StrictStr, ...] = ()
    language: StrictStr | None = None
    theme: StrictStr | None = None
    # `"worktrees": {"dir": "..."}`: where writers' worktrees live (default: okstra's
    # per-user data directory).
    worktrees_dir: StrictStr | None = None
    team: TeamSettings = field(default_factory=TeamSettings)
    notify: tuple[StrictStr, ...] = DEFAULT_NOTIFY
    mcp: StrictBool = True  # a lead gets okstra's MCP server where its CLI takes one
    source: StrictStr = ""


def _check_profile(profile: Profile) -> None:
    seen: dict[str, int] = {}
    for i, req in enumerate(profile.roles):
        where = f"roles[{i}]"
        if req.role == LEADER:
            raise DataProblem(
                f"{where}.role",
                "the leader role is implicit (every run has exactly one); do not declare it",
            )
        check_id(req.role, f"{where}.role")
        check_id(req.duty, f"{where}.duty")
        if req.role in seen:
            raise DataProblem(
                f"{where}.role",
                f"duplicate role {req.role!r} (already declared in roles[{seen[req.role]}])",
            )
        seen[req.role] = i
        if req.min > req.max:
            raise DataProblem(
                f"{where}.min",
                f"min ({req.min}) is greater than max ({req.max}): expected min <= max",
            )
        if req.max > MAX_ROLE_COUNT:
            raise DataProblem(
                f"{where}.max",
                f"max ({req.max}) is above {MAX_ROLE_COUNT}, the most instances of one role "
                "okstra runs",
            )
        if not req.dynamic and req.max == 0:
            raise DataProblem(
                f"{where}.max",
                "expected max >= 1 (a role that can never be staffed does not belong here)",
            )
        if req.recommended is not None and not req.min <= req.recommended <= req.max:
            raise DataProblem(
                f"{where}.recommended",
                f"recommended ({req.recommended}) is outside [min, max] = [{req.min}, {req.max}]",
            )
    static = {r.role for r in profile.roles if not r.dynamic} | {LEADER}
    for i, req in enumerate(profile.roles):
        for k, other in enumerate(req.exclude_models_of):
            where = f"roles[{i}].exclude_models_of[{k}]"
            if other == req.role:
                raise DataProblem(
                    where, f'a role cannot exclude itself; use distinct = "model" on {req.role!r}'
                )
            if other not in static:
                dynamic = "a dynamic role (no model is chosen for it)"
                what = dynamic if other in seen else "unknown role"
                raise DataProblem(
                    where, f"{what} {other!r}: expected one of {', '.join(sorted(static))}"
                )


# A `[login]` file path may read environment variables, with a default.
LOGIN_FILE_PLACEHOLDER = re.compile(r"\{env\.([A-Za-z_][A-Za-z0-9_]*)(?::-([^{}]*))?\}")


def _check_login(login: LoginSpec) -> None:
    for i, name in enumerate(login.env):
        if not ENV_NAME.fullmatch(name):
            raise DataProblem(
                f"login.env[{i}]", f"expected an environment variable name, got {name!r}"
            )
    for i, path in enumerate(login.files):
        rest = LOGIN_FILE_PLACEHOLDER.sub("", path)
        if not path.strip() or "{" in rest or "}" in rest:
            raise DataProblem(
                f"login.files[{i}]",
                f"expected a path using only {{env.NAME}} or {{env.NAME:-default}}, got {path!r}",
            )
    if login.status:
        first = login.status[0]
        if first != "{cli}":
            raise DataProblem("login.status[0]", f"expected the CLI ({{cli}}), got {first!r}")
        for i, arg in enumerate(login.status[1:], start=1):
            if "{" in arg or "}" in arg:
                raise DataProblem(f"login.status[{i}]", f"expected a plain argument, got {arg!r}")
    if login.status_pattern:
        try:
            re.compile(login.status_pattern)
        except re.error as exc:
            raise DataProblem("login.status_pattern", f"not a regular expression: {exc}") from None


def _check_provider(spec: ProviderSpec) -> None:
    check_id(spec.id, "id")
    if spec.login is not None:
        _check_login(spec.login)
    roles = _check_roles(spec.roles)
    if not spec.models:
        raise DataProblem("models", "expected at least one [[models]] entry")
    ids: dict[str, int] = {}
    names: dict[str, str] = {}  # lower-cased id or alias -> where it was declared
    for i, model in enumerate(spec.models):
        where = f"models[{i}]"
        _check_model_id(model, where, i, ids)
        _check_model_names(model, where, names)
        _check_model_roles(model, where, spec.roles, roles)
        if spec.demo and model.default_for:
            raise DataProblem(
                f"{where}.default_for", "expected none in a demo provider (it is never a default)"
            )


def _check_roles(declared: tuple[str, ...]) -> set[str]:
    """The provider's roles: ids, no duplicates, at least one; returned as a set."""
    roles: set[str] = set()
    for i, role in enumerate(declared):
        check_id(role, f"roles[{i}]")
        if role in roles:
            raise DataProblem(f"roles[{i}]", f"duplicate role {role!r}")
        roles.add(role)
    if not declared:
        raise DataProblem("roles", "expected at least one role")
    return roles


def _check_model_id(model: ModelSpec, where: str, i: int, ids: dict[str, int]) -> None:
    """A model's id and execution; records the id in `ids` (id -> index)."""
    check_id(model.id, f"{where}.id")
    if model.execution.startswith("-") or model.execution != model.execution.strip():
        # It is passed as the value of the CLI's model flag: never let it be a flag.
        raise DataProblem(
            f"{where}.execution", f"expected a model name for the CLI, got {model.execution!r}"
        )
    if model.id in ids:
        raise DataProblem(
            f"{where}.id", f"duplicate model id {model.id!r} (already models[{ids[model.id]}])"
        )
    ids[model.id] = i


def _check_model_names(model: ModelSpec, where: str, names: dict[str, str]) -> None:
    """A model's id and aliases collide with no other model's (case-insensitively)."""
    for j, value in enumerate((model.id, *model.aliases)):
        field_name = f"{where}.id" if j == 0 else f"{where}.aliases[{j - 1}]"
        if j and not value.strip():
            raise DataProblem(field_name, "expected a non-empty alias")
        key = value.lower()
        if key in names and names[key] != where:
            raise DataProblem(
                field_name,
                f"{value!r} collides with a model id or alias of {names[key]} "
                "(aliases are case-insensitive)",
            )
        names[key] = where


def _check_model_roles(
    model: ModelSpec, where: str, declared: tuple[str, ...], roles: set[str]
) -> None:
    """A model's roles and default_for name roles of the provider (and of the model)."""
    for k, role in enumerate(model.roles):
        if role not in roles:
            raise DataProblem(
                f"{where}.roles[{k}]",
                f"role {role!r} is not one of the provider's roles ({', '.join(declared)})",
            )
    effective = set(model.roles) or roles
    for k, role in enumerate(model.default_for):
        if role not in effective:
            raise DataProblem(
                f"{where}.default_for[{k}]",
                f"role {role!r} is not a role of this model "
                f"({', '.join(r for r in declared if r in effective)})",
            )
