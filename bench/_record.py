"""Run one okstra command in process and record every durable write it makes.

    python bench/_record.py EVENTS.json okstra-args…

Records, in order: each atomic replace (target path and the bytes that land there),
each append to an O_APPEND file, and each fsync. A replace inside okstra's cache
directory is recorded as `cache` (okstra writes those entries without fsync: losing
one costs a recomputation), so the floor does not sync them either. `_replay.py`
writes the same bytes to the same paths with the same number of fsyncs: the baseline
of measurement (c).
Run as a plain script so the recording adds nothing to what okstra imports.
"""

from __future__ import annotations

import base64
import json
import os
import sys

events: list[list[str]] = []
_append_fds: dict[int, str] = {}
_real_replace = os.replace
_real_fsync = os.fsync
_real_open = os.open
_real_write = os.write
_real_close = os.close


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_cache_dir: list[str] = []


def _replace(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
    target = os.path.abspath(os.fspath(dst))
    kind = "cache" if _cache_dir and target.startswith(_cache_dir[0]) else "replace"
    with open(src, "rb") as fh:
        events.append([kind, target, _b64(fh.read())])
    return _real_replace(src, dst, *args, **kwargs)


def _fsync(fd):  # type: ignore[no-untyped-def]
    events.append(["fsync"])
    return _real_fsync(fd)


def _open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
    fd = _real_open(path, flags, *args, **kwargs)
    if flags & os.O_APPEND:
        _append_fds[fd] = os.path.abspath(os.fspath(path))
    return fd


def _write(fd, data):  # type: ignore[no-untyped-def]
    if fd in _append_fds:
        events.append(["append", _append_fds[fd], _b64(bytes(data))])
    return _real_write(fd, data)


def _close(fd):  # type: ignore[no-untyped-def]
    _append_fds.pop(fd, None)
    return _real_close(fd)


def main() -> int:
    out, args = sys.argv[1], sys.argv[2:]
    os.replace, os.fsync, os.open, os.write, os.close = _replace, _fsync, _open, _write, _close
    from okstra_core.paths import user_dirs
    from okstra_tui.entry import main as okstra_main

    _cache_dir.append(os.path.join(os.path.abspath(user_dirs().cache), ""))

    try:
        code = okstra_main(args)
    finally:
        os.replace, os.fsync, os.open, os.write, os.close = (
            _real_replace,
            _real_fsync,
            _real_open,
            _real_write,
            _real_close,
        )
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(events, fh)
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
