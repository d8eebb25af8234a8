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
from pathlib import Path

from tests.reliability.reliability_support import (
    LEGACY_FIXTURES,
    World,
    answer_for_json,
    in_process,
    make_world,
    okstra,
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
