"""The one name rule for task groups, task ids and the run names built from them.

NFC; letters of any script, combining marks, digits and `._-`; starting with a letter
or digit; at most `MAX_NAME_BYTES` bytes.
"""

from __future__ import annotations

import re
import unicodedata

# The file system's limit for one directory name.
MAX_NAME_BYTES = 255
SEPARATORS = "._-"
RULE = (
    "letters of any script, digits and '.', '_' or '-', starting with a letter or a "
    f"digit, at most {MAX_NAME_BYTES} bytes"
)


def name_char(char: str) -> bool:
    """`char` may stand in a name: a letter, a combining mark, a decimal digit or `._-`."""
    if char in SEPARATORS:
        return True
    category = unicodedata.category(char)
    return category[0] in "LM" or category == "Nd"


def name_problem(value: str, what: str = "name") -> str | None:
    """What is wrong with `value` (as given) as a task group or id; None when it is a name."""
    if not value:
        return f"{what} is empty: expected {RULE}"
    if "/" in value or "\\" in value:
        return f"{what} must not contain a path separator: {value!r}"
    if set(value) <= {"."}:
        return f"{what} must not be {value!r}: it would escape .okstra/tasks/"
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        return (
            f"{what} is {size} bytes long: a directory name may be at most {MAX_NAME_BYTES} bytes"
        )
    bad = next((c for c in value if not name_char(c)), None)
    if bad is not None:
        return f"{what} {value!r} holds {_describe(bad)}: expected {RULE}"
    first = unicodedata.category(value[0])
    if first[0] != "L" and first != "Nd":
        return f"{what} {value!r} must start with a letter or a digit"
    if unicodedata.normalize("NFC", value) != value:
        return f"{what} {value!r} is not in Unicode normal form NFC"
    return None


# The common case, without a look at each character (ASCII is NFC, one byte a char).
_ASCII_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME_BYTES - 1}}}")


def is_name(value: str) -> bool:
    """`value` is a task group or id under the name rule."""
    return _ASCII_NAME.fullmatch(value) is not None or name_problem(value) is None


def _describe(char: str) -> str:
    if char.isspace():
        return "whitespace"
    category = unicodedata.category(char)
    kind = {"Cc": "a control character", "Cf": "a format character"}.get(category)
    return f"{kind} (U+{ord(char):04X})" if kind else f"{char!r} (U+{ord(char):04X})"
