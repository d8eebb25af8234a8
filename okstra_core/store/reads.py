"""Reading okstra's files: whole, size-capped, and every failure naming the file.

`read_bytes` reads a regular file (opened `O_NONBLOCK`, so a FIFO cannot hang the
read), no larger than a limit named in the error; `decode_utf8` and `parse_json` say
which line is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from ..errors import OkstraError, describe_os_error
from .files import MAX_FILE_BYTES, mib, open_regular

__all__ = [
    "decode_utf8",
    "json_kind",
    "parse_json",
    "parse_json_object",
    "read_bytes",
    "read_json",
]


def read_bytes(
    path: Path,
    *,
    what: str = "file",
    error: type[OkstraError] = OkstraError,
    follow: bool = True,
    limit: int = MAX_FILE_BYTES,
) -> bytes:
    """Read a whole regular file; every failure is an `error` naming the file.

    Never blocks on a FIFO, never reads a device, never more than `limit` bytes.

    Args:
        path: the file.
        what: what the file is, for messages.
        error: the `OkstraError` subclass raised.
        follow: go through a symbolic link in the last component; False for okstra's
            own files (under `.okstra`), which are never links.
        limit: the largest size accepted (named in the error).
    """
    path = Path(path)
    try:
        fd = open_regular(path, os.O_RDONLY, follow=follow, what=what, error=error)
    except FileNotFoundError:
        raise error(f"{what} not found", path=path) from None
    except PermissionError:
        raise error(f"{what} is not readable (permission denied)", path=path) from None
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=path) from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(f"{what} is too large ({size} bytes; the limit is {mib(limit)})", path=path)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1024 * 1024, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise error(f"{what} is too large (the limit is {mib(limit)})", path=path)
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=path) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode_utf8(data: bytes, path: Path, *, error: type[OkstraError] = OkstraError) -> str:
    """Decode a text file's bytes; invalid UTF-8 is an `error` naming the line and byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"not valid UTF-8 (line {line}, byte {exc.start}): expected a UTF-8 text file",
            path=path,
        ) from None


def json_kind(value: Any) -> str:
    """How a JSON value is named in error messages ("an array", "a string ('x')", …)."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    return type(value).__name__


def parse_json(
    data: bytes, path: Path, *, what: str = "JSON file", error: type[OkstraError] = OkstraError
) -> Any:
    """Parse a JSON document's bytes; every failure is an `error` naming the file."""
    decode_utf8(data, Path(path), error=error)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # A document cut short (a crash or a copy stopped midway) says so.
        truncated = data.strip() and exc.pos >= len(data.rstrip())
        hint = " (the file looks truncated)" if truncated else ""
        raise error(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}{hint}: {exc.msg}: "
            f"expected a {what}",
            path=path,
        ) from None


def parse_json_object(
    data: bytes, path: Path, *, what: str = "JSON object", error: type[OkstraError] = OkstraError
) -> dict[str, Any]:
    """`parse_json` for documents that must be a JSON object."""
    value = parse_json(data, path, what=what, error=error)
    if not isinstance(value, dict):
        raise error(f"expected a JSON object, got {json_kind(value)}", path=path)
    return value


def read_json(path: Path, *, what: str = "JSON file", follow: bool = True) -> Any:
    """Read and parse a JSON file; every failure is an `OkstraError` naming the file.

    `follow=False` for okstra's own files: a symbolic link there is refused.
    """
    return parse_json(read_bytes(path, what=what, follow=follow), Path(path), what=what)
