"""The run request: the one value that passes from the wizard (or argv) to prepare."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import orjson

from .errors import OkstraError, UsageError
from .names import RULE, name_problem
from .records import RecordError, aliases_of, config, dataclass, field, problem, to_data
from .tasks import check_segment
from .vocabulary import LEAD_ACCESS, LeadAccess

if TYPE_CHECKING:
    from pydantic import StrictInt, StrictStr

EntryMode = Literal["spawn-process", "current-session"]
ENTRY_MODES: tuple[str, ...] = get_args(EntryMode)
# How a current-session leader whose model the host did not report is shown.
UNREPORTED_MODEL = "this session (model not reported)"
# No profile asks for more; a larger count is refused before anything is allocated.
MAX_ROLE_COUNT = 64


# ------------------------------------------------------------------------- rules


@dataclass(frozen=True, kw_only=True)
class SchemaWords:
    """The JSON Schema keywords a `Rule` publishes (those without a value left out)."""

    __pydantic_config__ = config(camel_case=True, omit_none=True)

    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    enum: list[str] | None = None
    minimum: int | None = None
    maximum: int | None = None
    max_items: int | None = None


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One shape rule of a request field; a broken one says `expected` (`{value}`, `{key}`)."""

    length: tuple[int, int] | None = None
    max_length: int | None = None
    pattern: re.Pattern[str] | None = None
    choices: tuple[str, ...] = ()
    range: tuple[int, int] | None = None
    max_items: int | None = None
    items: Rule | None = None
    names: Rule | None = None
    values: Rule | None = None
    custom: Callable[[Any], str | None] | None = None
    expected: str = ""

    def problem(self, value: Any, key: str = "") -> str | None:
        """What is wrong with `value` itself (not with its items), or None."""
        if value is None:
            return None
        if self.length is not None:
            low, high = self.length
            if not low <= len(value) <= high:
                if low:
                    return f"expected {low} to {high} characters, got {len(value)}"
                return f"expected at most {high} characters, got {len(value)}"
        broken = (
            (self.max_length is not None and len(value) > self.max_length)
            or (self.pattern is not None and not self.pattern.fullmatch(value))
            or (bool(self.choices) and value not in self.choices)
            or (self.range is not None and not self.range[0] <= value <= self.range[1])
            or (self.max_items is not None and len(value) > self.max_items)
        )
        if broken:
            return self.expected.format(value=value, key=key)
        return self.custom(value) if self.custom is not None else None

    def publish(self, target: dict[str, Any]) -> None:
        """Write the rule into `target`, the JSON Schema of the value."""
        text = self.length is not None or self.max_length is not None
        if text:
            # An optional text carries the rule on its string branch.
            branches = target.get("anyOf", ())
            target = next((b for b in branches if b.get("type") == "string"), target)
        low, high = self.range or (None, None)
        words = SchemaWords(
            min_length=self.length[0] if self.length is not None and self.length[0] else None,
            max_length=self.length[1] if self.length is not None else self.max_length,
            pattern=self.pattern.pattern if self.pattern is not None else None,
            enum=list(self.choices) or None,
            minimum=low,
            maximum=high,
            max_items=self.max_items,
        )
        target.update(to_data(words))
        for part, key in (
            (self.items, "items"),
            (self.names, "propertyNames"),
            (self.values, "additionalProperties"),
        ):
            if part is not None:
                part.publish(target.setdefault(key, {}))


_RULE = "okstra_rule"


def rule(**given: Any) -> dict[str, Rule]:
    """A field's metadata holding its rule: `field(metadata=rule(length=(1, 64)))`."""
    return {_RULE: Rule(**given)}


def check_rules(record: Any) -> None:
    """Check every field rule of `record`, in field order (`RecordError` at the first)."""
    for f in dataclasses.fields(record):
        found: Rule | None = f.metadata.get(_RULE)
        if found is not None:
            _check(type(record), (f.name,), found, getattr(record, f.name))


def _check(cls: type[Any], loc: tuple[str, ...], rule: Rule, value: Any, key: str = "") -> None:
    message = rule.problem(value, key)
    if message is not None:
        raise problem(cls, loc, message, value)
    if value is None:
        return
    if rule.items is not None:
        for item in value:
            _check(cls, loc, rule.items, item, key)
    if rule.names is not None or rule.values is not None:
        for name, item in value.items():
            if rule.names is not None:
                _check(cls, (*loc, name), rule.names, name, name)
            if rule.values is not None:
                _check(cls, (*loc, name), rule.values, item, name)


def publish_rules(schema: dict[str, Any], cls: type[Any]) -> None:
    """A request record's `json_schema_extra`: each field's rule, in its property."""
    props = schema.get("properties", {})
    names = aliases_of(cls)
    for f in dataclasses.fields(cls):
        found: Rule | None = f.metadata.get(_RULE)
        prop = props.get(names.get(f.name, f.name))
        if found is not None and prop is not None:
            found.publish(prop)


def _absolute(path: Path) -> str | None:
    return None if path.is_absolute() else "expected an absolute path"


def _slug(what: str) -> Callable[[str], str | None]:
    """A task path segment's rule: already the slug `tasks.check_segment` makes of it."""

    def check(value: str) -> str | None:
        try:
            slug = check_segment(value, what)
        except OkstraError as exc:
            return exc.message
        return None if slug == value else f"{what} must be a slug (try {slug!r})"

    return check


def _task_key(value: str) -> str | None:
    """A related task's key: `<group>/<id>`, both under the one name rule."""
    group, sep, task_id = value.partition("/")
    if not sep or name_problem(group) or name_problem(task_id):
        return f"expected task keys like 'group/id' ({RULE}), got {value!r}"
    return None


class _Dumped:
    """A request record: its field rules checked when made, and `dump()`."""

    def __post_init__(self) -> None:
        check_rules(self)

    def dump(self) -> dict[str, Any]:
        """The JSON form (camelCase keys)."""
        data: dict[str, Any] = to_data(self)
        return data


# How a request record is read and written, and its rules published in its schema.
_RULED: dict[str, Any] = {"camel_case": True, "by_name": True, "json_schema_extra": publish_rules}
_CONFIG = config(**_RULED)
_TASK_TYPE = Rule(
    length=(0, 64),
    pattern=re.compile(r"^[a-z0-9][a-z0-9-]*$"),
    expected="expected a lower-case slug (a-z, 0-9, -)",
)
_TASK_KEY = Rule(
    pattern=re.compile(r"^[^/\s]+/[^/\s]+$"),
    expected="expected task keys like 'group/id', got {value!r}",
    custom=_task_key,
)
_ROLE_NAME = Rule(
    pattern=re.compile(r"^[a-z][a-z0-9_-]*$"),
    max_length=64,
    expected="expected a role name (lower-case letters, digits, '-' or '_', "
    "starting with a letter)",
)
_COUNT = Rule(
    range=(0, MAX_ROLE_COUNT),
    expected=f"expected a count from 0 to {MAX_ROLE_COUNT}, got {{value}}",
)
_MODEL_REFS = Rule(
    max_items=MAX_ROLE_COUNT,
    expected=f"{{key}}: at most {MAX_ROLE_COUNT} models",
    items=Rule(
        pattern=re.compile(r"^[^/\s]+/\S+$"),
        max_length=200,
        expected="expected a model ref 'provider/model', got {value!r}",
    ),
)
_BASE_REF = Rule(
    length=(0, 400),
    pattern=re.compile(r"^(?![-\s])[^\x00-\x1f\x7f]*$"),
    expected="expected a git revision (a branch, tag or commit) or run:<run-id>, got {value!r}",
)
_LEAD_ACCESS = Rule(
    choices=LEAD_ACCESS, expected=f"expected one of {', '.join(LEAD_ACCESS)}, got {{value!r}}"
)
_ENTRY_MODE = Rule(
    choices=ENTRY_MODES, expected=f"expected one of {', '.join(ENTRY_MODES)}, got {{value!r}}"
)


@dataclass(frozen=True, kw_only=True)
class CurrentModel(_Dumped):
    """The host session's own model, as the host reports it (all unknown by default)."""

    __pydantic_config__ = _CONFIG

    provider: StrictStr | None = None
    model_ref: StrictStr | None = field(default=None, metadata=rule(length=(1, 200)))
    effort: StrictStr | None = field(default=None, metadata=rule(length=(1, 64)))


@dataclass(frozen=True, kw_only=True)
class HostSessionContext(_Dumped):
    """Which host runs okstra, in which entry mode, on which model — authoritative."""

    __pydantic_config__ = _CONFIG

    host_id: StrictStr | None = field(default=None, metadata=rule(length=(1, 64)))
    entry_mode: EntryMode = field(default="spawn-process", metadata={_RULE: _ENTRY_MODE})
    available_functions: tuple[StrictStr, ...] = ()
    interaction_surface: StrictStr = "cli"
    current_model: CurrentModel = field(default_factory=CurrentModel)

    @property
    def model_ref(self) -> str | None:
        return self.current_model.model_ref

    def to_json_text(self) -> str:
        """The `--host-session-context-json` value (canonical: sorted keys)."""
        return orjson.dumps(self.dump(), option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True, kw_only=True)
class RunRequest(_Dumped):
    """Everything prepare needs, decided (`base_ref` "" and `lead_access` None: not given)."""

    __pydantic_config__ = config(**_RULED, omit_empty=("base_ref",), omit_none=("lead_access",))

    project_root: Path = field(metadata=rule(custom=_absolute))
    task_group: StrictStr = field(metadata=rule(length=(0, 200), custom=_slug("task group")))
    task_id: StrictStr = field(metadata=rule(length=(0, 200), custom=_slug("task id")))
    task_type: StrictStr = field(metadata={_RULE: _TASK_TYPE})
    brief: StrictStr = field(metadata=rule(length=(1, 4096)))
    approved_plan: StrictStr = field(default="", metadata=rule(length=(0, 4096)))
    directive: StrictStr = field(default="", metadata=rule(length=(0, 65536)))
    related_tasks: tuple[StrictStr, ...] = field(default=(), metadata=rule(items=_TASK_KEY))
    host: HostSessionContext = field(default_factory=HostSessionContext)
    role_counts: dict[StrictStr, StrictInt] = field(
        default_factory=dict, metadata=rule(names=_ROLE_NAME, values=_COUNT)
    )
    role_models: dict[StrictStr, list[StrictStr]] = field(
        default_factory=dict, metadata=rule(names=_ROLE_NAME, values=_MODEL_REFS)
    )
    base_ref: StrictStr = field(default="", metadata={_RULE: _BASE_REF})
    lead_access: LeadAccess | None = field(default=None, metadata={_RULE: _LEAD_ACCESS})
    provenance: dict[StrictStr, StrictStr] = field(default_factory=dict)

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
            # Carried when given (a run with writers; a lead with more than its prompts).
            **({"base-ref": self.base_ref} if self.base_ref else {}),
            **({"lead-access": self.lead_access} if self.lead_access else {}),
            "provenance": [f"{key}={value}" for key, value in self.provenance.items()],
        }

    def _context_arg(self) -> str:
        # Omitted when --host and --entry-mode alone say the same.
        plain = HostSessionContext(host_id=self.host.host_id, entry_mode=self.host.entry_mode)
        return "" if self.host == plain else self.host.to_json_text()

    def render_argv(self) -> tuple[str, ...]:
        """`okstra prepare <render_argv()…>` prepares exactly this request."""
        argv: list[str] = []
        for key, value in self.render_args().items():
            if key == "task-key" or (key == "entry-mode" and value == "spawn-process"):
                continue
            for item in value if isinstance(value, list) else [value]:
                if item:
                    argv.append(f"--{key}={item}")
        return tuple(argv)


# The flags that name a field otherwise than `--<field-name>`.
_FLAGS = {
    "role_counts": "--role-count",
    "role_models": "--role-model",
    "host": "--host-session-context-json",
}


def usage_error(exc: RecordError, *, prefix: str = "") -> UsageError:
    """A `UsageError` naming the flag of the first invalid field of a request."""
    problem = exc.errors()[0]
    loc = [str(part) for part in problem["loc"]]
    # The field as the error places it (its name in files), by its Python name.
    names = {alias: name for name, alias in aliases_of(exc.record).items()}
    head = names.get(loc[0], loc[0]) if loc else ""
    flag = _FLAGS.get(head) or ("--" + head.replace("_", "-") if head else None)
    where = ".".join(loc[1:])
    message = str(problem["msg"]).removeprefix("Value error, ")
    return UsageError(prefix + message + (f" ({where})" if where else ""), field=flag)
