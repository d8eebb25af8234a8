"""Write what `_record.py` recorded, the simplest durable way: the baseline of (c).

    python bench/_replay.py EVENTS.json

Each replace is a temp file + fsync + rename + fsync of the directory (what any
crash-safe writer must do); each append is an O_APPEND write + fsync; each cache
entry is a temp file + rename (no fsync, as okstra writes them). Extra fsyncs
are added so the total matches the recorded count. Standard library only.
"""

from __future__ import annotations

import base64
import json
import os
import sys


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        events = json.load(fh)
    wanted = sum(1 for e in events if e[0] == "fsync")
    done = 0
    last_dir = "."
    for event in events:
        if event[0] == "replace":
            path, data = event[1], base64.b64decode(event[2])
            last_dir = os.path.dirname(path)
            os.makedirs(last_dir, exist_ok=True)
            tmp = f"{path}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            _fsync_dir(last_dir)
            done += 2
        elif event[0] == "cache":
            path, data = event[1], base64.b64decode(event[2])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        elif event[0] == "append":
            path, data = event[1], base64.b64decode(event[2])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            done += 1
    while done < wanted:
        _fsync_dir(last_dir)
        done += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
