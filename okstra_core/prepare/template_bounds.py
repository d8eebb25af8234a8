"""What a template may cost: render time, output, sizes, loop iterations, recursion.

jinja2's sandbox keeps a (workspace-replaceable) template from the interpreter, not the
machine, and a rendering thread cannot be stopped from outside, so every bound is
checked inside the sandbox by the code the template runs: time (`SECONDS` of the
thread's processor time, looked at on every call, access, operator, filter and 256th
iteration), loop iterations (`ITERATIONS`, all loops; `range()` at most `RANGE`), sizes
of what it builds (checked *before* building when knowable) and streamed output (both
`OUTPUT` beyond the text it is given). Recursion ends in RecursionError. The budget of
the render in progress is a context variable (`bounded`). `lipsum` is not offered.

Compiling costs more than rendering, so jinja2's bytecode is kept as derived data
(`okstra_core.derived`, user directories only: a repository cannot plant an entry),
keyed by the template and `STAMP` (jinja2, Python, environment class, options); jinja2
drops code whose source checksum differs. The sandbox checks run at render time through
the environment, cached code or not. An unreadable cache only makes prepare slower.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import string
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import jinja2.exceptions
import jinja2.filters
import jinja2.sandbox
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context

from .. import derived

SECONDS = 5.0
OUTPUT = 1 << 20  # characters a template may write, or build, beyond its inputs
RANGE = 100_000  # numbers one range() may give
ITERATIONS = 1_000_000  # loop iterations of one render, all loops together
# Filters whose numeric arguments are sizes, held to the size limit before they run.
_SIZED_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate", "slice", "batch"})
# Widths and precisions: any number of a str.format spec, those of a %-conversion.
_SPEC_NUMBER = re.compile(r"\d+")
_PERCENT_NUMBERS = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d*)(?:\.(\d*))?")
# What `*` and `+` repeat or join.
_SIZED = (str, bytes, list, tuple)


class BoundExceeded(Exception):
    """A template went past one of its bounds; the message says which, in words."""


def text_size(value: object) -> int:
    """How many characters of text `value` holds (strings inside mappings and lists)."""
    size = 0
    pending = [value]
    seen = 0
    while pending and seen < 100_000:  # a context is small; a cycle is not followed long
        item = pending.pop()
        seen += 1
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
    return size


def _unit(value: object) -> str:
    return "characters" if isinstance(value, str | bytes) else "items"


class Budget:
    """The bounds of one render: a deadline (`seconds` of this thread's processor time), a
    size limit (`OUTPUT` beyond the text of `context`), a count of iterations."""

    def __init__(self, context: Mapping[str, Any] | None = None, seconds: float = SECONDS) -> None:
        self.seconds = seconds
        self.deadline = time.thread_time() + seconds
        self.iterations = 0
        self._context = context
        self._size: int | None = None

    @property
    def size(self) -> int:
        """The size limit: `OUTPUT` beyond the text of the context."""
        if self._size is None:
            self._size = OUTPUT + (text_size(self._context) if self._context else 0)
        return self._size

    def within(self, size: int) -> bool:
        return size <= OUTPUT or size <= self.size

    def tick(self) -> None:
        if time.thread_time() > self.deadline:
            raise BoundExceeded(f"rendering took over {self.seconds:g} s (the limit)")

    def check_size(self, size: int, what: str, unit: str = "characters") -> None:
        if not self.within(size):
            raise BoundExceeded(
                f"{what} would be {size:,} {unit}, over the limit "
                f"({self.size:,}: 1 MiB beyond the text the template is given)"
            )

    def check_value(self, value: object, what: str) -> None:
        if isinstance(value, str | bytes | list | tuple | dict | set):
            self.check_size(len(value), what, _unit(value))

    def check_numbers(self, values: Iterable[object], what: str) -> None:
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool):
                self.check_size(abs(value), what)

    def check_number_text(self, numbers: Iterable[str], what: str) -> None:
        for number in numbers:
            if number:
                # A number of more digits than any size is over the limit as it is.
                self.check_size(int(number) if len(number) < 19 else self.size + 1, what)

    def check_percent(self, fmt: str, what: str) -> None:
        """The widths and precisions of a %-format are sizes too."""
        for width, precision in _PERCENT_NUMBERS.findall(fmt):
            self.check_number_text((width, precision), what)


_CURRENT: ContextVar[Budget] = ContextVar("okstra_template_budget")


@contextmanager
def bounded(budget: Budget) -> Iterator[Budget]:
    """Compile and render within `budget` (compiling folds constants: it runs code too)."""
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def current() -> Budget:
    """The budget of the render in progress (in this thread)."""
    try:
        return _CURRENT.get()
    except LookupError:
        raise RuntimeError("a bounded template renders only within `bounded(budget)`") from None


def _joined_size(separator: str, items: list[Any], budget: Budget, what: str) -> None:
    """Check the size of `separator.join(items)`, item by item (stops early)."""
    size = len(separator) * max(0, len(items) - 1)
    budget.check_size(size, what)
    for item in items:
        size += len(item) if isinstance(item, str) else len(str(item))
        budget.check_size(size, what)


def _replaced_size(text: str, old: str, new: str, count: object, budget: Budget) -> None:
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    budget.check_size(len(text) + hits * (len(new) - len(old)), "the result of replace()")


def _binop_size(operator: str, left: Any, right: Any, budget: Budget) -> None:
    """Refuse an operator whose result would be over the size limit, before it runs."""
    what = f"the result of {operator!r}"
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, _SIZED) and isinstance(times, int):
                budget.check_size(len(seq) * max(0, times), what, _unit(seq))
    elif operator == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
        budget.check_size(len(left) + len(right), what, _unit(left))
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        if abs(left) > 1 and right > 0:  # digits of the result, before it is computed
            budget.check_size(int(right * math.log10(abs(left))) + 1, what, "digits")
    elif operator == "%" and isinstance(left, str):
        budget.check_percent(left, what)
        budget.check_numbers(right if isinstance(right, tuple) else (right,), what)


def _method_args(
    name: str, owner: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget
) -> tuple[Any, ...]:
    """Check a call of a method of a string, list, dict or set before it runs."""
    what = f"the result of {type(owner).__name__}.{name}()"
    budget.check_numbers([*args, *kwargs.values()], what)
    if name == "join" and isinstance(owner, str) and len(args) == 1:
        items = list(args[0])
        _joined_size(owner, items, budget, what)
        return (items,)  # the iterable was consumed
    if name == "replace" and isinstance(owner, str) and len(args) >= 2:
        _replaced_size(owner, str(args[0]), str(args[1]), args[2] if len(args) > 2 else -1, budget)
        return args
    values = (*args, *kwargs.values())
    added = sum(len(a) for a in values if isinstance(a, str | list | tuple | dict | set))
    budget.check_size(len(owner) + added, what, _unit(owner))
    return args


def _check_replace(arguments: dict[str, Any], budget: Budget) -> None:
    text, old, new = (str(arguments[key]) for key in ("s", "old", "new"))
    _replaced_size(text, old, new, arguments.get("count"), budget)


def _check_join(arguments: dict[str, Any], budget: Budget) -> None:
    items = list(arguments["value"])
    if arguments.get("attribute") is None:
        _joined_size(str(arguments.get("d", "")), items, budget, "the result of the join filter")
    arguments["value"] = items  # the iterable was consumed


def _check_format(arguments: dict[str, Any], budget: Budget) -> None:
    what = "the result of the format filter"
    budget.check_percent(str(arguments["value"]), what)
    budget.check_numbers([*arguments.get("args", ()), *arguments.get("kwargs", {}).values()], what)


def _check_sum(arguments: dict[str, Any], budget: Budget) -> None:
    # Adding up strings or lists copies the whole sum again at every step.
    if not isinstance(arguments.get("start", 0), int | float):
        raise BoundExceeded("the sum filter adds up numbers only (start must be a number)")


def _check_indent(arguments: dict[str, Any], budget: Budget) -> None:
    width = arguments.get("width", 4)
    if isinstance(width, str):
        text = str(arguments["s"])
        lines = text.count("\n") + 1
        budget.check_size(len(text) + lines * len(width), "the result of the indent filter")


_FILTER_CHECKS: dict[str, Callable[[dict[str, Any], Budget], None]] = {
    "replace": _check_replace,
    "join": _check_join,
    "format": _check_format,
    "sum": _check_sum,
    "indent": _check_indent,
}


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    check = _FILTER_CHECKS.get(name)
    signature = inspect.signature(func) if check is not None else None
    sized = name in _SIZED_FILTERS
    what = f"the result of the {name} filter"

    @functools.wraps(func)  # keeps jinja2's pass_context/… marks
    def bounded_filter(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        budget.tick()
        if sized:
            budget.check_numbers([*args, *kwargs.values()], what)
        if check is not None and signature is not None:
            bound = signature.bind(*args, **kwargs)
            check(bound.arguments, budget)
            args, kwargs = bound.args, bound.kwargs
        result = func(*args, **kwargs)
        budget.check_value(result, what)
        return result

    return bounded_filter


@functools.cache
def _bounded_filters() -> dict[str, Callable[..., Any]]:
    """jinja2's filters, each within the budget (wrapped once per process)."""
    return {name: _bounded_filter(name, f) for name, f in jinja2.filters.FILTERS.items()}


class BoundedBuffer(list[Any]):
    """Where a block (`{% set %}`, `{% filter %}`, `{% call %}`, a macro) captures its text,
    counted as it grows: text built in a block meets the size bound as output does."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def _grown(self, items: Iterable[Any]) -> None:
        self.size += sum(len(item) if isinstance(item, str) else 0 for item in items)
        budget = current()
        budget.tick()
        if not budget.within(self.size):
            raise BoundExceeded(
                f"the text a block builds is over {budget.size:,} characters "
                "(the limit: 1 MiB beyond the text the template is given)"
            )

    def append(self, item: Any) -> None:
        self._grown((item,))
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        items = tuple(items)
        self._grown(items)
        super().extend(items)


class BoundedCodeGenerator(CodeGenerator):
    """jinja2's code generator: loops through `bounded_iter`, `~` through `bounded_concat`,
    block buffers `BoundedBuffer`s."""

    def buffer(self, frame: Frame) -> None:
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.bounded_buffer()")

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        # environment.call(context, environment.bounded_iter, <iterable>): once per loop.
        at = node.lineno
        guarded = nodes.Call(
            nodes.EnvironmentAttribute("bounded_iter"), [node.iter], [], None, None, lineno=at
        )
        loop = nodes.For(
            node.target, guarded, node.body, node.else_, node.test, node.recursive, lineno=at
        )
        super().visit_For(loop, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat(")
        super().visit_Concat(node, frame)
        self.write(")")


class BoundedEnvironment(jinja2.sandbox.SandboxedEnvironment):
    """jinja2's sandbox within the bounds of this module (see `bounded`)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = BoundedCodeGenerator

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals["range"] = self.bounded_range
        self.globals.pop("lipsum", None)
        self.filters.update(_bounded_filters())

    def bounded_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Every loop's iterable (see `BoundedCodeGenerator`): counted, and timed."""
        budget = current()
        for item in iterable:
            budget.iterations += 1
            if budget.iterations > ITERATIONS:
                raise BoundExceeded(f"loops ran over {ITERATIONS:,} iterations (the limit)")
            if not budget.iterations & 0xFF:
                budget.tick()
            yield item

    def bounded_range(self, *args: int) -> range:
        current().tick()
        numbers = range(*args)
        try:
            count = len(numbers)
        except OverflowError:  # more than the machine's word can count
            count = RANGE + 1
        if count > RANGE:
            raise BoundExceeded(f"range() of {count:,} numbers is over the limit ({RANGE:,})")
        return numbers

    def bounded_buffer(self) -> BoundedBuffer:
        """A block's buffer (see `BoundedCodeGenerator.buffer`)."""
        return BoundedBuffer()

    def bounded_concat(self, value: str) -> str:
        """The result of `~` (its pieces are bounded: so is what joining them cost)."""
        current().check_size(len(value), "the result of '~'")
        return value

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = current()
        budget.tick()
        _binop_size(operator, left, right, budget)
        result = super().call_binop(context, operator, left, right)
        budget.check_value(result, f"the result of {operator!r}")
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        current().tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        current().tick()
        return super().getitem(obj, argument)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        # Positional-only: a keyword argument of the call may have any name.
        budget = current()
        budget.tick()
        owner = getattr(obj, "__self__", None)
        if isinstance(obj, types.BuiltinMethodType) and isinstance(
            owner, str | bytes | list | tuple | dict | set
        ):
            args = _method_args(obj.__name__, owner, args, kwargs, budget)
        result = super().call(context, obj, *args, **kwargs)
        budget.check_value(result, "the result of a call")
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        spec: str = value.__self__
        what = "the result of str.format()"

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            budget = current()
            for _, _, field, _ in string.Formatter().parse(spec):
                # The widths and precisions of a str.format spec are sizes too.
                budget.check_number_text(_SPEC_NUMBER.findall(field or ""), what)
            budget.check_numbers([*args, *kwargs.values()], what)
            result = wrapper(*args, **kwargs)
            budget.check_size(len(result), what)
            return result

        return functools.update_wrapper(bounded_format, wrapper)


def render_bounded(template: jinja2.Template, context: Mapping[str, Any]) -> str:
    """Render `template` (within `bounded`) as a stream stopped past the output limit."""
    budget = current()
    pieces: list[str] = []
    written = 0
    for piece in template.generate(**context):
        written += len(piece)
        if not budget.within(written):
            raise BoundExceeded(
                f"the output is over {budget.size:,} characters "
                "(the limit: 1 MiB beyond the text the template is given)"
            )
        pieces.append(piece)
    return "".join(pieces)


# The compiled code depends on this module (the bounds the code calls).
TEMPLATES = derived.Kind("templates", keep=8, code=("prepare/template_bounds.py",))
# How every template renders; part of the cache key (`STAMP`).
OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}
# The compiled code calls the bounds: the class is in the cache key (`STAMP`).
ENVIRONMENT = BoundedEnvironment
# What decides the code jinja2 compiles from a source, besides the source itself.
STAMP = "\0".join(
    [
        f"jinja2 {jinja2.__version__}",
        sys.version,
        sys.implementation.cache_tag or "",
        f"{ENVIRONMENT.__module__}.{ENVIRONMENT.__qualname__}",
        *(f"{key}={value!r}" for key, value in sorted(OPTIONS.items())),
    ]
).encode("utf-8", "surrogateescape")


class OneTemplate(jinja2.BaseLoader):
    """A loader holding the one template source the caller has read (safely)."""

    def __init__(self, name: str, path: Path, source: str) -> None:
        self.name = name
        self.path = path
        self.source = source

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        if template != self.name:
            raise jinja2.TemplateNotFound(template)
        # Up to date for as long as it is used: one environment renders once.
        return self.source, str(self.path), lambda: True


class CodeCache(jinja2.BytecodeCache):
    """jinja2's bytecode cache, kept as derived data (see the module)."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache

    def _key(self, bucket: jinja2.bccache.Bucket) -> str:
        return derived.key(TEMPLATES, STAMP, bucket.key)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        payload = derived.recall(self.cache, TEMPLATES, self._key(bucket))
        if payload is None:
            return
        try:
            # Checks jinja2's magic and the source checksum; a mismatch leaves no code.
            bucket.bytecode_from_string(payload)
        except Exception:  # a stale or damaged entry is a miss, whatever it raised
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        derived.keep(self.cache, TEMPLATES, self._key(bucket), bucket.bytecode_to_string())


def environment(name: str, path: Path, source: str, cache: Path) -> BoundedEnvironment:
    """An environment rendering `source` as template `name`, compiled code kept in `cache`."""
    return ENVIRONMENT(
        loader=OneTemplate(name, path, source), bytecode_cache=CodeCache(cache), **OPTIONS
    )
