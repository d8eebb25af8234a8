"""The run request: the one value that passes from the wizard (or argv) to prepare.

`RunRequest` is frozen and typed: role counts are `dict[str, int]`, role models
`dict[str, list[str]]` (model refs in ordinal order), the host session context is a
model of its own. Shape checks (slugs, bounds, model-ref spelling) run here, once, when
a request is built; the profile's ranges are checked by whoever builds it (the wizard's
outcome, or `okstra_core.roleargs.request_from_argv`); feasibility by the resolver.

`render_argv()` / `render_args()` are views of the request: `okstra prepare
<render_argv()…>` parses back to an equal request. Every value is rendered as
`--flag=value`, so a value that begins with `-` never reads as a flag.

The request and its parts are plain records (`okstra_core.records`): building one in
Python runs its rules (`__post_init__`) without pydantic; a request read from outside
(a `run-inputs.json`, a host session context given as JSON) is checked by
`records.validate`, which adds the types. Either way a broken rule is a `RecordError`
naming the field (its name in files) and what was expected.

This module sits below the wizard, so both the wizard and prepare can use it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from .environment import HOST_EFFORT_ENV, HOST_MODEL_ENV
from .errors import OkstraError, UsageError
from .records import RecordError, camel, config, dataclass, field, problem, to_data
from .tasks import check_segment

if TYPE_CHECKING:
    from pydantic import StrictInt, StrictStr

__all__ = [
    "HOST_EFFORT_ENV",
    "HOST_MODEL_ENV",
    "MAX_ROLE_COUNT",
    "UNREPORTED_MODEL",
    "CurrentModel",
    "HostSessionContext",
    "RunRequest",
    "usage_error",
]

EntryMode = Literal["spawn-process", "current-session"]
ENTRY_MODES: tuple[str, ...] = ("spawn-process", "current-session")
# How a current-session leader whose model the host did not report is shown.
UNREPORTED_MODEL = "this session (model not reported)"
# No profile asks for more instances of one role than this; a larger count is refused
# before anything is allocated for it.
MAX_ROLE_COUNT = 64
_TASK_TYPE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_ROLE = re.compile(r"^[a-z][a-z0-9_-]*$")
_MODEL_REF = re.compile(r"^[^/\s]+/\S+$")
_TASK_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*$")


# The length rules of the text fields (characters, inclusive), one table for the
# checks (`__post_init__`) and for the published JSON Schema (`_schema_rules`).
_LENGTHS: dict[str, tuple[int, int]] = {
    "model_ref": (1, 200),
    "effort": (1, 64),
    "host_id": (1, 64),
    "task_group": (0, 200),
    "task_id": (0, 200),
    "task_type": (0, 64),
    "brief": (1, 4096),
    "approved_plan": (0, 4096),
    "directive": (0, 65536),
}
_ROLE_MAX = 64
_MODEL_REF_MAX = 200


def _check_text(record: type[Any], name: str, value: str | None) -> None:
    low, high = _LENGTHS[name]
    if value is not None and not low <= len(value) <= high:
        raise problem(
            record,
            (name,),
            f"expected {low} to {high} characters, got {len(value)}"
            if low
            else f"expected at most {high} characters, got {len(value)}",
            value,
        )


def _schema_rules(schema: dict[str, Any]) -> None:
    """Publish the rules `__post_init__` checks in a record's JSON Schema."""
    props = schema.get("properties", {})
    for name, (low, high) in _LENGTHS.items():
        prop = props.get(camel(name))
        if prop is None:
            continue
        # An optional text (`str | None`) carries the rule on its string branch.
        target = next((b for b in prop.get("anyOf", ()) if b.get("type") == "string"), prop)
        if low:
            target["minLength"] = low
        target["maxLength"] = high
    if "taskType" in props:
        props["taskType"]["pattern"] = _TASK_TYPE.pattern
    if "relatedTasks" in props:
        props["relatedTasks"]["items"]["pattern"] = _TASK_KEY.pattern
    names = {"pattern": _ROLE.pattern, "maxLength": _ROLE_MAX}
    if "roleCounts" in props:
        props["roleCounts"]["propertyNames"] = names
        props["roleCounts"]["additionalProperties"] = {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_ROLE_COUNT,
        }
    if "roleModels" in props:
        props["roleModels"]["propertyNames"] = names
        props["roleModels"]["additionalProperties"] = {
            "type": "array",
            "maxItems": MAX_ROLE_COUNT,
            "items": {"type": "string", "pattern": _MODEL_REF.pattern, "maxLength": _MODEL_REF_MAX},
        }


def _value_data(value: Any) -> dict[str, Any]:
    data: dict[str, Any] = to_data(value)
    return data


@dataclass(frozen=True, kw_only=True)
class CurrentModel:
    """The host session's own model, as the host reports it (all unknown by default).

    Attributes:
        provider: the host's native provider.
        model_ref: the model ref (`provider/model`), or None when not reported.
        effort: the reasoning effort the host reports, if any.
    """

    __pydantic_config__ = config(camel_case=True, by_name=True, json_schema_extra=_schema_rules)

    provider: StrictStr | None = None
    model_ref: StrictStr | None = None
    effort: StrictStr | None = None

    def __post_init__(self) -> None:
        _check_text(CurrentModel, "model_ref", self.model_ref)
        _check_text(CurrentModel, "effort", self.effort)

    def dump(self) -> dict[str, Any]:
        """The JSON form (camelCase keys)."""
        return _value_data(self)


@dataclass(frozen=True, kw_only=True)
class HostSessionContext:
    """Which host runs okstra, in which entry mode, on which model — authoritative.

    Attributes:
        host_id: the host runtime id; None = detect it when preparing.
        entry_mode: `spawn-process` (okstra starts the lead CLI) or `current-session`
            (the host session is the lead).
        available_functions: functions the host session offers the lead.
        interaction_surface: where the request was made (`wizard`, `cli`).
        current_model: the host session's model (a current-session lead's model).
    """

    __pydantic_config__ = config(camel_case=True, by_name=True, json_schema_extra=_schema_rules)

    host_id: StrictStr | None = None
    entry_mode: EntryMode = "spawn-process"
    available_functions: tuple[StrictStr, ...] = ()
    interaction_surface: StrictStr = "cli"
    current_model: CurrentModel = field(default_factory=CurrentModel)

    def __post_init__(self) -> None:
        _check_text(HostSessionContext, "host_id", self.host_id)
        if self.entry_mode not in ENTRY_MODES:
            raise problem(
                HostSessionContext,
                ("entry_mode",),
                f"expected one of {', '.join(ENTRY_MODES)}, got {self.entry_mode!r}",
                self.entry_mode,
            )

    @staticmethod
    def older_spellings(data: Any) -> Any:
        """Hosts may spell the model as `currentModel: "p/m"` or `currentModelRef: "p/m"`."""
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("currentModel"), str):
                data["currentModel"] = {"modelRef": data["currentModel"]}
            legacy = data.pop("currentModelRef", None)
            if isinstance(legacy, str) and "currentModel" not in data:
                data["currentModel"] = {"modelRef": legacy}
        return data

    @property
    def model_ref(self) -> str | None:
        return self.current_model.model_ref

    def dump(self) -> dict[str, Any]:
        """The JSON form (camelCase keys)."""
        return _value_data(self)

    def to_json_text(self) -> str:
        """The `--host-session-context-json` value (canonical: sorted keys)."""
        return orjson.dumps(self.dump(), option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """Everything prepare needs, decided: the one thing from wizard (or argv) to prepare.

    Attributes:
        project_root: the project's directory (absolute).
        task_group, task_id: the task's slug segments.
        task_type: the phase of work.
        brief: the brief file as given (relative to the project root, or absolute).
        approved_plan: the approved plan file, for stage-scoped task types ("" = none).
        directive: free text for the lead.
        related_tasks: task keys (`group/id`).
        host: the host session context (host, entry mode, current-session model).
        role_counts: chosen instance counts of adjustable/optional roles.
        role_models: chosen model refs per role, in ordinal order.
        provenance: why each value is there (`chosen`, `default:<scope>`, `reused:<run>`,
            `converted:v1`), keyed like the confirmation lines plus `count:<role>`.
    """

    __pydantic_config__ = config(camel_case=True, by_name=True, json_schema_extra=_schema_rules)

    project_root: Path
    task_group: StrictStr
    task_id: StrictStr
    task_type: StrictStr
    brief: StrictStr
    approved_plan: StrictStr = ""
    directive: StrictStr = ""
    related_tasks: tuple[StrictStr, ...] = ()
    host: HostSessionContext = field(default_factory=HostSessionContext)
    role_counts: dict[StrictStr, StrictInt] = field(default_factory=dict)
    role_models: dict[StrictStr, list[StrictStr]] = field(default_factory=dict)
    provenance: dict[StrictStr, StrictStr] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """The request's rules, run whenever one is built (in Python or validated)."""
        me = RunRequest
        if not self.project_root.is_absolute():
            raise problem(me, ("project_root",), "expected an absolute path", self.project_root)
        for name in ("task_group", "task_id"):
            value = getattr(self, name)
            _check_text(me, name, value)
            what = name.replace("_", " ")
            try:
                slug = check_segment(value, what)
            except OkstraError as exc:
                raise problem(me, (name,), exc.message, value) from None
            if slug != value:
                raise problem(me, (name,), f"{what} must be a slug (try {slug!r})", value)
        _check_text(me, "task_type", self.task_type)
        if not _TASK_TYPE.match(self.task_type):
            raise problem(
                me, ("task_type",), "expected a lower-case slug (a-z, 0-9, -)", self.task_type
            )
        _check_text(me, "brief", self.brief)
        _check_text(me, "approved_plan", self.approved_plan)
        _check_text(me, "directive", self.directive)
        for key in self.related_tasks:
            if not _TASK_KEY.fullmatch(key):
                raise problem(
                    me, ("related_tasks",), f"expected task keys like 'group/id', got {key!r}", key
                )
        for role, count in self.role_counts.items():
            _check_role(role, "role_counts")
            if not 0 <= count <= MAX_ROLE_COUNT:
                raise problem(
                    me,
                    ("role_counts", role),
                    f"expected a count from 0 to {MAX_ROLE_COUNT}, got {count}",
                    count,
                )
        for role, refs in self.role_models.items():
            _check_role(role, "role_models")
            if len(refs) > MAX_ROLE_COUNT:
                raise problem(
                    me, ("role_models",), f"{role}: at most {MAX_ROLE_COUNT} models", role
                )
            for ref in refs:
                if len(ref) > _MODEL_REF_MAX or not _MODEL_REF.match(ref):
                    raise problem(
                        me,
                        ("role_models", role),
                        f"expected a model ref 'provider/model', got {ref!r}",
                        ref,
                    )

    def dump(self) -> dict[str, Any]:
        """The JSON form (camelCase keys)."""
        return _value_data(self)

    @property
    def task_key(self) -> str:
        return f"{self.task_group}/{self.task_id}"

    @property
    def entry_mode(self) -> EntryMode:
        return self.host.entry_mode

    # ------------------------------------------------------------------ views

    def render_args(self) -> dict[str, str | list[str]]:
        """The request as the protocol's `renderArgs` map (flag name → value(s))."""
        return {
            "project-root": str(self.project_root),
            "task-group": self.task_group,
            "task-id": self.task_id,
            "task-key": self.task_key,
            "task-type": self.task_type,
            "brief": self.brief,
            "approved-plan": self.approved_plan,
            "directive": self.directive,
            "related-tasks": ",".join(self.related_tasks),
            "host": self.host.host_id or "",
            "entry-mode": self.host.entry_mode,
            "role-count": [f"{role}={n}" for role, n in self.role_counts.items()],
            "role-model": [
                f"{role}={ref}" for role, refs in self.role_models.items() for ref in refs
            ],
            "host-session-context-json": self._context_arg(),
            "provenance": [f"{key}={value}" for key, value in self.provenance.items()],
        }

    def _context_arg(self) -> str:
        # Omitted when --host and --entry-mode alone say the same.
        plain = HostSessionContext(host_id=self.host.host_id, entry_mode=self.host.entry_mode)
        return "" if self.host == plain else self.host.to_json_text()

    def render_argv(self) -> tuple[str, ...]:
        """`okstra prepare <render_argv()…>` prepares exactly this request.

        Each value is one `--flag=value` argument, so none can be read as a flag.
        """
        argv: list[str] = []
        for key, value in self.render_args().items():
            if key == "task-key" or (key == "entry-mode" and value == "spawn-process"):
                continue
            for item in value if isinstance(value, list) else [value]:
                if item:
                    argv.append(f"--{key}={item}")
        return tuple(argv)


def _check_role(role: str, where: str) -> None:
    if len(role) > _ROLE_MAX or not _ROLE.match(role):
        raise problem(
            RunRequest,
            (where, role),
            "expected a role name (lower-case letters, digits, '-' or '_', starting with a letter)",
            role,
        )


_FLAGS = {
    "role_counts": "--role-count",
    "roleCounts": "--role-count",
    "role_models": "--role-model",
    "roleModels": "--role-model",
    "host": "--host-session-context-json",
}


def usage_error(exc: RecordError, *, prefix: str = "") -> UsageError:
    """A `UsageError` naming the flag of the first invalid field of a request."""
    problem = exc.errors()[0]
    loc = [str(part) for part in problem["loc"]]
    head = loc[0] if loc else ""
    flag = _FLAGS.get(head) or (
        "--" + re.sub(r"([A-Z])", r"-\1", head).lower().replace("_", "-") if head else None
    )
    where = ".".join(loc[1:])
    message = str(problem["msg"]).removeprefix("Value error, ")
    return UsageError(prefix + message + (f" ({where})" if where else ""), field=flag)
