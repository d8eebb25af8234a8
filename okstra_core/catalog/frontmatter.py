"""One reader for the front matter of okstra's Markdown files: profiles and approved plans.

The block sits between two fence lines at the top of the file: `+++` lines hold TOML;
`---` lines hold simple `key: value` pairs (YAML-ish: `true`/`false`, integers, quoted
or bare strings; indented or list lines are continuation lines, not keys). Everything
after the closing fence is the body.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..records import dataclass


@dataclass(frozen=True)
class FrontMatter:
    """A split file: its fence, the block between the fences and the body after."""

    fence: str
    block: str
    body: str


def split_front_matter(
    text: str,
    path: Path,
    *,
    fences: tuple[str, ...] = ("---", "+++"),
    missing: str | None = None,
    unclosed: str | None = None,
) -> FrontMatter:
    """Split `text` at its front matter `fences`; a `DataFileError` (`missing` or
    `unclosed`, else a message of its own) without an opening or a closing fence."""
    lines = text.splitlines(keepends=True)
    fence = lines[0].strip() if lines else ""
    if fence not in fences:
        shown = " or ".join(f"`{f}`" for f in fences)
        raise DataFileError(
            missing or f"no front matter: expected the file to start with a {shown} line",
            path=path,
        )
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == fence), None)
    if end is None:
        raise DataFileError(
            unclosed or f"front matter opened with `{fence}` is never closed", path=path
        )
    return FrontMatter(fence, "".join(lines[1:end]), "".join(lines[end + 1 :]))


def parse_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Split `text` into (front matter, body); a `DataFileError` for no front matter, an
    unterminated block or a malformed line."""
    split = split_front_matter(
        text,
        path,
        missing="no front matter: expected the file to start with a `---` block holding "
        "`approved: true` (or a `+++` TOML block)",
    )
    if split.fence == "+++":
        import tomllib  # only a `+++` block is TOML (a step reads no front matter)

        try:
            return tomllib.loads(split.block), split.body
        except tomllib.TOMLDecodeError as exc:
            raise DataFileError(
                f"invalid TOML front matter ({exc})", path=path, field="front matter"
            ) from None
    return _parse_yamlish(split.block, path), split.body


def _parse_yamlish(block: str, path: Path) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for number, line in enumerate(block.splitlines(), start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[:1].isspace() or stripped.startswith("- "):
            continue  # continuation of a nested value: not a key of ours
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or " " in key.strip():
            raise DataFileError(
                f"line {number}: expected `key: value`, got {stripped!r}",
                path=path,
                field="front matter",
            )
        data[key.strip()] = _scalar(value.strip())
    return data


def _scalar(value: str) -> Any:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value.lower() == "true":
        return True
    if value.lower() == "false":
        return False
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value
