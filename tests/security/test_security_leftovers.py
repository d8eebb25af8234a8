"""Leftovers of failed and killed okstra processes are cleaned up, and nothing else is.

* A lock sidecar whose file does not exist (the operation failed before writing it,
  or removed it) is removed by its holder when the lock is released.
* `store.sweep_leftovers` (run by the first write of a process into a directory)
  removes a temp file `.okstra-tmp-*.part` of a killed writer and a lock sidecar okstra
  wrote for a file that does not exist — only regular files with one name, never
  through a link, only older than the grace period, and only when nobody holds them
  (a live writer keeps its temp file locked until the rename; a live holder its
  sidecar).
* Removing sidecars never breaks mutual exclusion: processes racing on a lock whose
  sidecar is removed on every release (and by a sweeper looping meanwhile) never
  lose an update.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from okstra_core.store import (
    LOCK_MARK,
    SWEEP_GRACE_SECONDS,
    TEMP_PREFIX,
    FileLock,
    sweep_leftovers,
)
from tests.conftest import okstra_cmd
from tests.reliability.reliability_support import REPO, make_world, okstra

OLD = time.time() - 10 * SWEEP_GRACE_SECONDS


def _aged(path: Path) -> Path:
    os.utime(path, (OLD, OLD), follow_symlinks=False)
    return path


def _okstra_lock(path: Path, pid: int = 4242) -> Path:
    path.write_bytes(f"{pid}\n".encode() + LOCK_MARK)
    return _aged(path)


def test_a_released_lock_of_a_missing_file_leaves_no_sidecar(tmp_path: Path) -> None:
    with FileLock(tmp_path / "never-written.json"):
        assert (tmp_path / "never-written.json.lock").is_file()
    assert not (tmp_path / "never-written.json.lock").exists()
    (tmp_path / "kept.json").write_text("{}")
    with FileLock(tmp_path / "kept.json"):
        pass
    assert (tmp_path / "kept.json.lock").is_file()  # the file exists: its lock stays


def _limit_file_size() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


def test_a_failed_okstra_command_leaves_no_lock_file(tmp_path: Path) -> None:
    """`wizard init` whose state file cannot be written (a 64-byte file-size limit)."""
    world = make_world(tmp_path)
    state = world.wizards / "w.json"
    proc = subprocess.run(
        [*okstra_cmd(), "wizard", "init", "--state", str(state), "--project-root",
         str(world.project), "--host", "terminal"],
        env=world.env, cwd=world.project, capture_output=True, timeout=60,
        stdin=subprocess.DEVNULL, preexec_fn=_limit_file_size, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr, proc.stdout
    assert b"EFBIG" in proc.stdout and str(state).encode() in proc.stdout, proc.stdout
    # The lock was taken (the state file was being written) and released: no sidecar.
    assert sorted(p.name for p in world.wizards.iterdir()) == []


def test_the_sweep_removes_only_orphaned_okstra_leftovers(tmp_path: Path) -> None:
    victim = tmp_path / "victim.py"
    victim.write_bytes(b"keep me\n")
    d = tmp_path / "d"
    d.mkdir()

    def aged(name: str, data: bytes) -> Path:
        (d / name).write_bytes(data)
        return _aged(d / name)

    gone = [
        aged(f"{TEMP_PREFIX}dead.part", b'{"half": '),  # a writer killed mid-write
        _okstra_lock(d / "absent.json.lock"),
        _okstra_lock(d / "runs.lock"),  # `runs` (a directory okstra makes) is absent
    ]
    (d / "present.json").write_text("{}")
    (d / f"{TEMP_PREFIX}young.part").write_bytes(b"{}")
    kept = [
        d / f"{TEMP_PREFIX}young.part",  # within the grace period
        _okstra_lock(d / "present.json.lock"),  # its file exists
        aged(f"{TEMP_PREFIX}other.txt", b""),  # not okstra's temp name
        aged("mine.part", b""),
        aged("foreign.json.lock", b"123\n"),  # not okstra's lock: no mark
        aged("big.json.lock", b"1\n" + LOCK_MARK + b"x" * 100),
    ]
    # Links, special files and files with other names are never removed or followed.
    (d / f"{TEMP_PREFIX}link.part").symlink_to(victim)
    (d / "link.json.lock").symlink_to(victim)
    os.mkfifo(d / f"{TEMP_PREFIX}fifo.part")
    os.link(victim, d / f"{TEMP_PREFIX}hard.part")
    for name in (f"{TEMP_PREFIX}link.part", "link.json.lock", f"{TEMP_PREFIX}fifo.part",
                 f"{TEMP_PREFIX}hard.part"):  # fmt: skip
        _aged(d / name)
        kept.append(d / name)
    removed = sweep_leftovers(d)
    assert sorted(removed) == sorted(gone)
    for path in kept:
        assert os.path.lexists(path), path
    assert victim.read_bytes() == b"keep me\n"


HOLD_TEMP = r"""
import sys
from pathlib import Path
from okstra_core.store.atomic import _new_temp
d = Path(sys.argv[1])
fd, tmp = _new_temp(d, d / "x.json")  # what atomic_write_bytes writes to, locked
print(tmp, flush=True)
sys.stdin.read()
"""

HOLD_LOCK = r"""
import sys
from pathlib import Path
from okstra_core.store import FileLock
lock = FileLock(Path(sys.argv[1]) / "y.json")
lock.acquire()
print(lock.path, flush=True)
sys.stdin.read()
"""


def _holder(code: str, directory: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(directory)], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_the_sweep_never_takes_a_live_writers_files(tmp_path: Path) -> None:
    """A writer mid-write and a lock holder, both alive, old by mtime: both kept.

    The sweep runs through the installed `okstra` writing into the same directory
    (a new wizard in the wizards folder), then again after the holders were killed.
    """
    world = make_world(tmp_path)
    writer, temp = _holder(HOLD_TEMP, world.wizards)
    holder, lock = _holder(HOLD_LOCK, world.wizards)
    try:
        _aged(temp)
        _aged(lock)
        run = okstra(world, "wizard", "init", "--state", str(world.wizards / "a.json"),
                     "--project-root", str(world.project), "--host", "terminal")  # fmt: skip
        assert run.code == 0, run.doc
        assert temp.exists() and lock.exists(), "a live writer's file was swept"
        assert sweep_leftovers(world.wizards) == []
    finally:
        for proc in (writer, holder):
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
    # Killed: their files are now orphans, and the next writing process removes them.
    run = okstra(world, "wizard", "init", "--state", str(world.wizards / "b.json"),
                 "--project-root", str(world.project), "--host", "terminal")  # fmt: skip
    assert run.code == 0, run.doc
    assert not temp.exists() and not lock.exists()
    assert sorted(p.name for p in world.wizards.iterdir()) == [
        "a.json", "a.json.lock", "b.json", "b.json.lock"
    ]  # fmt: skip


COUNTER = r"""
import sys
from pathlib import Path
from okstra_core.store import FileLock
d, n = Path(sys.argv[1]), int(sys.argv[2])
counter = d / "counter"
for _ in range(n):
    # `absent` never exists: every release removes the sidecar.
    with FileLock(d / "absent", timeout=60):
        value = int(counter.read_text())
        counter.write_text(str(value + 1))
"""

SWEEPER = r"""
import sys, time
from pathlib import Path
from okstra_core.store import sweep_leftovers
d = Path(sys.argv[1])
while True:
    sweep_leftovers(d, grace=0.0)
"""


def test_removing_lock_sidecars_never_breaks_mutual_exclusion(tmp_path: Path) -> None:
    (tmp_path / "counter").write_text("0")
    sweeper = subprocess.Popen([sys.executable, "-c", SWEEPER, str(tmp_path)], cwd=REPO)
    try:
        workers = [
            subprocess.Popen([sys.executable, "-c", COUNTER, str(tmp_path), "60"], cwd=REPO)
            for _ in range(4)
        ]
        for proc in workers:
            assert proc.wait(timeout=300) == 0
    finally:
        sweeper.send_signal(signal.SIGKILL)
        sweeper.wait()
    assert (tmp_path / "counter").read_text() == str(4 * 60), "an update was lost"
    assert not (tmp_path / "absent.lock").exists()
