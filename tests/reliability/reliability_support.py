"""Helpers of the reliability and security harnesses (imported by their test modules).

Everything here drives the *installed* `okstra` command or the engine's own loaders;
nothing fakes the subject under test. A "world" is one scratch project with a brief and
an approved plan, an `OKSTRA_HOME`, and a directory of fake provider CLIs (from
`tests/conftest.py`) whose `--help` lists every flag the bundled launch templates use,
so preflight passes without a real agent CLI.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from okstra_core import cli
from okstra_core.environment import Environment
from okstra_core.life.report import read_run_manifest
from okstra_core.paths import user_dirs
from okstra_core.session import Wizard
from okstra_core.store import TEMP_PREFIX
from okstra_core.wizard import Prompt
from tests.conftest import ALL_CLIS, okstra_cmd, write_fake_cli

REPO = Path(__file__).resolve().parents[2]
LEGACY_FIXTURES = REPO / "tests" / "legacy" / "fixtures"

# The union of the bundled providers' `launch.required_flags` (as in tests/prepare):
# with this as their `--help`, the fake CLIs pass preflight.
FAKE_HELP = (
    "usage: cli [options] -- [prompt]\n"
    "  --session-id --session --model --resume --prompt-interactive --no-daemon\n"
    "  --config --system-prompt-file --agent-file\n"
)

# Variables of the machine running the tests that would change what okstra detects.
_SCRUB = (
    "OKSTRA_WORKSPACE", "OKSTRA_LANG", "OKSTRA_DEBUG", "OKSTRA_PROGRESS", "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT", "CODEX_SANDBOX", "CODEX_THREAD_ID", "CODEX_MANAGED_BY_NPM",
    "TMUX", "TMUX_PANE",
)  # fmt: skip

TEXT_ANSWERS = {
    "task_group": "grp",
    "task_id": "tsk",
    "brief": "brief.md",
    "approved_plan": "plan.md",
    "directive": "keep it small",
    "related_tasks": "",
}

APPROVED_PLAN = """---
approved: true
---
# Plan

## Stage 1 — do it

Conformance exemption: documentation only.
"""


@dataclass
class World:
    """A scratch project, an OKSTRA_HOME and fake CLIs, as a subprocess environment."""

    root: Path
    project: Path
    home: Path
    bin: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if k not in _SCRUB}
        base.update(
            {
                "OKSTRA_HOME": str(self.home),
                "PATH": os.pathsep.join([str(self.bin), "/usr/bin", "/bin"]),
                "FAKE_CLI_HELP": FAKE_HELP,
            }
        )
        base.update(self.extra_env)
        return base

    @property
    def environment(self) -> Environment:
        return Environment(env=self.env)

    @property
    def wizards(self) -> Path:
        """The wizards dir of this OKSTRA_HOME (what `okstra wizard list` reads)."""
        return user_dirs(self.env).wizards


def make_world_at(root: Path) -> World:
    """The world of an existing `root` (made by `make_world`, perhaps copied back)."""
    return World(root=root, project=root / "proj", home=root / "home", bin=root / "bin")


def make_world(tmp: Path, name: str = "w") -> World:
    """Create a world under `tmp/name`."""
    root = tmp / name
    project = root / "proj"
    project.mkdir(parents=True)
    (project / "brief.md").write_text("# Brief\n\nMake the widget faster.\n", encoding="utf-8")
    (project / "plan.md").write_text(APPROVED_PLAN, encoding="utf-8")
    home = root / "home"
    home.mkdir()
    bin_dir = root / "bin"
    for name in ALL_CLIS:
        write_fake_cli(bin_dir, name)
    world = World(root=root, project=project, home=home, bin=bin_dir)
    world.wizards.mkdir(parents=True, exist_ok=True)
    return world


@dataclass(frozen=True)
class Run:
    """One finished `okstra` call."""

    code: int
    doc: Any
    stdout: bytes
    stderr: bytes


def okstra(
    world: World,
    *args: str,
    cwd: Path | None = None,
    timeout: float = 60,
    env: Mapping[str, str] | None = None,
) -> Run:
    """Run the installed `okstra` with the world's environment; parse its one JSON document."""
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd or world.project,
        env=dict(env) if env is not None else world.env,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    try:
        doc = orjson.loads(proc.stdout) if proc.stdout.strip() else None
    except orjson.JSONDecodeError:
        doc = None
    return Run(proc.returncode, doc, proc.stdout, proc.stderr)


def popen_okstra(world: World, *args: str) -> subprocess.Popen[bytes]:
    """Start the installed `okstra` without waiting (for kills and races)."""
    return subprocess.Popen(
        [*okstra_cmd(), *args],
        cwd=world.project,
        env=world.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )


def assert_clean_failure(run: Run, *, code: int = 2) -> None:
    """A refused input: exit `code`, one JSON error document, no traceback."""
    assert b"Traceback" not in run.stderr, run.stderr.decode(errors="replace")
    assert run.doc is not None, (run.code, run.stdout, run.stderr)
    summary = {k: run.doc.get(k) for k in ("ok", "error", "runDir") if k in run.doc}
    assert run.code == code, (run.code, summary)
    assert run.doc["ok"] is False and isinstance(run.doc["error"], str) and run.doc["error"]
    assert not run.doc["error"].startswith("internal error"), run.doc


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def in_process(
    w: World, *argv: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """Run the dispatcher in-process; return (exit code, the one JSON document)."""
    out = io.BytesIO()
    err = io.StringIO()
    fake_stdout = io.TextIOWrapper(out, encoding="utf-8")
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = fake_stdout, err
    cwd = os.getcwd()
    try:
        with environ(env or w.env):
            os.chdir(w.project)
            code = cli.main(list(argv))
    finally:
        os.chdir(cwd)
        fake_stdout.flush()
        sys.stdout, sys.stderr = old_out, old_err
    assert "Traceback" not in err.getvalue(), err.getvalue()
    doc = orjson.loads(out.getvalue())
    assert code != 70 and not str(doc.get("error", "")).startswith("internal error"), (argv, doc)
    assert code in (0, 1, 2), (code, doc)
    if code:
        assert doc["ok"] is False and doc["error"], doc
    return code, doc


def answer_for(prompt: Prompt) -> str:
    """What a person pressing Enter answers (fixed text for text steps)."""
    kind = str(prompt.meta.get("stepKind", prompt.kind))
    if kind == "leader_session":
        return "continue"
    if prompt.kind == "text":
        return TEXT_ANSWERS.get(prompt.id, prompt.default or "x")
    if prompt.default is not None:
        return prompt.default
    return next(o.value for o in prompt.options if o.disabled_reason is None)


def answer_for_json(prompt: Mapping[str, Any]) -> str:
    """`answer_for` for a prompt as the protocol prints it."""
    kind = str((prompt.get("meta") or {}).get("stepKind", prompt["kind"]))
    if kind == "leader_session":
        return "continue"
    if prompt["kind"] == "text":
        return TEXT_ANSWERS.get(prompt["id"], prompt.get("default") or "x")
    if prompt.get("default") is not None:
        return str(prompt["default"])
    return next(o["value"] for o in prompt["options"] if not o.get("disabledReason"))


def new_wizard(
    world: World,
    state: Path,
    *,
    task_type: str = "requirements-discovery",
    overrides: Mapping[str, str] | None = None,
    confirm: bool = True,
) -> Wizard:
    """Create a wizard in-process and answer it through (to done when `confirm`)."""
    wizard = Wizard.init(
        state, world.project, host="terminal", task_type=task_type, environment=world.environment
    )
    overrides = dict(overrides or {})
    prompt = wizard.prompt()
    for _ in range(80):
        if prompt.kind == "done" or (prompt.id == "confirm" and not confirm):
            return wizard
        prompt = wizard.submit(overrides.get(prompt.id, answer_for(prompt))).next
    raise AssertionError("the wizard did not finish in 80 steps")


def load_state(world: World, state: Path) -> Wizard:
    """Open a state file with the engine's own loader (validates every field)."""
    wizard = Wizard.open(state, environment=world.environment)
    wizard.prompt()  # the state is also usable, not only parseable
    return wizard


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temp_files(directory: Path) -> list[Path]:
    """Stray `.okstra-tmp-*` files (left by a writer killed mid-write) under `directory`."""
    return sorted(p for p in directory.rglob(f"{TEMP_PREFIX}*"))


def jsonl_records(path: Path) -> list[Any]:
    """Parse a JSONL log strictly: every line must be one whole JSON document."""
    if not path.exists():
        return []
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"{path}: torn last line"
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def check_project_files(project: Path) -> dict[str, Any]:
    """Parse and check every file prepare writes under `<project>/.okstra`.

    Returns a summary: run ids with a complete manifest, the task manifests' index
    lengths. Fails the test on any torn, unparsable or invalid file.
    """
    okstra_dir = project / ".okstra"
    summary: dict[str, Any] = {"runs": [], "index": {}}
    if not okstra_dir.exists():
        return summary
    for path in sorted(okstra_dir.rglob("*")):
        if not path.is_file() or path.name.startswith(TEMP_PREFIX) or path.suffix == ".lock":
            continue
        if path.name.endswith(".jsonl"):
            jsonl_records(path)
        elif path.suffix == ".json":
            doc = json.loads(path.read_bytes())
            assert isinstance(doc, dict), path
            if path.name == "run-manifest.json":
                manifest = read_run_manifest(path)[1].dump()
                assert manifest["schemaVersion"] == "2.0", path
                assert manifest["participants"] and manifest["roleExecutions"], path
                summary["runs"].append(path.parent.name)
            elif path.name == "task-manifest.json":
                assert doc["schemaVersion"] == "2.0", path
                assert doc["executionIdentityVersion"] == 2, path
                index = doc["roleExecutionIndex"]
                assert isinstance(index, list), path
                summary["index"][str(path.parent)] = index
    return summary


def prepare_argv(
    project: Path,
    *,
    group: str = "grp",
    task_id: str = "tsk",
    task_type: str = "requirements-discovery",
    brief: str = "brief.md",
    extra: Iterable[str] = (),
) -> list[str]:
    """`okstra prepare` flags for a small requirements-discovery team."""
    return [
        "prepare",
        "--project-root",
        str(project),
        "--task-group",
        group,
        "--task-id",
        task_id,
        "--task-type",
        task_type,
        "--brief",
        brief,
        "--host",
        "terminal",
        *extra,
    ]
