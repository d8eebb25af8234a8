"""What a worker's CLI reports a turn used: read from its output, summed, shown.

A provider's `[usage] format` says how: `claude-json` (one result object: `result` the
answer, `usage` with input, output, cache-creation and cache-read tokens,
`total_cost_usd`) or `codex-jsonl` (one event per line; `turn.completed` carries
`usage` with input (cached included), cached and output tokens, no cost). The
supervisor feeds stdout through a `UsageReader`: people see the text the JSON carries
(the raw JSON is kept in `events.jsonl`; a non-JSON line is shown as it came). A `Usage`
counts every input token read and the cached ones; nothing is estimated: no report or
a malformed one leaves the turn without usage, shown `—`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from ...documents.run import Usage
from ...records import aliases_of, config, dataclass

# An unfinished line longer than this is shown as it came (and read no further).
MAX_LINE = 16 * 1024 * 1024
NOTHING = "—"


class Malformed(ValueError):
    """A usage object that is not what its format says."""


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Malformed(value)
    return value


def _optional_count(data: Mapping[str, Any], key: str) -> int | None:
    return _count(data[key]) if key in data and data[key] is not None else None


def _cost(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Malformed(value)
    if not math.isfinite(value) or value < 0:  # NaN, infinity
        raise Malformed(value)
    return float(value)


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def claude_usage(event: Mapping[str, Any]) -> Usage | None:
    """The usage of claude's result object (None: none); Malformed when not claude's."""
    usage = event.get("usage")
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        raise Malformed(usage)
    fresh = _count(usage.get("input_tokens"))
    written = _optional_count(usage, "cache_creation_input_tokens") or 0
    read = _optional_count(usage, "cache_read_input_tokens")
    return Usage(
        input_tokens=fresh + written + (read or 0),
        output_tokens=_count(usage.get("output_tokens")),
        cached_input_tokens=read,
        cost_usd=_cost(event.get("total_cost_usd")),
    )


def _claude_line(event: Mapping[str, Any]) -> tuple[str | None, Usage | None]:
    if event.get("type") != "result":
        raise LookupError  # not its result: shown as it came
    answer = _text(event, "result") or ""
    return answer, claude_usage(event)


def codex_usage(event: Mapping[str, Any]) -> Usage:
    """The usage of codex's `turn.completed` event; Malformed when not codex's."""
    usage = event.get("usage")
    if not isinstance(usage, Mapping):
        raise Malformed(usage)
    return Usage(
        input_tokens=_count(usage.get("input_tokens")),
        output_tokens=_count(usage.get("output_tokens")),
        cached_input_tokens=_optional_count(usage, "cached_input_tokens"),
    )


def _codex_item_started(item: Mapping[str, Any]) -> str | None:
    kind = item.get("type")
    if kind == "command_execution":
        return f"$ {_text(item, 'command') or ''}"
    if kind == "mcp_tool_call":
        return f"tool {_text(item, 'server') or '?'}.{_text(item, 'tool') or '?'}"
    return None


def _codex_changes(item: Mapping[str, Any]) -> str:
    changes = item.get("changes")
    shown = [
        f"{_text(c, 'path') or '?'} ({_text(c, 'kind') or '?'})"
        for c in (changes if isinstance(changes, list) else ())
        if isinstance(c, Mapping)
    ]
    return "changed " + (", ".join(shown) or "files")


def _codex_item_completed(item: Mapping[str, Any]) -> str | None:
    kind = item.get("type")
    if kind in ("agent_message", "reasoning", "plan"):
        return _text(item, "text")
    if kind == "command_execution":
        code = item.get("exit_code")
        return f"  exited {code}" if isinstance(code, int) else f"  {_text(item, 'status')}"
    if kind == "file_change":
        return _codex_changes(item)
    if kind == "mcp_tool_call":
        tool = f"{_text(item, 'server') or '?'}.{_text(item, 'tool') or '?'}"
        return f"tool {tool}: {_text(item, 'status') or 'done'}"
    if kind == "web_search":
        return f"searched: {_text(item, 'query') or ''}"
    if kind == "error":
        return f"warning: {_text(item, 'message') or ''}"
    return None


def _codex_line(event: Mapping[str, Any]) -> tuple[str | None, Usage | None]:
    kind = event.get("type")
    item = event.get("item")
    item = item if isinstance(item, Mapping) else {}
    if kind == "thread.started":
        # The header codex prints without --json (`worker_session_pattern` reads it).
        return f"session id: {_text(event, 'thread_id') or '?'}", None
    if kind == "turn.completed":
        return None, codex_usage(event)
    if kind == "item.started":
        return _codex_item_started(item), None
    if kind == "item.completed":
        return _codex_item_completed(item), None
    if kind == "error":
        return f"error: {_text(event, 'message') or ''}", None
    if kind == "turn.failed":
        error = event.get("error")
        message = _text(error, "message") if isinstance(error, Mapping) else None
        return f"error: {message or 'the turn failed'}", None
    if isinstance(kind, str):
        return None, None  # turn.started, item.updated, ...: nothing to read
    raise LookupError


_FORMATS: dict[str, Callable[[Mapping[str, Any]], tuple[str | None, Usage | None]]] = {
    "claude-json": _claude_line,
    "codex-jsonl": _codex_line,
}


def add(one: Usage | None, other: Usage) -> Usage:
    """Two reports of one turn added up (a cost only where both have one)."""
    if one is None:
        return other
    cached = (
        None
        if one.cached_input_tokens is None and other.cached_input_tokens is None
        else (one.cached_input_tokens or 0) + (other.cached_input_tokens or 0)
    )
    cost = None if one.cost_usd is None or other.cost_usd is None else one.cost_usd + other.cost_usd
    return Usage(
        input_tokens=one.input_tokens + other.input_tokens,
        output_tokens=one.output_tokens + other.output_tokens,
        cached_input_tokens=cached,
        cost_usd=cost,
    )


class UsageReader:
    """Reads a CLI's stdout as it comes: `feed` gives what people read, `usage` the turn's."""

    def __init__(self, format: str | None, *, max_line: int = MAX_LINE) -> None:
        self.line = _FORMATS.get(format) if format else None
        self.max_line = max_line
        self.pending = bytearray()
        self.raw = False  # inside a line too long to read: shown as it comes
        self.found: Usage | None = None
        self.malformed = False

    @property
    def active(self) -> bool:
        """Whether the output is read at all (a provider with a known `[usage]`)."""
        return self.line is not None

    @property
    def usage(self) -> Usage | None:
        """What the CLI reported (None: nothing, or a malformed report)."""
        return None if self.malformed else self.found

    def feed(self, chunk: bytes) -> bytes:
        """What to show of `chunk` (complete lines read; a partial one kept)."""
        if self.line is None:
            return chunk
        if self.raw:  # the rest of a line too long to read, shown as it comes
            end = chunk.find(b"\n")
            if end < 0:
                return chunk
            self.raw = False
            return chunk[: end + 1] + self.feed(chunk[end + 1 :])
        cut = chunk.rfind(b"\n")
        shown = b""
        if cut >= 0:
            lines = (bytes(self.pending) + chunk[:cut]).split(b"\n")
            shown = b"".join(self._read(line) for line in lines)
            self.pending = bytearray(chunk[cut + 1 :])
        else:
            self.pending += chunk
        if len(self.pending) > self.max_line:
            shown += bytes(self.pending)
            self.pending, self.raw = bytearray(), True
        return shown

    def finish(self) -> bytes:
        """What to show of an unfinished last line, once the output is over."""
        rest, self.pending = bytes(self.pending), bytearray()
        if not rest or self.line is None:
            return rest
        return self._read(rest)

    def _read(self, line: bytes) -> bytes:
        assert self.line is not None
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            event = None
        if not isinstance(event, dict):
            return line + b"\n"
        try:
            text, usage = self.line(event)
        except LookupError:
            return line + b"\n"
        except Malformed:
            self.malformed = True  # claude's answer is still shown
            text, usage = (_text(event, "result") if event.get("type") == "result" else None), None
        if usage is not None:
            self.found = add(self.found, usage)
        if not text:
            return b""
        return text.encode("utf-8", "replace") + (b"" if text.endswith("\n") else b"\n")


@dataclass(frozen=True, kw_only=True)
class UsageTotal:
    """What some turns used, as reported: of `turns`, `turns_reported` reported tokens
    and `turns_costed` a cost (`cost_usd` None when none did)."""

    __pydantic_config__ = config(camel_case=True)

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int | None
    cost_usd: float | None
    turns: int
    turns_reported: int
    turns_costed: int


@dataclass(frozen=True, kw_only=True)
class RoleUsage:
    """What the turns of one role's executions used (`report roles`)."""

    __pydantic_config__ = config(camel_case=True)

    role: str
    usage: UsageTotal | None


@dataclass(frozen=True, kw_only=True)
class RunUsage:
    """What a run's workers used: per role (in the manifest's order) and in all."""

    __pydantic_config__ = config(camel_case=True)

    by_role: tuple[RoleUsage, ...]
    run: UsageTotal | None


def total_of(usages: Iterable[Usage | None]) -> UsageTotal | None:
    """The turns' usage added up; None when none reported any."""
    counted = list(usages)
    reported = [u for u in counted if u is not None]
    if not reported:
        return None
    cached = [u.cached_input_tokens for u in reported if u.cached_input_tokens is not None]
    costs = [u.cost_usd for u in reported if u.cost_usd is not None]
    return UsageTotal(
        input_tokens=sum(u.input_tokens for u in reported),
        output_tokens=sum(u.output_tokens for u in reported),
        cached_input_tokens=sum(cached) if cached else None,
        cost_usd=round(sum(costs), 6) if costs else None,
        turns=len(counted),
        turns_reported=len(reported),
        turns_costed=len(costs),
    )


def _tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def _of(some: int, total: UsageTotal) -> str:
    return f" ({some} of {total.turns} turns)" if some < total.turns else ""


def usage_text(total: UsageTotal | None) -> str:
    """`12.3k in (9.1k cached) · 845 out · $0.0421` (`(1 of 2 turns)` when partial), or `—`."""
    if total is None:
        return NOTHING
    cached = total.cached_input_tokens
    text = (
        f"{_tokens(total.input_tokens)} in"
        + (f" ({_tokens(cached)} cached)" if cached else "")
        + f" · {_tokens(total.output_tokens)} out"
        + _of(total.turns_reported, total)
    )
    cost = total.cost_usd
    if cost is not None:
        text += (f" · ${cost:.4f}" if cost < 1 else f" · ${cost:.2f}") + _of(
            total.turns_costed, total
        )
    return text


def usage_shown(data: Any) -> str:
    """`usage_text` of a `UsageTotal`'s JSON (a front end's payload); `—` if not one."""
    if not isinstance(data, Mapping):
        return NOTHING
    names = aliases_of(UsageTotal)
    value = {name: data.get(names.get(name, name)) for name in _TOTAL_FIELDS}
    try:
        counts = ("input_tokens", "output_tokens", "turns", "turns_reported", "turns_costed")
        total = UsageTotal(
            **{name: _count(value[name]) for name in counts},
            cached_input_tokens=_optional_count(value, "cached_input_tokens"),
            cost_usd=_cost(value["cost_usd"]),
        )
    except Malformed:
        return NOTHING
    return usage_text(total)


_TOTAL_FIELDS = tuple(f.name for f in dataclasses.fields(UsageTotal))
