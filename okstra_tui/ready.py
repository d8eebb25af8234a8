"""The ready file: one JSON line each time the app is ready for keys.

Programs that drive the app through a terminal (okstra's own end-to-end tests, screen
readers, scripted demos) need to know when a key they send reaches the screen they
mean. Reading the screen is not enough: a screen can be painted before its input has
the focus, and a key sent while the previous screen is still current acts on that
one. So when the environment variable `OKSTRA_READY_FILE` names a file, the app
appends one line to it whenever it becomes ready for input:

* a screen became the current one (shown, or uncovered by a dialog closing), has its
  focus and has been painted — a guarded screen (confirm, a waiting launch screen)
  only once it is armed, since it drops keys read before that;
* an answer was refused and the message is shown on the same screen;
* the focus moved to another widget of a ready screen (keys now go there);
* prepare finished or failed on the launch screen (the outcome is shown);
* the app is exiting (`"screen": "exit"`, the last line of that process; its
  `revision` is the last screen's).

Each line is one JSON object, written with a single `write` in append mode:

    {"seq": 3, "pid": 4242, "screen": "task_group", "step": "task_group",
     "revision": 2, "focus": "answer"}

* `seq`: 1, 2, 3 … per process (a new process starts at 1 again);
* `pid`: the app's process id;
* `screen`: `start`, `launch`, `delete`, `relaunch`, `exit`, or the step kind of the prompt shown
  (its `meta["stepKind"]`: `task_pick`, `task_group`, `brief`, `role_count`,
  `role_model`, `confirm`, `edit_target`, …); any other screen (the command palette)
  by its class name;
* `step`: the prompt's step id, or null;
* `revision`: the revision of the wizard state file the screen shows (saved before the
  line is written), or null on the start screen;
* `focus`: the id of the widget that has the focus (its class name if it has no id),
  or null;
* `error`: only after a refused answer, the message shown;
* `outcome`: only on the launch screen once prepare ended, `prepared` or `failed`.

A line that would repeat the previous one (same screen, step, revision and focus, no
error or outcome) is not written: nothing changed for whoever sends keys.

Unset, nothing is written and nothing is watched. A file that cannot be written turns
the signal off (with one warning), never the app.
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
