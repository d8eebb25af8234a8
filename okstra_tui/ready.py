"""The ready file: one JSON line each time the app is ready for keys (docs/protocol.md).

With `OKSTRA_READY_FILE` naming a file, the app appends a line (one `write`, append
mode) when a screen became current, focused and painted (a guarded screen once armed),
an answer was refused on it, its focus moved, prepare ended on the launch screen, and
on exit. A driver sends keys only after a line, so a key reaches the screen it means.

    {"seq": 3, "pid": 4242, "screen": "task_group", "step": "task_group",
     "revision": 2, "focus": "answer"}

* `seq`: 1, 2, 3 … per process; `pid`: the app's process id;
* `screen`: `start`, `launch`, `delete`, `relaunch`, `exit`, or the prompt's step kind
  (`meta["stepKind"]`: `task_pick`, `brief`, `role_model`, `confirm`, …); any other
  screen (the command palette) by its class name;
* `step`: the prompt's step id, or null;
* `revision`: the revision of the wizard state file shown (saved before the line is
  written), or null on the start screen; on exit, the last screen's;
* `focus`: the focused widget's id (its class name if it has no id), or null;
* `error`: only after a refused answer, the message shown;
* `outcome`: only on the launch screen once prepare ended, `prepared` or `failed`.

A line that would repeat the previous one (no error or outcome) is not written. Unset,
nothing is written; a file that cannot be written turns the signal off (one warning).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

ENV_VAR = "OKSTRA_READY_FILE"


class ReadyFile:
    """Appends the ready lines of one app process to `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seq = 0
        self.broken: OSError | None = None
        self.revision: object = None  # of the last line written

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ReadyFile | None:
        """The ready file `OKSTRA_READY_FILE` names, or None when it is unset or empty."""
        value = env.get(ENV_VAR)
        return cls(Path(value)) if value else None

    def write(self, screen: str, **fields: object) -> bool:
        """Append one line (`seq`, `pid`, `screen`, then `fields`); False once broken."""
        if self.broken is not None:
            return False
        self.seq += 1
        record = {"seq": self.seq, "pid": os.getpid(), "screen": screen, **fields}
        self.revision = record.get("revision")
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            self.broken = exc
            return False
        return True

    def write_exit(self) -> bool:
        """The last line of the process: the revision is the last screen's."""
        return self.write("exit", step=None, revision=self.revision, focus=None)
