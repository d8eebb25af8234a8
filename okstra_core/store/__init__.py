"""Durable, atomic file writes, advisory locks and append-only logs — of okstra's files only.

Every file okstra writes that matters goes through here:

* `atomic_write_bytes` — temp file in the same directory, flush + fsync, rename over
  the target, fsync the directory. A reader never sees a partial file; a crash at
  any moment leaves either the old or the new content.
* `FileLock` — an advisory `flock` on a sidecar `<name>.lock` file (the target is
  replaced by rename, so its own inode cannot carry the lock). The holder's pid is
  written into the sidecar so a refused caller can say who holds it.
* `append_line` — append-only JSONL under an exclusive lock, fsynced, whole or nothing.

and every file okstra reads goes through `read_bytes` / `read_log`.

What a file must be before okstra touches it (a cloned repository may hold anything):

* Opened in place (locks, logs) — never through a symbolic link (`O_NOFOLLOW`), a
  regular file checked with `fstat` after the open (never a FIFO, device or socket),
  never truncated (a lock sidecar is written at offset 0, a log only appended to).
* Replaced by rename (state, run files) — the target, when present, is a regular file
  or nothing; the temp file is created exclusively (`O_EXCL`, which does not follow links).
* Read — a regular file (opened `O_NONBLOCK`, so a FIFO cannot hang the read), no
  larger than a limit named in the error.
* Directories okstra creates are 0700 whatever the umask; `check_no_links` refuses a
  symbolic link anywhere below a root okstra owns (`<project>/.okstra`).

Operating-system errors (disk full, read-only file system, permission denied, name too
long, …) surface as `FileSystemError` naming the file and the errno.

Modules: `files` (what a file must be; private directories), `atomic` (writes), `reads`
(reads and JSON parsing), `locks` (`FileLock`), `sweep` (leftovers of dead processes),
and `logs` (JSONL logs, loaded on first use: a command that writes no log never builds
its records); derived data in the user cache is `okstra_core.derived`'s. Import from
the package.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .atomic import atomic_write_bytes, atomic_write_json, atomic_write_text, dumps_json
from .files import (
    MAX_FILE_BYTES,
    MAX_LOG_BYTES,
    PRIVATE_DIR_MODE,
    PRIVATE_MODE,
    TEMP_PREFIX,
    check_no_links,
    file_kind,
    make_private_dirs,
    open_regular,
)
from .locks import LOCK_MARK, MAX_LOCK_BYTES, FileLock, lock_path_for, lock_target
from .reads import (
    OpenDirectory,
    decode_utf8,
    json_kind,
    open_directory,
    parse_json,
    parse_json_object,
    read_bytes,
    read_json,
)
from .sweep import SWEEP_GRACE_SECONDS, sweep_leftovers

if TYPE_CHECKING:
    from .logs import DamagedLine, LogRead, append_line, read_lines, read_log

__getattr__ = lazy_names(
    __name__,
    {name: ".logs" for name in ("DamagedLine", "LogRead", "append_line", "read_lines", "read_log")},
)

__all__ = [
    "LOCK_MARK",
    "MAX_FILE_BYTES",
    "MAX_LOCK_BYTES",
    "MAX_LOG_BYTES",
    "PRIVATE_DIR_MODE",
    "PRIVATE_MODE",
    "SWEEP_GRACE_SECONDS",
    "TEMP_PREFIX",
    "DamagedLine",
    "FileLock",
    "LogRead",
    "OpenDirectory",
    "append_line",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "check_no_links",
    "decode_utf8",
    "dumps_json",
    "file_kind",
    "json_kind",
    "lock_path_for",
    "lock_target",
    "make_private_dirs",
    "open_directory",
    "open_regular",
    "parse_json",
    "parse_json_object",
    "read_bytes",
    "read_json",
    "read_lines",
    "read_log",
    "sweep_leftovers",
]
