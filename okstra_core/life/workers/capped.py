"""A worker's log with a cap: its oldest part dropped, a marker line saying so.

When a write would pass `limit` (`team.logLimitMib`, 10 MiB by default), the log is
rewritten atomically from its newest half (cut at a line start) under a marker line
counting the bytes dropped; each byte is copied about twice at most, the end is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...store import atomic_write_bytes

DEFAULT_LIMIT = 10 * 1024 * 1024
MARKER = "[okstra: {dropped:,} bytes dropped from the start of this log (it keeps {limit})]\n"


def _size_text(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit:,} bytes"


class CappedLog:
    """An append-only log of at most `limit` bytes (see the module)."""

    def __init__(self, path: Path, limit: int = DEFAULT_LIMIT) -> None:
        self.path = path
        self.limit = max(limit, 4096)
        self.fd = self._open()
        self.size = os.fstat(self.fd).st_size
        self.dropped = 0
        self.marker_length = 0  # of the marker line the log starts with (0: none)

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(self.path, flags, 0o600)

    def write(self, chunk: bytes) -> None:
        half = self.limit // 2
        if len(chunk) > half:  # a chunk bigger than what is kept: its end alone
            self.dropped += len(chunk) - half
            chunk = chunk[-half:]
        if self.size + len(chunk) > self.limit:
            self._drop_oldest(half - len(chunk))
        os.write(self.fd, chunk)
        self.size += len(chunk)

    def _drop_oldest(self, keep: int) -> None:
        keep = max(0, keep)
        start = max(0, self.size - keep)
        kept = os.pread(self.fd, self.size - start, start) if keep else b""
        if start > 0:
            cut = kept.find(b"\n")
            kept = kept[cut + 1 :] if cut >= 0 else b""
        self.dropped += self.size - len(kept) - self.marker_length
        marker = MARKER.format(dropped=self.dropped, limit=_size_text(self.limit)).encode()
        self.marker_length = len(marker)
        data = marker + kept
        atomic_write_bytes(self.path, data, durable=False)
        os.close(self.fd)
        self.fd = self._open()
        self.size = len(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
