"""Written files are private and carry no secrets of the environment.

* State files, companions, locks, manifests, prompts and resume sheets are not
  readable by group or others (0600; run directories 0700), whatever the umask.
* API keys and tokens present in the environment (`ANTHROPIC_API_KEY`,
  `OPENAI_API_KEY`, `GITHUB_TOKEN`, …) are never copied into any file okstra writes,
  nor into the JSON it prints.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from okstra_core.paths import user_dirs
from tests.conftest import okstra_cmd
from tests.reliability.reliability_support import (
    LEGACY_FIXTURES,
    World,
    answer_for_json,
    assert_clean_failure,
    in_process,
    jsonl_records,
    make_world,
    new_wizard,
    okstra,
    prepare_argv,
)

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-secret-XYZ-anthropic",
    "OPENAI_API_KEY": "sk-secret-XYZ-openai",
    "GITHUB_TOKEN": "ghp_secretXYZtoken",
    "GEMINI_API_KEY": "secret-XYZ-gemini",
    "XAI_API_KEY": "secret-XYZ-xai",
    "MOONSHOT_API_KEY": "secret-XYZ-kimi",
    "AWS_SECRET_ACCESS_KEY": "secret-XYZ-aws",
}


def _drive(world: World, state: Path) -> None:
    """A whole setup through `okstra wizard step` (the dispatcher, in-process)."""
    code, doc = in_process(
        world, "wizard", "init", "--state", str(state), "--project-root", str(world.project),
        "--host", "terminal",
    )  # fmt: skip
    assert code == 0, doc
    prompt = doc["next"]
    overrides = {"directive_pick": "write"}
    while prompt["kind"] != "done":
        answer = overrides.get(prompt["id"], answer_for_json(prompt))
        code, doc = in_process(world, "wizard", "step", "--state", str(state), "--answer", answer)
        assert code == 0 and doc["ok"], doc
        prompt = doc["next"]


def _written(world: World) -> list[Path]:
    roots = [world.home, world.project / ".okstra"]
    return [p for root in roots for p in sorted(root.rglob("*"))]


def test_written_files_are_private(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    old = os.umask(0o022)  # a common permissive umask: okstra must not rely on it
    try:
        state = world.wizards / "w.json"
        _drive(world, state)
        legacy = world.wizards / "legacy.json"
        raw = json.loads((LEGACY_FIXTURES / "new_task_early.json").read_text())
        raw["project_root"] = str(world.project)
        legacy.write_text(json.dumps(raw))
        legacy.chmod(0o600)
        run = okstra(world, "wizard", "step", "--state", str(legacy), "--no-submit")
        assert run.code == 0, run.doc
        run = okstra(world, "prepare", "--state", str(state), "--launch", "none")
        assert run.code == 0 and run.doc["ok"], run.doc
    finally:
        os.umask(old)
    companions = list(world.wizards.glob("legacy.json.v2.*.json"))
    assert companions, "the v1 wizard wrote no companion"
    files = _written(world)
    names = {p.name for p in files}
    assert {"w.json", "run-manifest.json", "task-manifest.json", "lead-prompt.md",
            "resume.json", "run-inputs.json"} <= names, names  # fmt: skip
    loose = []
    for path in files:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink():
            continue
        if path.is_file() and mode & 0o077:
            loose.append(f"{path}: {oct(mode)}")
        if path.is_dir() and path.parent.name == "runs" and mode & 0o077:
            loose.append(f"{path}/: {oct(mode)}")
    assert not loose, "readable by group/others:\n" + "\n".join(loose)


def test_no_environment_secret_is_written_or_printed(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    world.extra_env.update(SECRETS)
    log = world.root / "cli.log"  # the fake CLI's own log: outside the scanned trees
    world.extra_env["FAKE_CLI_LOG"] = str(log)
    printed: list[bytes] = []
    state = world.wizards / "w.json"
    _drive(world, state)
    for launch, again in (("none", ()), ("exec", ("--again",))):
        run = okstra(world, "prepare", "--state", str(state), "--launch", launch, *again)
        assert run.code == 0 and run.doc["ok"], run.doc
        printed.append(run.stdout)
    for command in ("show", "outcome", "answers"):
        printed.append(okstra(world, "wizard", command, "--state", str(state)).stdout)
    dry = okstra(world, "prepare", "--state", str(state), "--dry-run", "--launch", "tmux")
    printed.append(dry.stdout)
    leaks = []
    for path in _written(world):
        if path.is_file():
            data = path.read_bytes()
            leaks += [f"{path}: {k}" for k, v in SECRETS.items() if v.encode() in data]
    for out in printed:
        leaks += [f"stdout: {k}" for k, v in SECRETS.items() if v.encode() in out]
    assert not leaks, "\n".join(leaks)
    # The exec'd lead still inherits the environment (the CLI needs its key) — the
    # secrets are passed through, just never persisted.
    lead = [json.loads(line) for line in log.read_text().splitlines()]
    assert any("--session-id" in c["argv"] for c in lead)


# ------------------------------------------------------------ special files

STATE_COMMANDS = (["show"], ["step", "--answer", "x"], ["outcome"], ["answers"])


@pytest.mark.parametrize("command", STATE_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("special", ["fifo", "dev-zero", "dangling", "directory"])
def test_special_state_file_is_refused_without_hanging(
    tmp_path: Path, command: list[str], special: str
) -> None:
    world = make_world(tmp_path)
    state = world.wizards / "w.json"
    if special == "fifo":
        os.mkfifo(state)
    elif special == "dev-zero":
        state.symlink_to("/dev/zero")
    elif special == "dangling":
        state.symlink_to(world.root / "nothing.json")
    else:
        state.mkdir()
    run = okstra(world, "wizard", *command, "--state", str(state), timeout=20)
    assert_clean_failure(run, code=2)
    assert str(state) in run.doc["error"], run.doc
    if special in ("fifo", "dev-zero"):
        kind = "FIFO" if special == "fifo" else "character device"
        assert kind in run.doc["error"], run.doc


def test_one_bad_entry_never_breaks_the_wizard_list(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    good = world.wizards / "good.json"
    new_wizard(world, good, confirm=False)
    os.mkfifo(world.wizards / "fifo.json")
    (world.wizards / "dangling.json").symlink_to(world.root / "nothing.json")
    (world.wizards / "zero.json").symlink_to("/dev/zero")
    (world.wizards / "dir.json").mkdir()
    year_one = world.wizards / "year-one.json"
    new_wizard(world, year_one, confirm=False)
    raw = json.loads(year_one.read_bytes())
    raw["updated_at"] = "0001-01-01T00:00:00"
    year_one.write_text(json.dumps(raw))
    run = okstra(world, "wizard", "list", timeout=30)
    assert run.code == 0 and b"Traceback" not in run.stderr, (run.code, run.stderr)
    by_name = {Path(w["path"]).name: w for w in run.doc["wizards"]}
    assert by_name["good.json"]["problem"] is None
    assert by_name["year-one.json"]["problem"] is None  # resumable; its time is unknown
    assert by_name["year-one.json"]["updatedAt"] is None
    for name, why in (("fifo.json", "FIFO"), ("dangling.json", "does not exist"),
                      ("zero.json", "character device"), ("dir.json", "directory")):  # fmt: skip
        assert by_name[name]["status"] == "broken", by_name[name]
        assert why in by_name[name]["problem"], by_name[name]


def test_the_start_screen_lists_around_bad_entries(tmp_path: Path) -> None:
    """The app's start screen reads the same list: one bad entry is a disabled row."""
    from okstra_core.session import list_wizards

    world = make_world(tmp_path)
    os.mkfifo(world.wizards / "fifo.json")
    (world.wizards / "dangling.json").symlink_to(world.root / "nothing.json")
    new_wizard(world, world.wizards / "good.json", confirm=False)
    summaries = list_wizards(world.environment)
    assert [s.path.name for s in summaries if s.problem is None] == ["good.json"]
    assert {s.path.name for s in summaries if s.problem} == {"fifo.json", "dangling.json"}


# ------------------------------------------------------------ the store's own guarantees


def test_store_never_opens_a_link_or_special_file_for_writing(tmp_path: Path) -> None:
    from okstra_core.errors import FileSystemError, StateInUseError
    from okstra_core.store import FileLock, append_line, atomic_write_bytes

    victim = tmp_path / "victim.py"
    victim.write_bytes(b"keep me\n")
    for name in ("a.lock", "log.jsonl", "state.json"):
        (tmp_path / name).symlink_to(victim)
    with pytest.raises(FileSystemError, match="symbolic link"):
        FileLock(tmp_path / "a").acquire()
    with pytest.raises(FileSystemError, match="symbolic link"):
        append_line(tmp_path / "log.jsonl", {"x": 1})
    with pytest.raises(FileSystemError, match="symbolic link"):
        atomic_write_bytes(tmp_path / "state.json", b"{}")
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(FileSystemError, match="FIFO"):
        append_line(tmp_path / "fifo.jsonl", {"x": 1})
    # A hard link to a source file, or a "lock" that is really a file: left alone.
    os.link(victim, tmp_path / "hard.lock")
    with pytest.raises(FileSystemError, match="hard links"):
        FileLock(tmp_path / "hard").acquire()
    (tmp_path / "big.lock").write_bytes(b"x" * 1000)
    with pytest.raises(FileSystemError, match="not empty"):
        FileLock(tmp_path / "big").acquire()
    assert victim.read_bytes() == b"keep me\n"
    assert (tmp_path / "big.lock").read_bytes() == b"x" * 1000
    # A lock file is never truncated: the pid is written over line one.
    lock = tmp_path / "t.lock"
    lock.write_bytes(b"123456789\n")
    (tmp_path / "t").write_bytes(b"{}")  # a lock of an existing file stays after release
    with FileLock(tmp_path / "t"):
        assert lock.read_bytes().split(b"\n")[0] == str(os.getpid()).encode()
        with pytest.raises(StateInUseError) as info:
            FileLock(tmp_path / "t").acquire()
        assert info.value.pid == os.getpid()
    assert len(lock.read_bytes()) >= len(b"123456789\n")


def test_reads_are_regular_files_and_size_capped(tmp_path: Path) -> None:
    from okstra_core.errors import DataFileError
    from okstra_core.store import read_bytes

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(DataFileError, match="FIFO"):
        read_bytes(tmp_path / "fifo", error=DataFileError)
    with pytest.raises(DataFileError, match="character device"):
        read_bytes(Path("/dev/zero"), error=DataFileError)
    (tmp_path / "link").symlink_to(tmp_path / "fifo")
    with pytest.raises(DataFileError, match="symbolic link"):
        read_bytes(tmp_path / "link", error=DataFileError, follow=False)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    with pytest.raises(DataFileError, match=r"too large .*the limit is 1024 bytes"):
        read_bytes(big, error=DataFileError, limit=1024)
    assert read_bytes(big, error=DataFileError) == b" " * 2048


def test_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    old = os.umask(0)
    try:
        state = world.wizards / "sub" / "w.json"
        code, doc = in_process(
            world, "wizard", "init", "--state", str(state), "--project-root", str(world.project),
            "--host", "terminal",
        )  # fmt: skip
        assert code == 0, doc
        run = okstra(world, *prepare_argv(world.project), "--launch=none")
        assert run.code == 0, run.doc
    finally:
        os.umask(old)
    created = [state.parent, *(p for p in (world.project / ".okstra").rglob("*") if p.is_dir())]
    created.append(world.project / ".okstra")
    made_by_test = {world.wizards, world.wizards.parent}
    created += [p for p in world.home.rglob("*") if p.is_dir() and p not in made_by_test]
    loose = [f"{p}: {oct(stat.S_IMODE(p.stat().st_mode))}" for p in created
             if stat.S_IMODE(p.stat().st_mode) != 0o700]  # fmt: skip
    assert not loose, "\n".join(loose)


# ------------------------------------------------------------ appends are whole or nothing

_APPEND_UNDER_LIMIT = """
import resource, sys
from okstra_core.errors import FileSystemError
from okstra_core.store import append_line
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
try:
    append_line(sys.argv[1], {"record": "x" * 500})
except FileSystemError as exc:
    print("refused:", exc.render())
else:
    print("appended")
"""


def _records(n: int) -> bytes:
    return b"".join(json.dumps({"n": i}).encode() + b"\n" for i in range(n))


def test_a_short_append_leaves_no_partial_line(tmp_path: Path) -> None:
    """A file-size limit cuts the write short: the log is put back as it was."""
    import sys

    from okstra_core.store import append_line, read_log

    log = tmp_path / "runs.jsonl"
    log.write_bytes(_records(3))
    before = log.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", _APPEND_UNDER_LIMIT, str(log), str(len(before) + 100)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("refused:") and "EFBIG" in proc.stdout, proc.stdout
    assert str(log) in proc.stdout
    assert log.read_bytes() == before, "a partial line was left behind"
    append_line(log, {"n": 3})
    read = read_log(log)
    assert [r["n"] for r in read.records] == [0, 1, 2, 3] and not read.damaged


def test_a_torn_last_line_is_repaired_before_the_next_append(tmp_path: Path) -> None:
    from okstra_core.store import append_line, read_log

    log = tmp_path / "timeline.jsonl"
    log.write_bytes(_records(2) + b'{"n": 2, "cut sh')  # a crash mid-append
    torn = read_log(log)
    assert [d.line for d in torn.damaged] == [3], torn.damaged
    assert "cut short" in torn.damaged[0].render() and str(log) in torn.damaged[0].render()
    append_line(log, {"n": 3})
    assert log.read_bytes() == _records(2) + b'{"n":3}\n'
    # A whole record that only lost its newline keeps it.
    log.write_bytes(_records(2) + b'{"n": 2}')
    append_line(log, {"n": 3})
    assert [r["n"] for r in read_log(log).records] == [0, 1, 2, 3]


def test_readers_report_a_damaged_line_by_number(tmp_path: Path) -> None:
    from okstra_core.store import read_log

    log = tmp_path / "runs.jsonl"
    log.write_bytes(_records(2) + b"garbage\n" + _records(1) + b"\n\n")
    read = read_log(log)
    assert len(read.records) == 3
    assert [(d.path, d.line) for d in read.damaged] == [(log, 3)]
    assert "JSON" in read.damaged[0].render() or read.damaged[0].reason


def _okstra_limited(world: World, limit: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [*okstra_cmd(), *args], cwd=world.project, env=world.env, capture_output=True,
        timeout=60, stdin=subprocess.DEVNULL, preexec_fn=cap, check=False,
    )  # fmt: skip


def test_a_prepare_whose_index_append_fails_names_the_run_it_left(tmp_path: Path) -> None:
    """The central runs.jsonl cannot grow: exit 2, the run named, the index intact."""
    world = make_world(tmp_path)
    index = user_dirs(world.env).runs_index
    index.parent.mkdir(parents=True)
    index.write_bytes(_records(4000))  # larger than any file of a run
    before = index.read_bytes()
    proc = _okstra_limited(world, len(before) + 64, *prepare_argv(world.project), "--launch=none")
    assert b"Traceback" not in proc.stderr and proc.returncode == 2, (proc.returncode, proc.stdout)
    doc = json.loads(proc.stdout)
    assert "EFBIG" in doc["error"] and str(index) in doc["error"], doc
    assert doc["runState"] == "complete-unindexed" and doc["runId"], doc
    assert Path(doc["runDir"], "run-manifest.json").is_file()
    assert index.read_bytes() == before, "the index was left with a partial record"
    run = okstra(world, *prepare_argv(world.project), "--launch=none")
    assert run.code == 0, run.doc
    records = jsonl_records(index)
    assert len(records) == 4001 and records[-1]["runId"] == run.doc["runId"]


# ------------------------------------------------------------ file-system errors are exit 2


def test_okstra_dir_as_a_plain_file_is_exit_2(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    (world.project / ".okstra").write_text("not a directory\n")
    run = okstra(world, *prepare_argv(world.project), "--launch=none")
    assert_clean_failure(run, code=2)
    assert ".okstra" in run.doc["error"] and "expected a directory" in run.doc["error"]


def test_data_dir_in_the_way_names_the_run_left(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    data = user_dirs(world.env).data
    data.write_text("a file where the data folder belongs\n")
    run = okstra(world, *prepare_argv(world.project), "--launch=none")
    assert_clean_failure(run, code=2)
    assert str(data) in run.doc["error"] and "ENOTDIR" in run.doc["error"], run.doc
    assert run.doc["runState"] == "complete-unindexed", run.doc
    assert Path(run.doc["runDir"], "run-manifest.json").is_file()


def test_names_too_long_are_exit_2(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    long_state = world.root / ("s" * 300 + ".json")
    run = okstra(world, "wizard", "init", "--state", str(long_state), "--project-root",
                 str(world.project), "--host", "terminal")  # fmt: skip
    assert_clean_failure(run, code=2)
    assert "ENAMETOOLONG" in run.doc["error"], run.doc
    run = okstra(world, *prepare_argv(world.project, task_id="t" * 300), "--launch=none")
    assert_clean_failure(run, code=2)
    # Refused where the request is built, before any path is made of it.
    assert run.doc["field"] == "--task-id", run.doc
    assert "at most" in run.doc["error"] or "255 bytes" in run.doc["error"], run.doc


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_permission_denied_is_exit_2(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    world.wizards.chmod(0o500)
    try:
        run = okstra(world, "wizard", "init", "--state", str(world.wizards / "w.json"),
                     "--project-root", str(world.project), "--host", "terminal")  # fmt: skip
    finally:
        world.wizards.chmod(0o700)
    assert_clean_failure(run, code=2)
    assert "EACCES" in run.doc["error"] and str(world.wizards) in run.doc["error"], run.doc


# ------------------------------------------------------------ bounds


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("roleCounts", {"analyser": 100_000_000}, "roleCounts.analyser"),
        ("roleCounts", {"analyser": 2**64 - 1}, "roleCounts.analyser"),
        ("revision", 2**64 - 1, "revision"),
        ("roleModels", {"analyser": ["claude/opus-4.6"] * 100_000}, "roleModels.analyser"),
    ],
)
def test_tampered_numbers_are_a_state_file_error(
    tmp_path: Path, field: str, value: object, named: str
) -> None:
    world = make_world(tmp_path)
    state = world.wizards / "w.json"
    new_wizard(world, state, confirm=False)
    good = world.wizards / "good.json"
    new_wizard(world, good, confirm=False)
    raw = json.loads(state.read_bytes())
    raw[field] = value
    state.write_text(json.dumps(raw))
    before = state.read_bytes()
    for command in (["show"], ["step", "--answer", "x"], ["outcome"], ["answers"]):
        run = okstra(world, "wizard", *command, "--state", str(state), timeout=30)
        assert_clean_failure(run, code=2)
        assert named in run.doc["error"], (command, run.doc)
        assert str(state) in run.doc["error"], (command, run.doc)  # the file, by path
    assert state.read_bytes() == before
    run = okstra(world, "wizard", "list", timeout=30)
    assert run.code == 0, run.doc
    by_name = {Path(w["path"]).name: w for w in run.doc["wizards"]}
    assert by_name["good.json"]["problem"] is None
    assert named in by_name["w.json"]["problem"]


def test_a_workspace_profile_with_an_absurd_max_is_refused(tmp_path: Path) -> None:
    from okstra_core.paths import bundled_prompts_root

    world = make_world(tmp_path)
    workspace = world.root / "workspace"
    (workspace / "profiles").mkdir(parents=True)
    text = (bundled_prompts_root() / "profiles" / "requirements-discovery.md").read_text()
    assert "max = 3" in text
    (workspace / "profiles" / "requirements-discovery.md").write_text(
        text.replace("max = 3", "max = 1000000", 1)
    )
    world.extra_env["OKSTRA_WORKSPACE"] = str(workspace)
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=30)
    assert_clean_failure(run, code=2)
    assert "max" in run.doc["error"] and "1000000" in run.doc["error"], run.doc
    assert "requirements-discovery.md" in run.doc["error"], run.doc


# ------------------------------------------------------------ hostile workspace


@pytest.mark.parametrize(
    "payload",
    [
        "{{ cycler.__init__.__globals__.os.system('touch PWNED-T1') }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os }}",
    ],
)
def test_workspace_templates_are_sandboxed(tmp_path: Path, payload: str) -> None:
    from okstra_core.paths import bundled_prompts_root

    world = make_world(tmp_path)
    workspace = world.root / "workspace"
    (workspace / "templates").mkdir(parents=True)
    lead = (bundled_prompts_root() / "templates" / "lead.md.j2").read_text()
    (workspace / "templates" / "lead.md.j2").write_text(payload + "\n" + lead)
    world.extra_env["OKSTRA_WORKSPACE"] = str(workspace)
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=30)
    assert_clean_failure(run, code=2)
    assert "lead.md.j2" in run.doc["error"] and "sandbox" in run.doc["error"], run.doc
    assert not list(world.root.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))
