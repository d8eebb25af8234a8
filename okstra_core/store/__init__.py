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
from .atomic import LOCK_MARK as LOCK_MARK
from .atomic import MAX_LOCK_BYTES as MAX_LOCK_BYTES
from .atomic import SWEEP_GRACE_SECONDS as SWEEP_GRACE_SECONDS
from .atomic import FileLock as FileLock
from .atomic import atomic_write_bytes as atomic_write_bytes
from .atomic import atomic_write_json as atomic_write_json
from .atomic import atomic_write_text as atomic_write_text
from .atomic import dumps_json as dumps_json
from .atomic import lock_path_for as lock_path_for
from .atomic import lock_target as lock_target
from .atomic import sweep_leftovers as sweep_leftovers
from .files import MAX_FILE_BYTES as MAX_FILE_BYTES
from .files import MAX_LOG_BYTES as MAX_LOG_BYTES
from .files import PRIVATE_DIR_MODE as PRIVATE_DIR_MODE
from .files import PRIVATE_MODE as PRIVATE_MODE
from .files import TEMP_PREFIX as TEMP_PREFIX
from .files import OpenDirectory as OpenDirectory
from .files import check_no_links as check_no_links
from .files import decode_utf8 as decode_utf8
from .files import file_kind as file_kind
from .files import json_kind as json_kind
from .files import make_private_dirs as make_private_dirs
from .files import open_directory as open_directory
from .files import open_regular as open_regular
from .files import parse_json as parse_json
from .files import parse_json_object as parse_json_object
from .files import read_bytes as read_bytes
from .files import read_json as read_json

if TYPE_CHECKING:
    from .logs import DamagedLine as DamagedLine
    from .logs import LogRead as LogRead
    from .logs import append_line as append_line
    from .logs import read_lines as read_lines
    from .logs import read_log as read_log

__getattr__ = lazy_names(
    __name__,
    {name: ".logs" for name in ("DamagedLine", "LogRead", "append_line", "read_lines", "read_log")},
)
