"""The one name rule for task groups, task ids and the run names built from them.

A *name* is one directory below `.okstra/tasks/`: a task group or a task id. The wizard's
answers, `prepare` and every command that takes a run or a task (`status`, `attach`,
`resume`, `stop`, `runs`, `report`, `worker`, ...) judge a name with `name_problem`, so
what one of them creates the others find. A name is:

* NFC-normalised (`unicodedata.normalize("NFC", name) == name`): one spelling per name,
  so `café` typed with a combining accent and with a precomposed one is one folder;
* made of Unicode letters (categories `L*`, any script: `로그인`, `登录`, `café`),
  combining marks (`M*`, which some scripts need inside a word), decimal digits (`Nd`)
  and the separators `.`, `_`, `-` — so never a path separator, whitespace, a control
  or a format character (bidi controls, zero-width joiners);
* started by a letter or a digit (so never `.`, `..`, a hidden name or an option);
* at most `MAX_NAME_BYTES` bytes in UTF-8 (a file name's limit on common file systems).

Letter case is kept as written (a directory made by hand as `Auth` is found as `Auth`);
names okstra creates from what a person types are folded to lower case first
(`tasks.slugify`), so two spellings of one name are never two folders.
"""

from __future__ import annotations

import re
import unicodedata

# A task group or id is a directory name: the file system's limit for one name.
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


def _starts_well(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] == "L" or category == "Nd"


def name_problem(value: str, what: str = "name") -> str | None:
    """What is wrong with `value` as a task group or id (None: it is a name).

    Args:
        value: the name as given (nothing is stripped or folded here).
        what: what it is, for the message ("task group", "task id").

    Returns:
        A sentence naming `what`, the value and the rule it breaks; None when it is a name.
    """
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
    if not _starts_well(value[0]):
        return f"{what} {value!r} must start with a letter or a digit"
    if unicodedata.normalize("NFC", value) != value:
        return f"{what} {value!r} is not in Unicode normal form NFC"
    return None


# The common case, decided without looking at each character: ASCII letters and digits
# with `._-`, starting with a letter or a digit (such a name is NFC, and as many bytes
# as characters).
_ASCII_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME_BYTES - 1}}}")


def is_name(value: str) -> bool:
    """`value` is a task group or id under the name rule (`name_problem` finds nothing)."""
    return _ASCII_NAME.fullmatch(value) is not None or name_problem(value) is None


def _describe(char: str) -> str:
    if char.isspace():
        return "whitespace"
    category = unicodedata.category(char)
    kind = {"Cc": "a control character", "Cf": "a format character"}.get(category)
    return f"{kind} (U+{ord(char):04X})" if kind else f"{char!r} (U+{ord(char):04X})"
