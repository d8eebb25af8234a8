"""Pydantic models of the data okstra ships in `prompts/` (SPEC §3) and reads from config.

These are the shared contract of the whole core: loaders build them, the pool,
resolver, wizard and prepare read them. All are frozen; unknown keys are refused.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

EntryMode = Literal["spawn-process", "current-session"]
Runner = Literal["current-session", "native-session", "cli-wrapper"]
Distinct = Literal["model", "provider"]
SessionIdKind = Literal["uuid4", "token", "discover"]

LEADER = "leader"
TASK_TYPES: tuple[str, ...] = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "implementation",
    "final-verification",
    "release-handoff",
)
# Task types whose prepare needs an approved plan (stage-scoped).
STAGE_SCOPED_TASK_TYPES: frozenset[str] = frozenset({"implementation", "final-verification"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleKind(StrEnum):
    FIXED = "fixed"
    ADJUSTABLE = "adjustable"
    OPTIONAL = "optional"
    DYNAMIC = "dynamic"


class RoleRequirement(_Frozen):
    """One `[[roles]]` entry of a profile's front matter."""

    role: StrictStr = Field(min_length=1)
    duty: StrictStr = Field(min_length=1)
    min: StrictInt = Field(default=1, ge=0)
    max: StrictInt = Field(default=1, ge=0)
    recommended: StrictInt | None = None
    distinct: Distinct = "model"
    exclude_models_of: tuple[StrictStr, ...] = ()
    dynamic: StrictBool = False
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


class Profile(_Frozen):
    """A phase's role profile: `prompts/profiles/<task-type>.md`."""

    task_type: StrictStr
    title: StrictStr = ""
    summary: StrictStr = ""
    roles: tuple[RoleRequirement, ...]
    body: StrictStr = ""
    source: StrictStr = ""

    def role(self, role_id: str) -> RoleRequirement | None:
        for r in self.roles:
            if r.role == role_id:
                return r
        return None

    @property
    def static_roles(self) -> tuple[RoleRequirement, ...]:
        """Roles selected in the wizard (all but dynamic), in profile order."""
        return tuple(r for r in self.roles if not r.dynamic)

    @property
    def dynamic_roles(self) -> tuple[RoleRequirement, ...]:
        return tuple(r for r in self.roles if r.dynamic)


class DiscoverSpec(_Frozen):
    """How to find a session id that the CLI minted itself (codex)."""

    glob: StrictStr  # e.g. "{env.CODEX_HOME}/sessions/**/rollout-*.jsonl"
    id_pattern: StrictStr  # regex with one group capturing the id from the file name
    cwd_field: StrictStr = "payload.cwd"  # dotted path in the first JSON line
    # Strict: a boolean or a numeric string is a mistake in the file, not a number.
    timeout_seconds: float = Field(default=10.0, strict=True, gt=0, allow_inf_nan=False)
    default_home: StrictStr = ""  # used for {env.X} when X is unset, e.g. "~/.codex"


class LaunchSpec(_Frozen):
    """argv templates of a provider CLI; never run through a shell."""

    version: tuple[StrictStr, ...]
    new: tuple[StrictStr, ...]
    resume: tuple[StrictStr, ...]
    session_id: SessionIdKind = "uuid4"
    discover: DiscoverSpec | None = None
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    # Flags the leader launch relies on; preflight checks the CLI's --help mentions them.
    required_flags: tuple[StrictStr, ...] = ()
    help: tuple[StrictStr, ...] = ()


class ModelSpec(_Frozen):
    """One `[[models]]` entry of a provider file."""

    id: StrictStr = Field(min_length=1)
    display: StrictStr = Field(min_length=1)
    execution: StrictStr = Field(min_length=1)
    aliases: tuple[StrictStr, ...] = ()
    version: Literal["pinned", "channel"] = "channel"
    default_for: tuple[StrictStr, ...] = ()
    roles: tuple[StrictStr, ...] = ()  # empty = every role of the provider


class ProviderSpec(_Frozen):
    """A provider: `prompts/providers/<id>.toml` or `<config>/providers/<id>.toml`."""

    id: StrictStr = Field(min_length=1)
    display_label: StrictStr = Field(min_length=1)
    cli: StrictStr = Field(min_length=1)
    # How a person installs the CLI (one command line, shown by doctor and preflight;
    # okstra never runs it).
    install: StrictStr | None = Field(
        default=None, min_length=1, max_length=300, pattern=r"^[^\r\n]+$"
    )
    roles: tuple[StrictStr, ...]
    launch: LaunchSpec
    models: tuple[ModelSpec, ...]
    source: StrictStr = ""
    bundled: StrictBool = True


class HostSpec(_Frozen):
    """A host runtime: `prompts/hosts/<id>.toml`."""

    id: StrictStr
    display_label: StrictStr
    native_provider: StrictStr | None = None
    entry_modes: tuple[EntryMode, ...] = ("spawn-process",)
    native_sessions: StrictBool = False
    # Environment variables whose presence means okstra runs inside this host.
    detect_env: tuple[StrictStr, ...] = ()
    source: StrictStr = ""


class ModelDefaults(_Frozen):
    """`modelDefaults`: role -> non-empty list of model refs."""

    by_role: dict[StrictStr, tuple[StrictStr, ...]] = Field(default_factory=dict)
    source: StrictStr = ""


class GlobalConfig(_Frozen):
    """`<config dir>/config.json`."""

    model_defaults: ModelDefaults = ModelDefaults()
    disabled_providers: tuple[StrictStr, ...] = ()
    language: StrictStr | None = None
    theme: StrictStr | None = None
    source: StrictStr = ""
