"""State files of the earlier okstra: detection, in-memory conversion, companion files.

The earlier okstra wrote two wizard state shapes, and okstra writes neither:

* **v1** (no `executionIdentityVersion`, or version 1) chose its team with
  per-provider fields (`workers_override`, `lead_provider`, `claude_model`, …);
* its own **v2** shape (`executionIdentityVersion: 2`): `roleCounts`, `roleModels`,
  `roleSelectionOrder` as today, but `answered` is a list of step ids and the file
  carries the earlier wizard's extra fields (`use_defaults`, `profile_workers`,
  `selected_stages`, …). `is_earlier_v2` tells it from a v2 file okstra wrote.

Both are converted in memory into a v2 state in okstra's shape. The source
file is never written: the engine saves progress to a *companion* next to it,
`<name>.v2.<sha256-of-source-bytes>.json`, that records `legacySource: {path, sha256}`.
Opening the source again finds the companion by digest and resumes from it; when the
source bytes change, the digest changes and a fresh conversion starts.

Companions are looked for in this order: okstra's own (`<name>.v2.<sha>.json`, then
`<name>.v2.<sha>.<n>.json`), then those the earlier okstra wrote in its v2 shape under
the same names or under its older name `<name>.v2.json`. A companion of the earlier
okstra is taken over (converted like a v2 source) and left untouched; progress goes
to a free content-addressed name. A companion that matches the source but is invalid
is skipped — left as it is — and the source is converted afresh, with a note.

Notes (why something was skipped, slugified or not carried over) are returned with
the conversion; the protocol prints them under `notes`.

Public API (the wizard engine calls `open_legacy` and `is_earlier_v2`):

```python
V1_PROVIDER_FIELDS: frozenset[str]
def is_v1(raw) -> bool
def is_earlier_v2(raw) -> bool
def earlier_companion_source(raw, path) -> Path | None
def convert_v1(raw, *, profile, pool, scopes, entry_mode, source, sha256) -> dict
def convert_earlier_v2(raw, *, profile, pool, scopes, source, sha256) -> dict
def companion_for(source_path, source_bytes) -> tuple[Path, bool]
def open_legacy(source_path, *, profile_loader, pool, scopes, environment) -> LegacyOpen
def load_legacy(...) -> tuple[Path, dict, bool]   # open_legacy without the notes
```

The converted dict is in the v2 file shape (`okstra_core.wizard.state`): every answer
taken over is an `answered` entry `{step, answer, provenance}` — `converted:v1` for a
v1 source, `converted:v2` for the earlier v2 shape, `default:<scope>` for a model the
conversion took from the role's default candidates — and `legacySource` names the
source file (resolved path) and the sha256 of its bytes. Nothing here writes a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from okstra_core.catalog.models import LEADER, Profile, RoleKind, RoleRequirement
from okstra_core.compat.flags import CROSS_VERIFICATION_ROLES, default_candidates, legacy_model
from okstra_core.errors import OkstraError, StateFileError, UsageError
from okstra_core.store import parse_json_object, read_bytes
from okstra_core.tasks import check_segment
from okstra_core.wizard.ids import CHOOSE_AGAIN_ANSWER, REUSE_ANSWER

# One list of v1 fields: the v2 loader refuses them next to a v2 version (mixed file).
from okstra_core.wizard.state import CONVERTED_V1, V1_PROVIDER_FIELDS, parse_v2

from ..records import dataclass, field

if TYPE_CHECKING:
    from okstra_core.defaults import DefaultScopes
    from okstra_core.environment import Environment
    from okstra_core.pool import ModelPool, PoolModel

__all__ = [
    "CONVERTED",
    "CONVERTED_V2",
    "LEGACY_SOURCE_FIELD",
    "V1_PROVIDER_FIELDS",
    "LegacyOpen",
    "companion_for",
    "convert_earlier_v2",
    "convert_v1",
    "earlier_companion_source",
    "is_earlier_v2",
    "is_v1",
    "load_legacy",
    "open_legacy",
    "source_digest",
]

LEGACY_SOURCE_FIELD = "legacySource"
CONVERTED = CONVERTED_V1
CONVERTED_V2 = "converted:v2"
LEADER_SESSION_STEP = "leader-session"
LEADER_SESSION_ANSWER = "continue"

_V2_ONLY_FIELDS = ("roleCounts", "roleModels", "roleSelectionOrder")

# The first of these (in profile order) inherits the v1 worker roster.
_CROSS_VERIFICATION_ROLES = CROSS_VERIFICATION_ROLES
# v1's per-provider model fields belonged to the executor in implementation: its
# verifiers get the role's default candidates, never those values.
_ROSTERLESS_TASK_TYPES = frozenset({"implementation"})
# v1's default provider for the lead, the report writer and the executor.
_V1_DEFAULT_PROVIDER = "claude"
_CRITIC_OFF = frozenset({"off", "none", "no"})
_CRITIC_STEPS = ("critic_pick", "critic_text")

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

# Answers of the earlier wizard that this okstra has no place for: a non-empty value
# is not carried over, and a note says so (field → what it was).
_DROPPED_ANSWERS = {
    "selected_stages": "the stages to run",
    "handoff_mode": "the hand-off mode",
    "handoff_stages": "the hand-off stages",
    "analysis_target": "the analysis target",
    "feature_evidence_path": "the feature evidence file",
    "project_evidence_path": "the project evidence file",
    "clarification_response_path": "the clarification response file",
    "selected_direction_path": "the selected direction file",
    "pr_template_path": "the pull-request template",
    "fix_cycle": "the fix cycle",
    "worker_models_raw": "the extra worker models",
}
# Fields only the earlier wizard wrote (its bookkeeping, or answers of steps this
# okstra does not have). Any of them in a v2-versioned file marks the earlier shape.
_EARLIER_ONLY_FIELDS = frozenset(
    {
        *_DROPPED_ANSWERS,
        "use_defaults",
        "profile_workers",
        "critic_pending_text",
        "workers_custom_pending",
        "reuse_previous",
        "reuse_worktree",
        "pr_template_pick",
        "pr_template_scope",
        "clarification_pending",
        "base_ref",
    }
)


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


def is_earlier_v2(raw: Mapping[str, Any]) -> bool:
    """Tell whether a v2-versioned state file is in the earlier okstra's shape.

    The earlier okstra's v2 file lists `answered` as step ids (okstra writes objects)
    and carries fields okstra never writes (`use_defaults`, `profile_workers`,
    `selected_stages`, …). A file with neither is okstra's own and is validated as
    such (an unknown field there stays an error).
    """
    version = raw.get("executionIdentityVersion")
    if type(version) is not int or version != 2:
        return False
    answered = raw.get("answered")
    if isinstance(answered, list) and any(isinstance(item, str) for item in answered):
        return True
    return any(name in raw for name in _EARLIER_ONLY_FIELDS)


def _source_path_of(raw: Mapping[str, Any]) -> str | None:
    source = raw.get(LEGACY_SOURCE_FIELD)
    if isinstance(source, dict) and isinstance(source.get("path"), str) and source["path"]:
        return str(source["path"])
    return None


def earlier_companion_source(raw: Mapping[str, Any], path: Path) -> Path | None:
    """The source file of an earlier okstra companion opened directly, or None.

    Opening `x.json.v2.json` (or `x.json.v2.<sha>.json` in the earlier shape) is
    opening `x.json`: the companion is found from there, by digest, as always. None
    when the file is not such a companion or its source no longer exists.
    """
    if not is_earlier_v2(raw):
        return None
    recorded = _source_path_of(raw)
    if recorded is None:
        return None
    source = Path(recorded)
    if source == Path(path).resolve() or not source.is_file():
        return None
    return source


def source_digest(source_bytes: bytes) -> str:
    """The sha256 hex digest that names and matches a source file's companion."""
    return hashlib.sha256(source_bytes).hexdigest()


def _source_record(source: Path, digest: str) -> dict[str, str]:
    return {"path": str(Path(source).resolve()), "sha256": digest}


def _companion_name(source: Path, digest: str, n: int | None = None) -> Path:
    suffix = f".{n}" if n is not None else ""
    return source.with_name(f"{source.name}.v2.{digest}{suffix}.json")


def _older_companion_name(source: Path) -> Path:
    """The earlier okstra's first companion name: `<name>.v2.json`."""
    return source.with_name(f"{source.name}.v2.json")


def _read_candidate(candidate: Path) -> dict[str, Any] | None:
    """A companion candidate's JSON object, or None when it is not one (or unreadable)."""
    try:
        data = orjson.loads(read_bytes(candidate, what="wizard state companion"))
    except (orjson.JSONDecodeError, OkstraError):
        return None
    return data if isinstance(data, dict) else None


def _matches(data: Mapping[str, Any] | None, record: Mapping[str, str]) -> bool:
    if data is None:
        return False
    source = data.get(LEGACY_SOURCE_FIELD)
    return (
        isinstance(source, dict)
        and source.get("path") == record["path"]
        and source.get("sha256") == record["sha256"]
    )


def _numbered_companions(source: Path, digest: str) -> list[tuple[int, Path]]:
    prefix = f"{source.name}.v2.{digest}."
    found: list[tuple[int, Path]] = []
    try:
        entries = list(source.parent.iterdir())
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


def _content_addressed(source: Path, digest: str) -> list[Path]:
    """Existing content-addressed names of this digest: canonical first, then by number."""
    canonical = _companion_name(source, digest)
    out = [canonical] if canonical.is_file() else []
    return out + [path for _, path in _numbered_companions(source, digest)]


def _free_name(source: Path, digest: str) -> Path:
    """The first content-addressed name nothing occupies (canonical, then `.1`, `.2`, …)."""
    canonical = _companion_name(source, digest)
    if not canonical.exists():
        return canonical
    taken = {n for n, _ in _numbered_companions(source, digest)}
    n = 1
    while n in taken or _companion_name(source, digest, n).exists():
        n += 1
    return _companion_name(source, digest, n)


def companion_for(source: Path, source_bytes: bytes) -> tuple[Path, bool]:
    """Find the content-addressed companion of a source file (no validation).

    The canonical name is `<name>.v2.<sha256>.json`. When that name holds a file of a
    different source (its `legacySource` path or digest differs, or it is no JSON
    object), the companion is an existing numbered `<name>.v2.<sha256>.<n>.json` of
    this source if there is one, else the first free name.

    Args:
        source: the source state file.
        source_bytes: its current bytes (the digest is taken from these, not re-read).

    Returns:
        `(path, exists)`: the companion and whether it already records this source.
        Nothing is written.
    """
    source = Path(source)
    digest = source_digest(source_bytes)
    record = _source_record(source, digest)
    for candidate in _content_addressed(source, digest):
        if _matches(_read_candidate(candidate), record):
            return candidate, True
    return _free_name(source, digest), False


# ---- reading v1 fields, with types checked -------------------------------------------


@dataclass(frozen=True)
class _V1Reader:
    """Typed access to a source payload; a wrong type is a `StateFileError` naming the field."""

    raw: Mapping[str, Any]
    source: Path

    def _fail(self, name: str, expected: str) -> StateFileError:
        got = type(self.raw[name]).__name__
        return StateFileError(
            f"expected {expected} in an earlier okstra's wizard state, got {got}",
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
_V1_BOOL_FIELDS = ("confirmed", "aborted", "use_defaults", "reuse_previous", "critic_pending_text")
_V1_LIST_FIELDS = ("answered", "available_functions", "profile_workers")


def _check_types(reader: _V1Reader) -> None:
    """Type-check every field the conversion may read, whether or not it is used.

    A malformed file is refused as a whole (naming the field) rather than being
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


# One reading of the earlier (provider, model value) pairs, shared with prepare's flags.
_legacy_model = legacy_model
_default_candidates = default_candidates


# ---- conversion ----------------------------------------------------------------------


@dataclass
class _RoleChoices:
    """The role selection taken over, before it is laid out as answered steps.

    `provenance` records, per step id, a provenance other than the conversion's own
    (a model taken from the default candidates keeps its `default:<scope>`).
    """

    counts: dict[str, int] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)

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
        if model is None or model.ref in refs:
            break
        refs.append(model.ref)
    return refs


def _cross_from_defaults(
    choices: _RoleChoices,
    cross: RoleRequirement,
    count: int,
    pool: ModelPool,
    scopes: DefaultScopes,
    model_for: Callable[[str], str] | None,
) -> None:
    """Models of the first cross-verification role from its default candidates.

    Instance n takes default candidate n; with `model_for`, a provider's own v1
    model value replaces that provider's candidate (as the earlier okstra did).
    """
    refs: list[str] = []
    for ordinal, (candidate, provenance) in enumerate(
        _default_candidates(pool, scopes, cross.role)[:count], start=1
    ):
        model: PoolModel | None = candidate
        value = model_for(candidate.provider_id) if model_for is not None else ""
        if value:
            model = _legacy_model(pool, scopes, candidate.provider_id, cross.role, value)
            provenance = ""
        if model is None or model.ref in refs:
            break
        refs.append(model.ref)
        if provenance:
            choices.provenance[f"role-model:{cross.role}:{ordinal}"] = provenance
    choices.set_models(cross.role, refs)


def _convert_roles(
    reader: _V1Reader,
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    entry_mode: str,
    task_type: str,
    answered: list[str],
) -> _RoleChoices:
    """The earlier okstra's v1 → role conversion, with its defaults."""
    choices = _RoleChoices()
    static = {r.role: r for r in profile.static_roles}

    # The first cross-verification role inherits the worker roster, or else (as the
    # earlier okstra did) the role's default candidates at the recommended count.
    cross = next((r for r in profile.static_roles if r.role in _CROSS_VERIFICATION_ROLES), None)
    if cross is not None:
        rosterless = task_type in _ROSTERLESS_TASK_TYPES
        roster = [] if rosterless else reader.roster(*_V1_ROSTER_FIELDS)
        if roster:
            count = choices.set_count(cross, len(roster))
            choices.set_models(
                cross.role,
                _clamped_prefix(pool, scopes, cross.role, roster[:count], reader.provider_model),
            )
        else:
            count = choices.set_count(cross, cross.recommended_count)
            model_for = None if rosterless else reader.provider_model
            _cross_from_defaults(choices, cross, count, pool, scopes, model_for)

    singles: list[tuple[str, str, str]] = []  # (role, provider, model value)
    if entry_mode == "spawn-process":
        lead_provider = reader.string("lead_provider", "leadProvider").lower()
        singles.append(
            (
                LEADER,
                lead_provider or _V1_DEFAULT_PROVIDER,
                reader.string("lead_model", "leadModel"),
            )
        )
    rw_provider = reader.string("report_writer_provider", "reportWriterProvider").lower()
    singles.append(
        (
            "report-writer",
            rw_provider or _V1_DEFAULT_PROVIDER,
            reader.string("report_writer_model", "reportWriterModel"),
        )
    )
    executor = reader.string("executor").lower() or _V1_DEFAULT_PROVIDER
    singles.append(("implementer", executor, reader.provider_model(executor)))

    # An optional role (min 0) is converted only when the v1 file holds the person's
    # answer for it: the critic's provider, or "no critic" (see docs/decisions.md).
    critic_role = static.get("critic")
    critic = reader.string("critic").lower()
    if critic_role is not None:
        if not critic and reader.optional_bool("critic_pending_text"):
            # "Add a critic" was chosen; its provider was still to be typed.
            choices.set_count(critic_role, 1)
        elif critic in _CRITIC_OFF or (not critic and any(s in answered for s in _CRITIC_STEPS)):
            choices.set_count(critic_role, 0)
        elif critic:
            singles.append(("critic", critic, reader.provider_model(critic)))

    for role, provider_id, value in singles:
        requirement = static.get(role)
        if role != LEADER and (requirement is None or requirement.max < 1):
            continue
        if requirement is not None and choices.set_count(requirement, 1) < 1:
            continue
        model = _legacy_model(pool, scopes, provider_id, role, value)
        if model is not None:
            choices.set_models(role, [model.ref])
    return choices


def _settle_confirmed(profile: Profile, choices: _RoleChoices) -> None:
    """A confirmed file ran its team as it was: unasked counts take the earlier values.

    The earlier okstra ran an optional role that was never added with 0 instances and
    an adjustable one with its recommended count; recording those lets a confirmed
    file resume at the confirmation.
    """
    for requirement in profile.static_roles:
        if requirement.role in choices.counts:
            continue
        if requirement.kind is RoleKind.OPTIONAL:
            choices.counts[requirement.role] = 0
        elif requirement.kind is RoleKind.ADJUSTABLE:
            choices.counts[requirement.role] = requirement.recommended_count


def _selection_order(
    profile: Profile, choices: _RoleChoices, entry_mode: str, *, leader_session: bool = True
) -> list[tuple[str, str]]:
    """Lay converted choices out as `(step id, answer)` in the engine's asking order.

    The role block order: leader-session, role counts, role adds, then role models (leader first,
    then profile order, ordinal from 1).
    """
    order: list[tuple[str, str]] = []
    if entry_mode == "current-session" and leader_session:
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
    """The v2 answer of a static step the source answered, or None to drop the step."""
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


def _confirmed_static_steps(state: Mapping[str, Any], reader: _V1Reader) -> list[str]:
    """Static steps a confirmed file settled even where its `answered` list is short."""
    steps = ["task_pick"]
    if state["task_mode"] == "new":
        steps += ["task_group", "task_id"]
    steps += ["brief", "task_type", "approved_plan"]
    if state["task_mode"] == "existing" and reader.optional_bool("reuse_previous") is None:
        steps.append("reuse_previous")
    steps += ["directive_pick", "directive", "related_tasks_pick", "related_tasks"]
    return steps


def _required(reader: _V1Reader, name: str) -> str:
    value = reader.string(name)
    if not value:
        raise StateFileError(
            "required field is missing: the wizard state needs it to be resumed",
            path=reader.source,
            field=name,
        )
    return value


# ---- task identity -------------------------------------------------------------------


@dataclass
class _Identity:
    """Slugified task identity, with the echoes that show the original spelling."""

    echoes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _slug(raw: str, what: str, identity: _Identity) -> str:
    """`raw` as a slug ("" when it cannot be one), with a note when it changed."""
    if not raw:
        return ""
    try:
        slug = check_segment(raw, what)
    except OkstraError as exc:
        identity.notes.append(f"{what} {raw!r} cannot be used ({exc.message}): it is asked again")
        return ""
    if slug != raw:
        identity.notes.append(f"{what} {raw!r} is not a slug: it is used as {slug!r}")
    return slug


def _task_identity(state: dict[str, Any]) -> _Identity:
    """Slugify the task group, id and key in place, as this okstra's task paths need.

    The earlier okstra kept a typed id such as `CHK-114` as it was; prepare here
    needs slugs (`chk-114`). The original spelling is kept in the converted answer's
    echo and in a note, so the person sees what was changed.
    """
    identity = _Identity()
    group_raw, id_raw = state["task_group"], state["task_id"]
    if state["task_mode"] == "existing" and state["task_key"]:
        key_group, sep, key_id = state["task_key"].partition("/")
        if sep and key_group and key_id and "/" not in key_id:
            group_raw, id_raw = key_group, key_id
    group = _slug(group_raw, "task group", identity)
    task_id = _slug(id_raw, "task id", identity)
    state["task_group"] = group
    state["task_id"] = task_id
    key = f"{group}/{task_id}" if group and task_id else ""
    if state["task_mode"] in ("new", "existing"):
        original_key = state["task_key"] or (f"{group_raw}/{id_raw}" if group_raw else "")
        state["task_key"] = key
        if state["task_mode"] == "existing" and key and key != original_key:
            identity.echoes["task_pick"] = f"{key} (was {original_key!r})"
    if group and group != group_raw:
        identity.echoes["task_group"] = f"{group} (was {group_raw!r})"
    if task_id and task_id != id_raw:
        identity.echoes["task_id"] = f"{task_id} (was {id_raw!r})"
    return identity


def _dropped_answer_notes(raw: Mapping[str, Any]) -> list[str]:
    notes: list[str] = []
    for name, what in _DROPPED_ANSWERS.items():
        value = raw.get(name)
        if value in (None, "", [], {}, False, 0):
            continue
        notes.append(
            f"{name} ({what}: {value!r}) is not carried over: this okstra's wizard has no such step"
        )
    return notes


def source_notes(raw: Mapping[str, Any]) -> list[str]:
    """Notes about a source file that hold however it is opened (fresh or resumed).

    Read tolerantly: a field of the wrong type gives no note (the conversion refuses it).
    """
    state: dict[str, Any] = {}
    for name in ("task_mode", "task_key", "task_group", "task_id"):
        value = raw.get(name)
        state[name] = value.strip() if isinstance(value, str) else ""
    notes = _task_identity(state).notes if state["task_mode"] in _TASK_MODES else []
    return notes + _dropped_answer_notes(raw)


# ---- the two conversions -------------------------------------------------------------


def _base_state(reader: _V1Reader, entry_mode: str) -> dict[str, Any]:
    source = reader.source
    if entry_mode not in _ENTRY_MODES:
        raise StateFileError(
            f"unknown entry mode {entry_mode!r} (expected one of: {', '.join(_ENTRY_MODES)})",
            path=source,
            field="host_entry_mode",
        )
    _check_types(reader)
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
    state["confirmed"] = None
    state["edit_target"] = ""
    return state


def _finish(
    state: dict[str, Any],
    *,
    reader: _V1Reader,
    source_answered: list[str],
    confirmed: bool,
    order: list[tuple[str, str]],
    choices: _RoleChoices,
    provenance: str,
    identity: _Identity,
    source: Path,
    sha256: str,
) -> dict[str, Any]:
    """Lay the answers out (static before, role block, static after) and fill the rest."""
    steps = list(source_answered)
    if confirmed:
        steps += [s for s in _confirmed_static_steps(state, reader) if s not in steps]
    answered: list[dict[str, str]] = []

    def entry(step: str, answer: str, prov: str) -> dict[str, str]:
        out = {"step": step, "answer": answer, "provenance": prov}
        if step in identity.echoes:
            out["echo"] = identity.echoes[step]
        return out

    for group in (_STATIC_BEFORE_ROLES, None, _STATIC_AFTER_ROLES):
        if group is None:
            answered += [
                entry(step, answer, choices.provenance.get(step, provenance))
                for step, answer in order
            ]
            continue
        for step in (s for s in group if s in steps):
            answer = _static_answer(step, state, reader)
            if answer is None and confirmed and step == "reuse_previous":
                answer = CHOOSE_AGAIN_ANSWER
            if answer is not None and not (
                step == "reuse_previous" and state["task_mode"] != "existing"
            ):
                answered.append(entry(step, answer, provenance))
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
        scopes: model default scopes (a provider chosen without a model, and the
            default candidates of the first cross-verification role).
        entry_mode: `spawn-process` or `current-session`.
        source: the v1 file (for `legacySource` and error messages).
        sha256: the digest of the v1 bytes.

    Returns:
        A v2 state dict in the v2 file shape (`okstra_core.wizard.state`).

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
    reader = _V1Reader(raw, source)
    state = _base_state(reader, entry_mode)
    confirmed = reader.optional_bool("confirmed") is True
    identity = _task_identity(state)
    v1_answered = list(dict.fromkeys(reader.string_list("answered")))

    if profile is None:
        # Without a known task type there is no role block yet; the engine asks it.
        state["task_type"] = ""
        state["approved_plan_path"] = ""
        v1_answered = [s for s in v1_answered if s not in ("task_type", "approved_plan")]
        confirmed = False
        order: list[tuple[str, str]] = []
        choices = _RoleChoices()
    else:
        choices = _convert_roles(
            reader, profile, pool, scopes, entry_mode, state["task_type"], v1_answered
        )
        if confirmed:
            _settle_confirmed(profile, choices)
        order = _selection_order(profile, choices, entry_mode)
    return _finish(
        state,
        reader=reader,
        source_answered=v1_answered,
        confirmed=confirmed,
        order=order,
        choices=choices,
        provenance=CONVERTED_V1,
        identity=identity,
        source=source,
        sha256=sha256,
    )


def _role_fields(reader: _V1Reader) -> tuple[dict[str, int], dict[str, list[str]], list[str]]:
    """`roleCounts`, `roleModels`, `roleSelectionOrder` of an earlier v2 file, type-checked."""
    raw, source = reader.raw, reader.source

    def fail(name: str, expected: str) -> StateFileError:
        return StateFileError(
            f"expected {expected} in an earlier okstra's v2 wizard state", path=source, field=name
        )

    counts = raw.get("roleCounts")
    if counts is None:
        counts = {}
    if not isinstance(counts, dict):
        raise fail("roleCounts", "an object mapping roles to counts")
    for role, n in counts.items():
        if type(n) is not int or n < 0:
            raise fail(f"roleCounts.{role}", "a count ≥ 0 (a boolean is not a count)")
    models = raw.get("roleModels")
    if models is None:
        models = {}
    if not isinstance(models, dict):
        raise fail("roleModels", "an object mapping roles to arrays of model refs")
    for role, refs in models.items():
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise fail(f"roleModels.{role}", "an array of model refs")
    order = raw.get("roleSelectionOrder")
    if order is None:
        order = []
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise fail("roleSelectionOrder", "an array of step ids")
    answered = raw.get("answered")
    if isinstance(answered, list):
        for index, item in enumerate(answered):
            if not isinstance(item, str):
                raise fail(f"answered[{index}]", "a step id (a string)")
    return dict(counts), {r: list(m) for r, m in models.items()}, list(order)


def _earlier_choices(
    profile: Profile,
    counts: Mapping[str, int],
    models: Mapping[str, list[str]],
    entry_mode: str,
    pool: ModelPool,
    notes: list[str],
) -> _RoleChoices:
    """The earlier v2 role selection, kept where this okstra's profile still allows it."""
    choices = _RoleChoices()
    static = {r.role: r for r in profile.static_roles}
    for role, n in counts.items():
        requirement = static.get(role)
        if requirement is None or requirement.kind not in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            notes.append(f"roleCounts.{role} is not carried over: the role takes no count here")
        elif not requirement.min <= n <= requirement.max:
            notes.append(
                f"roleCounts.{role} = {n} is not carried over: expected "
                f"{requirement.min}..{requirement.max}; it is asked again"
            )
        else:
            choices.counts[role] = n
    for role, refs in models.items():
        if role == LEADER:
            limit = 1 if entry_mode == "spawn-process" else 0
        else:
            requirement = static.get(role)
            if requirement is None:
                limit = 0
            elif requirement.kind is RoleKind.FIXED:
                limit = requirement.min
            else:
                limit = choices.counts.get(role, 0)
        if refs and limit == 0:
            notes.append(
                f"roleModels.{role} is not carried over: the role has no instance to fill "
                "(its count is asked first, or the role is gone)"
            )
            continue
        if len(refs) > limit:
            notes.append(
                f"roleModels.{role}: {len(refs) - limit} model(s) beyond the role's count "
                "are not carried over"
            )
        kept: list[str] = []
        for ref in refs[:limit]:
            try:
                model: PoolModel | None = pool.lookup(ref)
            except UsageError:
                model = None
            if model is None or not _supports(model, role) or model.ref in kept:
                notes.append(
                    f"roleModels.{role}[{len(kept)}] {ref!r} is not carried over "
                    "(unknown here, or not for this role): it is asked again"
                )
                break
            kept.append(model.ref)
        choices.set_models(role, kept)
    return choices


def convert_earlier_v2(
    raw: Mapping[str, Any],
    *,
    profile: Profile | None,
    pool: ModelPool,
    scopes: DefaultScopes,
    source: Path,
    sha256: str,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Convert the earlier okstra's v2-shaped state into okstra's v2 state dict.

    Its `answered` step ids become answered entries whose answers come from the
    file's fields (static steps) and from `roleCounts` / `roleModels` (role steps);
    role choices this okstra's profile no longer allows are dropped with a note, and
    the engine asks those steps again. The earlier wizard's extra fields are read
    as described in docs/compatibility.md.

    Args:
        raw: the parsed JSON object (`is_earlier_v2(raw)` holds).
        profile: the role profile of its task type, or None (unknown / not chosen).
        pool: the model pool (model refs are checked against it).
        scopes: model default scopes (unused today; kept for symmetry with v1).
        source: the file the state came from (`legacySource`, messages).
        sha256: the digest that names the companion.
        notes: a list to append notes to (dropped choices).

    Raises:
        StateFileError: a field of the wrong type (named), a missing project root.
    """
    del scopes
    source = Path(source)
    out_notes = notes if notes is not None else []
    reader = _V1Reader(raw, source)
    counts, models, earlier_order = _role_fields(reader)
    entry_mode = reader.string("host_entry_mode") or "spawn-process"
    state = _base_state(reader, entry_mode)
    confirmed = reader.optional_bool("confirmed") is True
    identity = _task_identity(state)
    answered_ids = list(dict.fromkeys(reader.string_list("answered")))
    if profile is None:
        state["task_type"] = ""
        state["approved_plan_path"] = ""
        answered_ids = [s for s in answered_ids if s not in ("task_type", "approved_plan")]
        confirmed = False
        if counts or models:
            out_notes.append(
                "roleCounts / roleModels are not carried over: the task type is asked first"
            )
        order: list[tuple[str, str]] = []
        choices = _RoleChoices()
    else:
        choices = _earlier_choices(profile, counts, models, entry_mode, pool, out_notes)
        if confirmed:
            _settle_confirmed(profile, choices)
        asked_leader = LEADER_SESSION_STEP in (*answered_ids, *earlier_order)
        order = _selection_order(profile, choices, entry_mode, leader_session=asked_leader)
    return _finish(
        state,
        reader=reader,
        source_answered=answered_ids,
        confirmed=confirmed,
        order=order,
        choices=choices,
        provenance=CONVERTED_V2,
        identity=identity,
        source=source,
        sha256=sha256,
    )


# ---- opening a source ----------------------------------------------------------------


@dataclass(frozen=True)
class LegacyOpen:
    """What opening an earlier okstra's state file gives the engine.

    Attributes:
        companion: the companion file progress is saved to.
        state: the v2 state dict (valid for `state.parse_v2`).
        resumed: True when `state` is that companion's saved content.
        notes: what the person should know (skipped companions, slugified ids,
            answers not carried over), in order.
    """

    companion: Path
    state: dict[str, Any]
    resumed: bool
    notes: tuple[str, ...] = ()


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


def _profile_of(raw: Mapping[str, Any], loader: Callable[[str], Profile]) -> Profile | None:
    task_type = raw.get("task_type")
    if not isinstance(task_type, str) or not task_type.strip():
        return None
    try:
        return loader(task_type.strip())
    except UsageError:
        return None


def _skipped(companion: Path, exc: OkstraError) -> str:
    """The note for a companion that is skipped (its own problem, not the source's)."""
    problem = f"{exc.field}: {exc.message}" if exc.field else exc.message
    return (
        f"companion {companion} is not a valid wizard state ({problem}): "
        "it is skipped and left as it is"
    )


def _take_over(
    payload: dict[str, Any],
    *,
    profile_loader: Callable[[str], Profile],
    pool: ModelPool,
    scopes: DefaultScopes,
    source: Path,
    sha256: str,
    record: dict[str, str],
    notes: list[str],
) -> dict[str, Any]:
    """The v2 state of a companion taken over (`StateFileError` when it does not convert)."""
    profile = _profile_of(payload, profile_loader)
    if is_earlier_v2(payload):
        return convert_earlier_v2(
            payload,
            profile=profile,
            pool=pool,
            scopes=scopes,
            source=source,
            sha256=sha256,
            notes=notes,
        )
    state = dict(payload)
    state[LEGACY_SOURCE_FIELD] = record
    return state


def open_legacy(
    source: Path,
    *,
    profile_loader: Callable[[str], Profile],
    pool: ModelPool,
    scopes: DefaultScopes,
    environment: Environment,
) -> LegacyOpen:
    """Open an earlier okstra's state file: resume its companion, or convert it afresh.

    Args:
        source: the v1 or earlier-v2 state file (read once; never written).
        profile_loader: task type → `Profile` (e.g. `Catalog.profile`); a `UsageError`
            means the task type no longer exists, and the engine asks it again.
        pool: the model pool.
        scopes: model default scopes.
        environment: the clock stamps `updated_at` when the source has none.

    Returns:
        The companion to save to, the v2 state dict, whether it was resumed, notes.

    Raises:
        StateFileError: the source is unreadable or malformed (file and field named).
    """
    source = Path(source)
    data = read_bytes(source, what="wizard state file", error=StateFileError)
    raw = parse_json_object(data, source, what="wizard state JSON object", error=StateFileError)
    digest = source_digest(data)
    record = _source_record(source, digest)
    notes: list[str] = []
    # Companions the earlier okstra wrote (its v2 shape), in the order they are tried:
    # content-addressed names first, then its older `<name>.v2.json`.
    takeovers: list[tuple[Path, dict[str, Any]]] = []
    for candidate in _content_addressed(source, digest):
        payload = _read_candidate(candidate)
        if not _matches(payload, record):
            continue  # another source's file: not ours to judge
        assert payload is not None
        try:
            parse_v2(payload, str(candidate))
        except StateFileError as exc:
            if is_earlier_v2(payload):
                takeovers.append((candidate, payload))
            else:
                notes.append(_skipped(candidate, exc))
            continue
        return LegacyOpen(candidate, payload, True, (*notes, *source_notes(raw)))
    older = _older_companion_name(source)
    payload = _read_candidate(older) if older.is_file() else None
    if _matches(payload, record):
        assert payload is not None
        if is_earlier_v2(payload):
            takeovers.append((older, payload))
        else:
            try:
                parse_v2(payload, str(older))
                takeovers.append((older, payload))
            except StateFileError as exc:
                notes.append(_skipped(older, exc))
    companion = _free_name(source, digest)
    state: dict[str, Any] | None = None
    for taken_from, payload in takeovers:
        # An earlier companion that does not convert (a field of the wrong type) is
        # skipped like an invalid one: the next one, or the source, is converted.
        attempt: list[str] = []
        try:
            state = _take_over(
                payload,
                profile_loader=profile_loader,
                pool=pool,
                scopes=scopes,
                source=source,
                sha256=digest,
                record=record,
                notes=attempt,
            )
        except StateFileError as exc:
            notes.append(_skipped(taken_from, exc))
            continue
        notes.extend(attempt)
        notes.append(
            f"progress is taken over from {taken_from} (left as it is); "
            f"it is saved to {companion} from now on"
        )
        break
    if state is None and is_v1(raw):
        reader = _V1Reader(raw, source)
        state = convert_v1(
            raw,
            profile=_profile_of(raw, profile_loader),
            pool=pool,
            scopes=scopes,
            entry_mode=_entry_mode(reader),
            source=source,
            sha256=digest,
        )
    elif state is None:
        state = convert_earlier_v2(
            raw,
            profile=_profile_of(raw, profile_loader),
            pool=pool,
            scopes=scopes,
            source=source,
            sha256=digest,
            notes=notes,
        )
    if not state.get("updated_at"):
        state["updated_at"] = environment.now().isoformat()
    return LegacyOpen(companion, state, False, (*notes, *source_notes(raw)))


def load_legacy(
    source: Path,
    *,
    profile_loader: Callable[[str], Profile],
    pool: ModelPool,
    scopes: DefaultScopes,
    environment: Environment,
) -> tuple[Path, dict[str, Any], bool]:
    """`open_legacy` without the notes: `(companion, v2 state dict, resumed)`."""
    opened = open_legacy(
        source, profile_loader=profile_loader, pool=pool, scopes=scopes, environment=environment
    )
    return opened.companion, opened.state, opened.resumed
