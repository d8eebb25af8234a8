"""The run request: the one value that passes from the wizard (or argv) to prepare.

`RunRequest` is frozen and typed: role counts are `dict[str, int]`, role models
`dict[str, list[str]]` (model refs in ordinal order), the host session context is a
model of its own. Shape checks (slugs, bounds, model-ref spelling) run here, once, when
a request is built; the profile's ranges are checked by whoever builds it (the wizard's
outcome, or `okstra_core.roleargs.request_from_argv`); feasibility by the resolver.

`render_argv()` / `render_args()` are views of the request: `okstra prepare
<render_argv()…>` parses back to an equal request. Every value is rendered as
`--flag=value`, so a value that begins with `-` never reads as a flag.

This module imports only pydantic and the store/error layer: it is cheap to import
and sits below the wizard, so both the wizard and prepare can use it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .environment import HOST_EFFORT_ENV, HOST_MODEL_ENV
from .errors import OkstraError, UsageError
from .tasks import check_segment


# Default factories are Python functions, not the `dict` builtin: pydantic reads
# a factory's signature when it builds a model, and a builtin's signature is parsed
# from text (compiling the tokenizer's regular expressions, ~2 ms of a process).
def _new_dict() -> dict[Any, Any]:
    return {}


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
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_TASK_TYPE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_ROLE = re.compile(r"^[a-z][a-z0-9_-]*$")
_MODEL_REF = re.compile(r"^[^/\s]+/\S+$")

RoleName = Annotated[StrictStr, Field(pattern=_ROLE.pattern, max_length=64)]
ModelRef = Annotated[StrictStr, Field(pattern=_MODEL_REF.pattern, max_length=200)]


class Value(BaseModel):
    """Base of the request's parts: frozen, camelCase on the wire, unknown keys refused."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        defer_build=True,
    )

    def dump(self) -> dict[str, Any]:
        """The JSON form (camelCase keys)."""
        return self.model_dump(mode="json", by_alias=True)


class CurrentModel(Value):
    """The host session's own model, as the host reports it (all unknown by default).

    Attributes:
        provider: the host's native provider.
        model_ref: the model ref (`provider/model`), or None when not reported.
        effort: the reasoning effort the host reports, if any.
    """

    provider: StrictStr | None = None
    model_ref: StrictStr | None = Field(default=None, min_length=1, max_length=200)
    effort: StrictStr | None = Field(default=None, min_length=1, max_length=64)


class HostSessionContext(Value):
    """Which host runs okstra, in which entry mode, on which model — authoritative.

    Attributes:
        host_id: the host runtime id; None = detect it when preparing.
        entry_mode: `spawn-process` (okstra starts the lead CLI) or `current-session`
            (the host session is the lead).
        available_functions: functions the host session offers the lead.
        interaction_surface: where the request was made (`wizard`, `cli`).
        current_model: the host session's model (a current-session lead's model).
    """

    host_id: StrictStr | None = Field(default=None, min_length=1, max_length=64)
    entry_mode: EntryMode = "spawn-process"
    available_functions: tuple[StrictStr, ...] = ()
    interaction_surface: StrictStr = "cli"
    # Defaults built without validation (nothing to check): an instance made at import
    # would build its model's validator in every process that imports the request.
    current_model: CurrentModel = CurrentModel.model_construct()

    @model_validator(mode="before")
    @classmethod
    def _older_spellings(cls, data: Any) -> Any:
        # Hosts may spell the model as `currentModel: "p/m"` or `currentModelRef: "p/m"`.
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

    def to_json_text(self) -> str:
        """The `--host-session-context-json` value (canonical: sorted keys)."""
        return orjson.dumps(self.dump(), option=orjson.OPT_SORT_KEYS).decode()


class RunRequest(Value):
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

    project_root: Path
    task_group: StrictStr = Field(max_length=200)
    task_id: StrictStr = Field(max_length=200)
    task_type: Annotated[StrictStr, Field(pattern=_TASK_TYPE.pattern, max_length=64)]
    brief: StrictStr = Field(min_length=1, max_length=4096)
    approved_plan: StrictStr = Field(default="", max_length=4096)
    directive: StrictStr = Field(default="", max_length=65536)
    related_tasks: tuple[StrictStr, ...] = ()
    host: HostSessionContext = HostSessionContext.model_construct(
        current_model=CurrentModel.model_construct()
    )
    role_counts: dict[RoleName, Annotated[StrictInt, Field(ge=0, le=MAX_ROLE_COUNT)]] = Field(
        default_factory=_new_dict
    )
    role_models: dict[RoleName, list[ModelRef]] = Field(default_factory=_new_dict)
    provenance: dict[StrictStr, StrictStr] = Field(default_factory=_new_dict)

    @field_validator("project_root")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        if not value.is_absolute():
            raise ValueError("expected an absolute path")
        return value

    @field_validator("task_group", "task_id")
    @classmethod
    def _segment(cls, value: str, info: ValidationInfo) -> str:
        what = str(info.field_name).replace("_", " ")
        try:
            slug = check_segment(value, what)
        except OkstraError as exc:
            raise ValueError(exc.message) from None
        if slug != value:
            raise ValueError(f"{what} must be a slug (try {slug!r})")
        return value

    @field_validator("related_tasks")
    @classmethod
    def _task_keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for key in value:
            group, sep, task_id = key.partition("/")
            if not sep or not _SLUG.match(group) or not _SLUG.match(task_id) or "/" in task_id:
                raise ValueError(f"expected task keys like 'group/id', got {key!r}")
        return value

    @field_validator("role_models")
    @classmethod
    def _bounded(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for role, refs in value.items():
            if len(refs) > MAX_ROLE_COUNT:
                raise ValueError(f"{role}: at most {MAX_ROLE_COUNT} models")
        return value

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


_FLAGS = {
    "role_counts": "--role-count",
    "roleCounts": "--role-count",
    "role_models": "--role-model",
    "roleModels": "--role-model",
    "host": "--host-session-context-json",
}


def usage_error(exc: ValidationError, *, prefix: str = "") -> UsageError:
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
