"""Durable, atomic file writes, advisory locks and append-only logs — of okstra's files only.

Every file okstra writes that matters goes through here, and every file it reads:

* `atomic_write_bytes`: temp file in the same directory, fsync, rename, fsync the
  directory; a crash leaves the old or the new content, never a partial file.
* `FileLock`: `flock` on a sidecar `<name>.lock` (the target is replaced by rename);
  the holder's pid is written there so a refused caller can say who holds it.
* `append_line`: append-only JSONL under an exclusive lock, fsynced, whole or nothing.
* `read_bytes` / `read_log`: a regular file only (`O_NONBLOCK`: a FIFO cannot hang
  it), size-capped.

A cloned repository may hold anything: files opened in place are never followed
through links (`O_NOFOLLOW`) and checked regular with `fstat`, never truncated; a
rename target is a regular file or nothing, the temp file `O_EXCL`; directories okstra
creates are 0700; `check_no_links` refuses a link below a root okstra owns. OS errors
surface as `FileSystemError` naming the file and errno. `logs` loads on first use.
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
from .locks import (
    LOCK_MARK,
    MAX_LOCK_BYTES,
    SWEEP_GRACE_SECONDS,
    FileLock,
    lock_path_for,
    lock_target,
    sweep_leftovers,
)
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
