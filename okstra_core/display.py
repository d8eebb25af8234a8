"""Text for people, made inert: what okstra prints from data can never drive a terminal.

Every field printed for people goes through `inert` (never JSON, which must stay exact).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime

# C0 (but tab, newline), DEL, C1, bidi controls, and lone surrogates (they raise on a
# UTF-8 terminal).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]"
# One line: newline and tab too, and the Unicode line and paragraph separators.
_UNSAFE_LINE = f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff]"


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use: every command imports this module, few print data."""
    return re.compile(source)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: object, *, keep_newlines: bool = False) -> str:
    """`str(text)` with every control and bidi character shown as a visible escape.

    `keep_newlines` keeps `\\n` and `\\t` (a block of lines); else a field stays one line.
    """
    value = str(text)
    pattern = _pattern(_UNSAFE if keep_newlines else _UNSAFE_LINE)
    if keep_newlines:
        value = value.replace("\r\n", "\n")
    return pattern.sub(_escape, value)


def inert_markup(text: object, *, keep_newlines: bool = False) -> str:
    """`inert(text)` with Rich markup escaped, for a markup string built around data."""
    value = inert(text, keep_newlines=keep_newlines)
    # Rich's own rule (rich.markup.escape), without importing Rich: a backslash before
    # an opening bracket that starts a tag makes the bracket literal.
    return re.sub(r"(\\*)(\[[a-zA-Z#/@].*?\])", r"\1\1\\\2", value)


# Screens: a CLI draws no-break spaces (claude's input line is `❯`, U+00A0, space);
# every screen line is made plain once, here, so patterns see what a person sees.

_NO_BREAK = "\u00a0\u2007\u202f"
_TRAILING = re.compile(r"\s+\Z")
# Banner art: block elements, Braille patterns, box drawing.
_ART = re.compile(r"[\u2580-\u259f\u2800-\u28ff\u2500-\u257f]")


def screen_line(line: str) -> str:
    """A screen line as compared and shown: no-break spaces as spaces, trailing space one."""
    for char in _NO_BREAK:
        line = line.replace(char, " ")
    return _TRAILING.sub(" ", line)


def is_art(line: str) -> bool:
    """Whether a screen line is drawing (mostly block, Braille or box characters), not words."""
    shown = [char for char in line if not char.isspace()]
    if not shown:
        return False
    drawn = sum(1 for char in shown if _ART.match(char))
    return drawn * 2 > len(shown)


def words_of(lines: list[str], count: int) -> list[str]:
    """The last `count` screen lines that say something (art and blanks skipped), rstripped."""
    kept = [line.rstrip() for line in lines if line.strip() and not is_art(line)]
    return kept[-count:] if count > 0 else []


_AGE_UNITS = (("d", 86400), ("h", 3600), ("m", 60))
UNKNOWN_AGE = "—"


def age(seconds: float | None) -> str:
    """How long ago, as shown everywhere: `45s`, `12m`, `3h`, `2d` (rounded down), or `—`."""
    if seconds is None:
        return UNKNOWN_AGE
    whole = max(0, int(seconds))
    for unit, size in _AGE_UNITS:
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def age_since(then: datetime | None, now: datetime) -> str:
    """`age` of `then` at `now` (`—` when `then` is unknown)."""
    return age(None if then is None else (now - then).total_seconds())


def elapsed(seconds: int | None) -> str:
    """A worker's time so far, as `worker status` and the MCP tools show it: `4m07s`, `1h02m`."""
    if seconds is None:
        return "-"
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def status_label(state: str, exit_status: int | None, signal: int | None) -> str:
    """What people read: `exited 3`, `exited (signal 9)`, `stopped`."""
    if state == "exited":
        if signal is not None:
            return f"{state} (signal {signal})"
        if exit_status is not None:
            return f"{state} {exit_status}"
    return state
