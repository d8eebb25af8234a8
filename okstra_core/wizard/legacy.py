"""Legacy (v1) wizard state files: detection, in-memory conversion, companion files.

A v1 state file (no `executionIdentityVersion`, or version 1) chose its team with
per-provider fields (`workers_override`, `lead_provider`, `claude_model`, …). okstra
never writes such a file. Instead it converts the file in memory into a v2 state
(SPEC §6.4) and the engine saves progress to a *companion* next to it,
`<name>.v2.<sha256-of-v1-bytes>.json`, that records `legacySource: {path, sha256}`.
Loading the v1 file again finds the companion by digest and resumes from it; when
the v1 bytes change, the digest changes and a fresh conversion starts (SPEC §6.5).

Public API (small and stable; the wizard engine calls it from `Wizard.open`):

```python
V1_PROVIDER_FIELDS: frozenset[str]
    # v1 provider fields, snake_case and camelCase forms (for the mixed-version check)
def is_v1(raw: dict) -> bool
    # no executionIdentityVersion, or version 1 (a boolean is not a version)
def convert_v1(raw, *, profile, pool, scopes, entry_mode, source, sha256) -> dict
    # a v2 state dict; `profile` is None when the v1 file has no (known) task type
def companion_for(v1_path, v1_bytes) -> tuple[Path, bool]
    # (companion path to use, whether it already exists as this source's companion)
def load_legacy(v1_path, *, profile_loader, pool, scopes, environment)
    -> tuple[Path, dict, bool]
    # (companion path, v2 state dict, resumed); never writes anything
```

The converted dict is in the v2 file shape (`okstra_core.wizard.state`): every answer
taken over from the v1 file — static answers and converted role choices alike — is an
`answered` entry `{step, answer, provenance: "converted:v1"}`, and `legacySource`
names the v1 file (resolved path) and the sha256 of its bytes.
Everything here is read-only: the engine saves the companion atomically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from okstra_core.catalog.models import LEADER, Profile, RoleKind, RoleRequirement
from okstra_core.errors import StateFileError, UsageError
from okstra_core.store import parse_json_object, read_bytes
from okstra_core.wizard.ids import CHOOSE_AGAIN_ANSWER, REUSE_ANSWER

# One list of v1 fields: the v2 loader refuses them next to a v2 version (mixed file).
from okstra_core.wizard.state import CONVERTED_V1, V1_PROVIDER_FIELDS

if TYPE_CHECKING:
    from okstra_core.defaults import DefaultScopes
    from okstra_core.environment import Environment
    from okstra_core.pool import ModelPool, PoolModel

__all__ = [
    "CONVERTED",
    "LEGACY_SOURCE_FIELD",
    "V1_PROVIDER_FIELDS",
    "companion_for",
    "convert_v1",
    "is_v1",
    "load_legacy",
    "source_digest",
]

LEGACY_SOURCE_FIELD = "legacySource"
CONVERTED = CONVERTED_V1
LEADER_SESSION_STEP = "leader-session"
LEADER_SESSION_ANSWER = "continue"

_V2_ONLY_FIELDS = ("roleCounts", "roleModels", "roleSelectionOrder")

# The first of these (in profile order) inherits the v1 worker roster.
_CROSS_VERIFICATION_ROLES = frozenset({"analyser", "designer", "planner", "verifier"})
# v1 never asked a worker roster for implementation (the roster was mandatory there and
# its per-provider model fields belonged to the executor), so none is converted.
_ROSTERLESS_TASK_TYPES = frozenset({"implementation"})
# v1's default provider for the lead and the report writer.
_V1_DEFAULT_PROVIDER = "claude"
_CRITIC_OFF = frozenset({"off", "none", "no"})

# v1 step ids that v2 keeps as static steps, split around the role selection block.
_STATIC_BEFORE_ROLES = (
    "task_pick",
    "task_group",
    "task_id",
    "brief",
    "task_type",
    "approved_plan",
    "reuse_previous",
)
_STATIC_AFTER_ROLES = ("directive_pick", "directive", "related_tasks_pick", "related_tasks")

# Static answers carried over verbatim (string fields; null/absent → "").
_STRING_FIELDS = (
    "workspace_root",
    "project_root",
    "project_id",
    "host_runtime",
    "task_mode",
    "task_key",
    "task_group",
    "task_id",
    "brief_path",
    "task_type",
    "approved_plan_path",
    "directive",
    "related_tasks_raw",
    "updated_at",
)
_ENTRY_MODES = ("spawn-process", "current-session")
_TASK_MODES = ("", "new", "existing")
# A v1 file from before host runtimes were recorded ran outside any agent host.
_DEFAULT_HOST = "terminal"
# Which state field a static step's answer is, for steps whose answer is that field.
_STATIC_STEP_FIELD = {
    "task_group": "task_group",
    "task_id": "task_id",
    "brief": "brief_path",
    "task_type": "task_type",
    "approved_plan": "approved_plan_path",
    "directive": "directive",
    "related_tasks": "related_tasks_raw",
}


def is_v1(raw: Mapping[str, Any]) -> bool:
    """Tell whether a parsed state file is a legacy (v1) one.

    Args:
        raw: the parsed JSON object of a state file.

    Returns:
        True when `executionIdentityVersion` is absent, null or the integer 1. Any
        other value (2, an unknown version, a boolean, a string) is not v1; the
        engine refuses unknown versions by name.
    """
    if "executionIdentityVersion" not in raw:
        return True
    version = raw["executionIdentityVersion"]
    return version is None or (type(version) is int and version == 1)


def source_digest(v1_bytes: bytes) -> str:
    """The sha256 hex digest that names and matches a v1 file's companion."""
    return hashlib.sha256(v1_bytes).hexdigest()


def _source_record(v1_path: Path, digest: str) -> dict[str, str]:
    return {"path": str(Path(v1_path).resolve()), "sha256": digest}


def _companion_name(v1_path: Path, digest: str, n: int | None = None) -> Path:
    suffix = f".{n}" if n is not None else ""
    return v1_path.with_name(f"{v1_path.name}.v2.{digest}{suffix}.json")


def _is_companion_of(candidate: Path, record: Mapping[str, str]) -> bool:
    """True when `candidate` is a v2 companion whose `legacySource` is `record`.

    Anything else at that name (another source's companion, an unparsable or foreign
    file) belongs to someone else and is left alone.
    """
    try:
        data = orjson.loads(read_bytes(candidate, what="wizard state companion"))
    except orjson.JSONDecodeError:
        return False
    if not isinstance(data, dict):
        return False
    source = data.get(LEGACY_SOURCE_FIELD)
    return (
        isinstance(source, dict)
        and source.get("path") == record["path"]
        and source.get("sha256") == record["sha256"]
    )


def _numbered_companions(v1_path: Path, digest: str) -> list[tuple[int, Path]]:
    prefix = f"{v1_path.name}.v2.{digest}."
    found: list[tuple[int, Path]] = []
    try:
        entries = list(v1_path.parent.iterdir())
    except FileNotFoundError:
        return found
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        middle = name[len(prefix) : -len(".json")]
        if middle.isdigit() and not middle.startswith("0") and entry.is_file():
            found.append((int(middle), entry))
    return sorted(found)


def companion_for(v1_path: Path, v1_bytes: bytes) -> tuple[Path, bool]:
    """Find the companion file that carries the v2 progress of a v1 state file.

    The canonical name is `<name>.v2.<sha256>.json`. When that name holds a file of a
    different source (its `legacySource` path or digest differs), the companion is
    `<name>.v2.<sha256>.<n>.json`: an existing numbered companion of this source if
    there is one, else the first free `n` from 1.

    Args:
        v1_path: the v1 state file.
        v1_bytes: its current bytes (the digest is taken from these, not re-read).

    Returns:
        `(path, exists)`: the companion to use and whether it already holds this
        source's progress. Nothing is written.
    """
    v1_path = Path(v1_path)
    digest = source_digest(v1_bytes)
    record = _source_record(v1_path, digest)
    canonical = _companion_name(v1_path, digest)
    if not canonical.exists():
        # Numbered companions can outlive the canonical one (deleted by hand).
        for _, numbered in _numbered_companions(v1_path, digest):
            if _is_companion_of(numbered, record):
                return numbered, True
        return canonical, False
    if _is_companion_of(canonical, record):
        return canonical, True
    taken: set[int] = set()
    for n, numbered in _numbered_companions(v1_path, digest):
        if _is_companion_of(numbered, record):
            return numbered, True
        taken.add(n)
    n = 1
    while n in taken or _companion_name(v1_path, digest, n).exists():
        n += 1
    return _companion_name(v1_path, digest, n), False


# ---- reading v1 fields, with types checked -------------------------------------------


@dataclass(frozen=True)
class _V1Reader:
    """Typed access to a v1 payload; a wrong type is a `StateFileError` naming the field."""

    raw: Mapping[str, Any]
    source: Path

    def _fail(self, name: str, expected: str) -> StateFileError:
        got = type(self.raw[name]).__name__
        return StateFileError(
            f"expected {expected} in a v1 wizard state, got {got}",
            path=self.source,
            field=name,
        )

    def string(self, *names: str) -> str:
        """The first non-empty of `names`, stripped ("" if none); each is type-checked."""
        found = ""
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise self._fail(name, "a string")
            found = found or value.strip()
        return found

    def optional_bool(self, name: str) -> bool | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self._fail(name, "true, false or null")
        return value

    def string_list(self, name: str) -> list[str]:
        value = self.raw.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._fail(name, "an array of strings")
        return list(value)

    def roster(self, *names: str) -> list[str]:
        """A worker roster: a comma-separated string or an array of provider ids.

        The first non-empty of `names` wins; each is type-checked.
        """
        found: list[str] = []
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if isinstance(value, str):
                items = value.split(",")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                items = list(value)
            else:
                raise self._fail(name, "a comma-separated string or an array of provider ids")
            # v1 listed the report writer among the workers; it is its own role in v2.
            providers = [
                item.strip().lower()
                for item in items
                if item.strip() and item.strip().lower() != "report-writer"
            ]
            found = found or providers
        return found

    def provider_model(self, provider_id: str) -> str:
        """The legacy `<provider>_model` (or `<provider>Model`) value."""
        camel = _camel(provider_id) + "Model"
        return self.string(f"{provider_id.replace('-', '_')}_model", camel)


_V1_STRING_FIELDS = (
    *(f for f in V1_PROVIDER_FIELDS if f not in ("workers_override", "workers", "workersOverride")),
    "host_entry_mode",
)
_V1_ROSTER_FIELDS = ("workers_override", "workers", "workersOverride")
_V1_BOOL_FIELDS = ("confirmed", "aborted", "use_defaults", "reuse_previous")
_V1_LIST_FIELDS = ("answered", "available_functions", "profile_workers")


def _check_v1_types(reader: _V1Reader) -> None:
    """Type-check every field the conversion may read, whether or not it is used.

    A malformed v1 file is refused as a whole (naming the field) rather than being
    converted differently depending on which fields its task type happens to read.
    """
    for name in (*_STRING_FIELDS, *sorted(_V1_STRING_FIELDS)):
        reader.string(name)
    for name in _V1_ROSTER_FIELDS:
        reader.roster(name)
    for name in _V1_BOOL_FIELDS:
        reader.optional_bool(name)
    for name in _V1_LIST_FIELDS:
        reader.string_list(name)


def _camel(snake: str) -> str:
    head, *rest = snake.replace("-", "_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# ---- model look-up -------------------------------------------------------------------


def _supports(model: PoolModel, role: str) -> bool:
    return role in model.roles


def _legacy_model(
    pool: ModelPool,
    scopes: DefaultScopes,
    provider_id: str,
    role: str,
    value: str,
) -> PoolModel | None:
    """Map a v1 (provider, model value) to a pool model for `role`, or None to drop it.

    A v1 model value may be an alias (`opus`), a model id (`opus-4.6`), a full ref
    (`claude/opus-4.6`) or the CLI execution value (`claude-opus-4-6`); all resolve.
    An empty value means the provider's default for the role (the highest-scope
    default of that provider, else its first model for the role). A model that no
    longer exists, or does not serve the role, is dropped: the engine asks again.
    """
    provider_id = provider_id.strip().lower()
    if not provider_id:
        return None
    provider_models = [m for m in pool.models() if m.provider_id == provider_id]
    if not provider_models:
        return None
    if not value:
        return _provider_default(pool, scopes, provider_id, role)
    model: PoolModel | None = None
    try:
        if "/" in value:
            candidate = pool.lookup(value)
            model = candidate if candidate.provider_id == provider_id else None
        else:
            model = pool.resolve_alias(provider_id, value)
    except UsageError:
        folded = value.casefold()
        model = next((m for m in provider_models if m.execution.casefold() == folded), None)
    if model is None or not _supports(model, role):
        return None
    return model


def _provider_default(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str
) -> PoolModel | None:
    for model, _provenance in scopes.candidates(role, pool):
        if model.provider_id == provider_id and _supports(model, role):
            return model
    return next((m for m in pool.list(role) if m.provider_id == provider_id), None)


# ---- conversion ----------------------------------------------------------------------


@dataclass
class _RoleChoices:
    """The role selection taken over from v1, before it is laid out as answered steps."""

    counts: dict[str, int] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)

    def set_count(self, requirement: RoleRequirement, wanted: int) -> int:
        """Record a count for an adjustable/optional role; return the effective count."""
        count = max(requirement.min, min(requirement.max, wanted))
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            self.counts[requirement.role] = count
        return count

    def set_models(self, role: str, refs: Iterable[str]) -> None:
        refs = list(refs)
        if refs:
            self.models[role] = refs


def _clamped_prefix(
    pool: ModelPool,
    scopes: DefaultScopes,
    role: str,
    providers: list[str],
    model_for: Callable[[str], str],
) -> list[str]:
    """Models for ordinals 1.. of `role`, stopping at the first that cannot be kept.

    Role models are a prefix by ordinal (the engine refuses ordinal n before n-1), so a
    dropped model ends the converted prefix; the engine asks again from there.
    """
    refs: list[str] = []
    for provider_id in providers:
        model = _legacy_model(pool, scopes, provider_id, role, model_for(provider_id))
        if model is None:
            break
        refs.append(model.ref)
    return refs


def _convert_roles(
    reader: _V1Reader,
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    entry_mode: str,
    task_type: str,
) -> _RoleChoices:
    choices = _RoleChoices()
    static = {r.role: r for r in profile.static_roles}

    # The first cross-verification role inherits the worker roster.
    cross = next((r for r in profile.static_roles if r.role in _CROSS_VERIFICATION_ROLES), None)
    if cross is not None and task_type not in _ROSTERLESS_TASK_TYPES:
        roster = reader.roster("workers_override", "workers", "workersOverride")
        use_defaults = reader.optional_bool("use_defaults")
        if not roster and use_defaults is not None:
            # The person answered "defaults or customize" without overriding the
            # roster: v1 ran the profile's default roster.
            roster = reader.roster("profile_workers")
        if roster:
            count = choices.set_count(cross, len(roster))
            choices.set_models(
                cross.role,
                _clamped_prefix(pool, scopes, cross.role, roster[:count], reader.provider_model),
            )
        elif use_defaults is not None:
            choices.set_count(cross, cross.recommended_count)

    singles: list[tuple[str, str, str]] = []  # (role, provider, model value)
    if entry_mode == "spawn-process":
        lead_provider = reader.string("lead_provider", "leadProvider")
        lead_model = reader.string("lead_model", "leadModel")
        if lead_provider or lead_model:
            singles.append((LEADER, lead_provider or _V1_DEFAULT_PROVIDER, lead_model))
    rw_provider = reader.string("report_writer_provider", "reportWriterProvider")
    rw_model = reader.string("report_writer_model", "reportWriterModel")
    if rw_provider or rw_model:
        singles.append(("report-writer", rw_provider or _V1_DEFAULT_PROVIDER, rw_model))
    executor = reader.string("executor").lower()
    if executor:
        singles.append(("implementer", executor, reader.provider_model(executor)))
    critic = reader.string("critic").lower()
    critic_role = static.get("critic")
    if critic in _CRITIC_OFF:
        if critic_role is not None:
            choices.set_count(critic_role, 0)
    elif critic:
        singles.append(("critic", critic, reader.provider_model(critic)))

    for role, provider_id, value in singles:
        requirement = static.get(role)
        if role != LEADER and requirement is None:
            continue
        if requirement is not None and choices.set_count(requirement, 1) < 1:
            continue
        model = _legacy_model(pool, scopes, provider_id, role, value)
        if model is not None:
            choices.set_models(role, [model.ref])
    return choices


def _selection_order(
    profile: Profile, choices: _RoleChoices, entry_mode: str
) -> list[tuple[str, str]]:
    """Lay converted choices out as `(step id, answer)` in the engine's asking order.

    SPEC §6.2: leader-session, role counts, role adds, then role models (leader first,
    then profile order, ordinal from 1).
    """
    order: list[tuple[str, str]] = []
    if entry_mode == "current-session":
        order.append((LEADER_SESSION_STEP, LEADER_SESSION_ANSWER))
    static = profile.static_roles
    for r in static:
        if r.kind is RoleKind.ADJUSTABLE and r.role in choices.counts:
            order.append((f"role-count:{r.role}", str(choices.counts[r.role])))
    for r in static:
        if r.kind is RoleKind.OPTIONAL and r.role in choices.counts:
            order.append((f"role-add:{r.role}", str(choices.counts[r.role])))
    for role in (LEADER, *(r.role for r in static)):
        for ordinal, ref in enumerate(choices.models.get(role, ()), start=1):
            order.append((f"role-model:{role}:{ordinal}", ref))
    return order


def _static_answer(step: str, state: Mapping[str, Any], reader: _V1Reader) -> str | None:
    """The v2 answer of a static step the v1 file answered, or None to drop the step."""
    if step == "task_pick":
        if state["task_mode"] == "new":
            return "new"
        return state["task_key"] or None
    if step == "reuse_previous":
        reused = reader.optional_bool("reuse_previous")
        if reused is None:
            return None
        return REUSE_ANSWER if reused else CHOOSE_AGAIN_ANSWER
    if step == "directive_pick":
        return "write" if state["directive"] else "skip"
    if step == "related_tasks_pick":
        return "choose" if state["related_tasks_raw"] else "skip"
    # An empty text answer was never a valid answer: the engine asks the step again.
    value = state[_STATIC_STEP_FIELD[step]]
    return value if isinstance(value, str) and value else None


def _required(reader: _V1Reader, name: str) -> str:
    value = reader.string(name)
    if not value:
        raise StateFileError(
            "required field is missing: a v1 wizard state needs it to be resumed",
            path=reader.source,
            field=name,
        )
    return value


def convert_v1(
    raw: Mapping[str, Any],
    *,
    profile: Profile | None,
    pool: ModelPool,
    scopes: DefaultScopes,
    entry_mode: str,
    source: Path,
    sha256: str,
) -> dict[str, Any]:
    """Convert a parsed v1 state into a v2 state dict, in memory.

    Args:
        raw: the parsed v1 JSON object.
        profile: the role profile of the v1 task type, or None when the v1 file has
            no (known) task type yet — then only static answers carry over.
        pool: the model pool (aliases resolve through it).
        scopes: model default scopes ("the provider's default" for a v1 provider
            chosen without a model).
        entry_mode: `spawn-process` or `current-session`.
        source: the v1 file (for `legacySource` and error messages).
        sha256: the digest of the v1 bytes.

    Returns:
        A v2 state dict in the file shape of SPEC §6.4 (`okstra_core.wizard.state`):
        every carried-over answer is an `answered` entry with provenance
        `converted:v1`, and `legacySource` names the v1 file and digest.

    Raises:
        StateFileError: a v1 field has the wrong type or a required one is missing,
            or the file mixes versions.
    """
    source = Path(source)
    if not is_v1(raw):
        raise StateFileError("not a v1 wizard state", path=source, field="executionIdentityVersion")
    mixed = [name for name in _V2_ONLY_FIELDS if name in raw]
    if mixed:
        raise StateFileError(
            "mixed wizard state versions are not allowed", path=source, field=mixed[0]
        )
    if entry_mode not in _ENTRY_MODES:
        raise StateFileError(
            f"unknown entry mode {entry_mode!r} (expected one of: {', '.join(_ENTRY_MODES)})",
            path=source,
            field="host_entry_mode",
        )
    reader = _V1Reader(raw, source)
    _check_v1_types(reader)
    state: dict[str, Any] = {name: reader.string(name) for name in _STRING_FIELDS}
    state["project_root"] = _required(reader, "project_root")
    state["host_runtime"] = state["host_runtime"] or _DEFAULT_HOST
    if state["task_mode"] not in _TASK_MODES:
        raise StateFileError(
            f"unknown task mode {state['task_mode']!r} (expected 'new' or 'existing')",
            path=source,
            field="task_mode",
        )
    state["host_entry_mode"] = entry_mode
    state["available_functions"] = reader.string_list("available_functions")
    state["aborted"] = bool(reader.optional_bool("aborted"))
    # A converted team is shown again before anything runs: never carried as confirmed.
    reader.optional_bool("confirmed")
    state["confirmed"] = None
    state["edit_target"] = ""
    v1_answered = list(dict.fromkeys(reader.string_list("answered")))

    if profile is None:
        # Without a known task type there is no role block yet; the engine asks it.
        state["task_type"] = ""
        state["approved_plan_path"] = ""
        v1_answered = [s for s in v1_answered if s not in ("task_type", "approved_plan")]
        order: list[tuple[str, str]] = []
        choices = _RoleChoices()
    else:
        choices = _convert_roles(reader, profile, pool, scopes, entry_mode, state["task_type"])
        order = _selection_order(profile, choices, entry_mode)

    answered: list[dict[str, str]] = []
    for group in (_STATIC_BEFORE_ROLES, None, _STATIC_AFTER_ROLES):
        if group is None:
            pairs = order
        else:
            pairs = []
            for step in v1_answered:
                if step in group:
                    answer = _static_answer(step, state, reader)
                    if answer is not None:
                        pairs.append((step, answer))
        answered += [
            {"step": step, "answer": answer, "provenance": CONVERTED} for step, answer in pairs
        ]
    state.update(
        {
            "executionIdentityVersion": 2,
            "roleCounts": dict(choices.counts),
            "roleModels": {role: list(refs) for role, refs in choices.models.items()},
            "roleSelectionOrder": [step for step, _ in order],
            "answered": answered,
            "remembered_answers": {},
            "revision": 0,
            LEGACY_SOURCE_FIELD: _source_record(source, sha256),
        }
    )
    return state


def _entry_mode(reader: _V1Reader) -> str:
    mode = reader.string("host_entry_mode")
    if not mode:
        return "spawn-process"
    if mode not in _ENTRY_MODES:
        raise StateFileError(
            f"unknown entry mode {mode!r} (expected one of: {', '.join(_ENTRY_MODES)})",
            path=reader.source,
            field="host_entry_mode",
        )
    return mode


def _parse_v1(v1_path: Path, data: bytes) -> dict[str, Any]:
    return parse_json_object(data, v1_path, what="wizard state JSON object", error=StateFileError)


def load_legacy(
    v1_path: Path,
    *,
    profile_loader: Callable[[str], Profile],
    pool: ModelPool,
    scopes: DefaultScopes,
    environment: Environment,
) -> tuple[Path, dict[str, Any], bool]:
    """Open a v1 state file: resume its companion, or convert it afresh.

    Args:
        v1_path: the v1 state file (read once; never written).
        profile_loader: task type → `Profile` (e.g. `Catalog.profile`); a `UsageError`
            means the task type no longer exists, and the engine asks it again.
        pool: the model pool.
        scopes: model default scopes.
        environment: the clock stamps `updated_at` when the v1 file has none.

    Returns:
        `(companion path, v2 state dict, resumed)`. `resumed` is True when the dict is
        the existing companion's content (validated by the engine's v2 loader).

    Raises:
        StateFileError: the v1 file or its companion is unreadable or malformed.
    """
    v1_path = Path(v1_path)
    data = read_bytes(v1_path, what="wizard state file", error=StateFileError)
    companion, exists = companion_for(v1_path, data)
    if exists:
        stored = _parse_companion(companion)
        return companion, stored, True
    raw = _parse_v1(v1_path, data)
    reader = _V1Reader(raw, v1_path)
    entry_mode = _entry_mode(reader)
    task_type = reader.string("task_type")
    profile: Profile | None = None
    if task_type:
        try:
            profile = profile_loader(task_type)
        except UsageError:
            profile = None
    state = convert_v1(
        raw,
        profile=profile,
        pool=pool,
        scopes=scopes,
        entry_mode=entry_mode,
        source=v1_path,
        sha256=source_digest(data),
    )
    if not state["updated_at"]:
        state["updated_at"] = environment.now().isoformat()
    return companion, state, False


def _parse_companion(companion: Path) -> dict[str, Any]:
    # It matched a moment ago; a failure here means it changed under us.
    data = read_bytes(companion, what="wizard state companion", error=StateFileError)
    return parse_json_object(data, companion, what="wizard state JSON object", error=StateFileError)
