"""`okstra resume <run>`: the resume sheet, finished once codex's own session id is found."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import okstra_cmd

FAKE_HELP = (
    "usage: cli [options] -- [prompt]\n"
    "  --session-id --session --model --resume --prompt-interactive --no-daemon\n"
    "  --config --system-prompt-file --agent-file\n"
)
RUN_ID = "requirements-discovery-001"
SID = "019a1b2c-3d4e-7f00-8a1b-2c3d4e5f6071"
OTHER = "019a1b2c-3d4e-7f00-8a1b-000000000002"
# A project folder whose name is every shell metacharacter the script must survive.
NASTY_NAME = "proj 'q' \"d\" $(touch pwned) `id`; & | * ~ #"


@pytest.fixture
def world(tmp_path: Path, fake_path: Path) -> dict[str, Any]:
    project = tmp_path / NASTY_NAME
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    log = tmp_path / "cli.log"
    env = {
        **os.environ,
        "FAKE_CLI_HELP": FAKE_HELP,
        "FAKE_CLI_LOG": str(log),
        "CODEX_HOME": str(codex_home),
    }
    return {"project": project, "codex_home": codex_home, "log": log, "env": env, "tmp": tmp_path}


def okstra(world: dict[str, Any], *args: str, cwd: Path | None = None) -> tuple[int, Any, str]:
    # `resume` prints for people unless given --json: these tests read its document.
    if args[:1] == ("resume",) and "--json" not in args:
        args = (*args, "--json")
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd or world["project"],
        env=world["env"],
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    stderr = proc.stderr.decode()
    assert "Traceback" not in stderr, stderr
    out = proc.stdout.decode()
    # With --exec the JSON document comes first, then whatever the CLI prints.
    doc = json.JSONDecoder().raw_decode(out)[0] if out.strip() else None
    return proc.returncode, doc, stderr


def prepare(world: dict[str, Any], leader: str, launch: str = "none") -> Path:
    code, doc, stderr = okstra(
        world,
        "prepare",
        "--project-root",
        str(world["project"]),
        "--task-group",
        "perf",
        "--task-id",
        "widget",
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--role-model",
        f"leader={leader}",
        "--launch",
        launch,
    )
    assert code == 0, (doc, stderr)
    assert doc["runId"] == RUN_ID
    return Path(doc["runDir"])


def calls(world: dict[str, Any]) -> list[dict[str, Any]]:
    log: Path = world["log"]
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def lead_calls(world: dict[str, Any]) -> list[dict[str, Any]]:
    # Preflight probes (--version / --help / the login status) are not the lead.
    probes = (["--version"], ["--help"], ["login", "status"], ["auth", "status"])
    return [c for c in calls(world) if c["argv"] not in probes]


def rollout(
    world: dict[str, Any], sid: str, *, cwd: Path | None = None, age: float | None = None
) -> Path:
    """A codex rollout file as codex writes it; `age` seconds old when given."""
    day = datetime.now().strftime("%Y/%m/%d")
    folder = world["codex_home"] / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2030-01-01T00-00-00-{sid}.jsonl"
    meta = {"type": "session_meta", "payload": {"id": sid, "cwd": str(cwd or world["project"])}}
    path.write_text(json.dumps(meta) + "\n" + json.dumps({"type": "turn"}) + "\n", "utf-8")
    if age is not None:
        then = time.time() - age
        os.utime(path, (then, then))
    return path


def codex_mcp(argv: list[str], run_dir: Path) -> bool:
    """Whether `argv` registers okstra's MCP server of `run_dir` the codex way."""
    return (
        argv[0] == argv[2] == "-c"
        and argv[1].startswith("mcp_servers.okstra.command=")
        and argv[3].endswith(f'"mcp", {json.dumps(str(run_dir))}]')
    )


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with its digest and mode: proof that nothing changed."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def timeline(world: dict[str, Any]) -> list[dict[str, Any]]:
    path = world["project"] / ".okstra/tasks/perf/widget/timeline.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_codex_pending_then_discovered_by_run_id(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "codex/gpt-5.6-sol")
    sheet = read(run_dir / "resume.json")
    (entry,) = sheet["participants"]
    assert entry["status"] == "pending discovery" and entry["sessionId"] is None
    assert entry["resumeArgvTemplate"][-1] == "{session_id}"
    script = (run_dir / "resume-lead.sh").read_text(encoding="utf-8")
    assert "--exec" in script and (run_dir / "resume-lead.sh").stat().st_mode & 0o777 == 0o700

    # Decoys: an older session of this project, and a newer one of another folder.
    rollout(world, OTHER, age=3600)
    elsewhere = world["tmp"] / "elsewhere"
    elsewhere.mkdir()
    rollout(world, "019a1b2c-3d4e-7f00-8a1b-000000000003", cwd=elsewhere)
    rollout(world, SID)

    code, doc, _ = okstra(world, "resume", RUN_ID, "--wait", "0")
    assert code == 0, doc
    assert doc["ok"] is True and doc["discovered"] == ["participant-001"]
    (entry,) = doc["participants"]
    assert entry["sessionId"] == SID and entry["status"] == "ready"
    codex = str(world["env"]["PATH"].split(os.pathsep)[0]) + "/codex"
    # okstra's MCP server registered as at launch (`-c mcp_servers.okstra.*`), then the
    # provider's resume template.
    expected = [codex, "resume", "--no-daemon", "-m", "gpt-5.6-sol", SID]
    assert codex_mcp(entry["resumeArgv"][1:5], run_dir)
    assert [entry["resumeArgv"][0], *entry["resumeArgv"][5:]] == expected
    assert entry["cwd"] == str(world["project"])

    on_disk = read(run_dir / "resume.json")["participants"][0]
    assert on_disk["resumeArgv"] == entry["resumeArgv"] and "resumeArgvTemplate" not in on_disk
    manifest = read(run_dir / "run-manifest.json")
    assert manifest["leadSessionId"] == SID
    assert manifest["participants"][0]["sessionRef"] == SID
    assert manifest["participants"][0]["status"] == "prepared"
    (event,) = [e for e in timeline(world) if e["event"] == "session-discovered"]
    assert event["sessionId"] == SID and event["participantRef"] == "participant-001"
    assert (run_dir / "resume-lead.sh").stat().st_mode & 0o777 == 0o700
    assert SID in (run_dir / "resume-lead.sh").read_text(encoding="utf-8")

    # Known now: printing again changes nothing, and a second event is never added.
    before = snapshot(world["project"] / ".okstra")
    code, doc, _ = okstra(world, "resume", str(run_dir / "run-manifest.json"), "--wait", "0")
    assert code == 0 and doc["discovered"] == [] and doc["lookups"] == []
    assert snapshot(world["project"] / ".okstra") == before


def test_no_rollout_stays_pending_and_writes_nothing(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "codex/gpt-5.6-sol")
    rollout(world, OTHER, age=3600)  # before the run: never picked
    before = snapshot(world["project"] / ".okstra")
    code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", "0")
    assert code == 1 and doc["ok"] is False
    assert doc["pending"] == ["participant-001"]
    assert "pending discovery" in doc["error"] and "--wait" in doc["error"]
    assert doc["participants"][0]["sessionId"] is None
    code, doc, stderr = okstra(world, "resume", str(run_dir), "--wait", "0", "--exec")
    assert code == 1 and "pending discovery" in stderr and "okstra resume" in stderr
    assert snapshot(world["project"] / ".okstra") == before
    assert lead_calls(world) == []


def test_several_sessions_are_not_guessed(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "codex/gpt-5.6-sol")
    rollout(world, SID)
    rollout(world, OTHER)
    before = snapshot(world["project"] / ".okstra")
    code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", "0")
    assert code == 1 and "--session-id" in doc["error"]
    assert sorted(doc["lookups"][0]["candidates"]) == sorted([SID, OTHER])
    code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", "0", "--session-id", "nope")
    assert code == 1 and "is not a session" in doc["error"]
    assert snapshot(world["project"] / ".okstra") == before
    code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", "0", "--session-id", OTHER)
    assert code == 0 and doc["participants"][0]["sessionId"] == OTHER


def test_exec_backend_then_script_heals_and_resumes(world: dict[str, Any]) -> None:
    # exec: prepare prints its JSON, then runs the (fake) codex in the foreground; it
    # exits 0 and okstra records that.
    run_dir = prepare(world, "codex/gpt-5.6-sol", launch="exec")
    (launch,) = lead_calls(world)
    # okstra's MCP server of the run comes first (`launch.mcp`), then the template.
    assert launch["argv"][0] == "-c" and launch["argv"][2] == "-c"
    assert launch["argv"][1].startswith("mcp_servers.okstra.command=")
    assert launch["argv"][3].endswith(f'"mcp", {json.dumps(str(run_dir))}]')
    assert launch["argv"][4:6] == ["--no-daemon", "-m"]
    participant = read(run_dir / "run-manifest.json")["participants"][0]
    assert participant["status"] == "exited" and participant["exitStatus"] == 0
    assert participant["sessionRef"] is None
    launched = datetime.fromisoformat(participant["launchedAt"]).timestamp()

    # Written just before the launch (to the microsecond): not this run's session.
    early = rollout(world, OTHER)
    os.utime(early, (launched - 0.01, launched - 0.01))
    # The pending script itself asks okstra to look; nothing found yet → clear failure.
    script = run_dir / "resume-lead.sh"
    done = subprocess.run(
        [str(script), "--wait", "0"],
        env=world["env"],
        capture_output=True,
        text=True,
        check=False,
        cwd=world["tmp"],
        timeout=60,
    )
    assert done.returncode == 1 and "pending discovery" in done.stderr, done.stderr
    rollout(world, SID)
    done = subprocess.run(
        [str(script), "--wait", "0"],
        env=world["env"],
        capture_output=True,
        text=True,
        check=False,
        cwd=world["tmp"],
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    resumed = lead_calls(world)[-1]
    assert resumed["cli"] == "codex"
    assert codex_mcp(resumed["argv"][:4], run_dir)  # the resumed lead keeps its tools
    assert resumed["argv"][4:] == ["resume", "--no-daemon", "-m", "gpt-5.6-sol", SID]
    assert resumed["cwd"] == str(world["project"])
    assert not (world["tmp"] / "pwned").exists() and not (world["project"] / "pwned").exists()
    participant = read(run_dir / "run-manifest.json")["participants"][0]
    assert participant["sessionRef"] == SID and participant["status"] == "exited"
    # The healed script resumes directly from now on.
    body = script.read_text(encoding="utf-8").split("\n", 2)[2]
    assert "okstra resume" not in body and "resume --no-daemon" in body, body


def test_script_falls_back_to_okstra_on_path(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "codex/gpt-5.6-sol")
    sheet = read(run_dir / "resume.json")
    assert Path(sheet["okstra"]).is_absolute()
    text = (run_dir / "resume-lead.sh").read_text(encoding="utf-8")
    moved = text.replace(sheet["okstra"], str(world["tmp"] / "gone" / "okstra"))
    script = run_dir / "resume-lead.sh"
    script.write_text(moved, encoding="utf-8")
    bin_dir = world["tmp"] / "okstra-bin"
    bin_dir.mkdir()
    (bin_dir / "okstra").symlink_to(okstra_cmd()[0])
    rollout(world, SID)
    env = {**world["env"], "PATH": f"{bin_dir}{os.pathsep}{world['env']['PATH']}"}
    done = subprocess.run(
        [str(script), "--wait", "0"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert lead_calls(world)[-1]["argv"][-1] == SID
    # Neither the recorded okstra nor one on PATH: a message, not a shell error.
    script.write_text(moved, encoding="utf-8")
    bare = {**world["env"], "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(script)], env=bare, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "pending discovery" in done.stderr
    assert "okstra" in done.stderr and "not found" in done.stderr


def test_claude_run_prints_the_sheet_and_exec_resumes(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "claude/opus-4.6")
    before = snapshot(world["project"] / ".okstra")
    code, doc, _ = okstra(world, "resume", RUN_ID, "--project-root", str(world["project"]))
    assert code == 0 and doc["ok"] is True and doc["lookups"] == []
    (entry,) = doc["participants"]
    sid = entry["sessionId"]
    assert entry["cli"] == "claude" and sid and entry["status"] == "ready"
    mcp = ["--mcp-config", str(run_dir / "mcp.json"), "--allowedTools", "mcp__okstra"]
    assert entry["resumeArgv"][1:] == [*mcp, "--resume", sid, "--model", "claude-opus-4-6"]
    assert snapshot(world["project"] / ".okstra") == before

    code, doc, _ = okstra(world, "resume", str(run_dir), "--exec", cwd=world["tmp"])
    assert code == 0 and doc["participants"][0]["sessionId"] == sid
    resumed = lead_calls(world)[-1]
    assert resumed["cli"] == "claude"
    assert resumed["argv"] == [*mcp, "--resume", sid, "--model", "claude-opus-4-6"]
    assert resumed["cwd"] == str(world["project"])
    # okstra stayed the resumed lead's parent: only the leader's record, the
    # timeline (resumed, then exited) and the runs index changed, nothing else (but
    # the files of the run's watcher, started with the resumed lead).
    after = snapshot(world["project"] / ".okstra")
    changed = {k for k in after if after[k] != before.get(k)} | (before.keys() - after.keys())
    watcher = ("/watcher.json", "/watcher.log")
    assert {k for k in changed if not k.endswith((".lock", *watcher))} == {
        "tasks/perf/widget/runs/requirements-discovery-001/run-manifest.json",
        "tasks/perf/widget/timeline.jsonl",
        "runs-index.jsonl",
    }
    events = [
        json.loads(line)["event"]
        for line in (run_dir.parent.parent / "timeline.jsonl").read_text().splitlines()
    ]
    assert events[-2:] == ["lead-resumed", "lead-exited"]


@pytest.mark.parametrize("recorded", ["without", "another"])
def test_the_server_arguments_are_rebuilt_never_taken_from_the_sheet(
    world: dict[str, Any], recorded: str
) -> None:
    # A sheet written before resumed leads kept the server (no server arguments): it
    # resumes without them. One whose server arguments name another file: okstra runs
    # its own, rebuilt (the sheet's are never run).
    run_dir = prepare(world, "claude/opus-4.6")
    path = run_dir / "resume.json"
    sheet = read(path)
    lead = sheet["participants"][0]
    program, rest = lead["resumeArgv"][0], lead["resumeArgv"][5:]
    mcp = ["--mcp-config", str(run_dir / "mcp.json"), "--allowedTools", "mcp__okstra"]
    if recorded == "without":
        lead["resumeArgv"] = [program, *rest]
    else:
        lead["resumeArgv"] = [program, "--mcp-config", "/tmp/evil.json", *mcp[2:], *rest]
    path.write_text(json.dumps(sheet), encoding="utf-8")
    code, doc, _ = okstra(world, "resume", str(run_dir), "--exec", cwd=world["tmp"])
    assert code == 0, doc
    resumed = lead_calls(world)[-1]["argv"]
    assert resumed == (rest if recorded == "without" else [*mcp, *rest])
    assert "/tmp/evil.json" not in resumed


@pytest.mark.parametrize(
    "run",
    [
        "requirements-discovery-999",
        "no such thing/at all",
        "brief.md",
        ".",
    ],
)
def test_bad_run_exits_2_naming_it(world: dict[str, Any], run: str) -> None:
    prepare(world, "claude/opus-4.6")
    code, doc, _ = okstra(world, "resume", run)
    assert code == 2 and doc["ok"] is False
    assert run in doc["error"] or (run == "." and "not a run directory" in doc["error"])


def test_bad_wait_is_a_usage_error(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "claude/opus-4.6")
    for value in ("-1", "soon", "nan"):
        code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", value)
        assert code == 2 and "--wait" in json.dumps(doc), doc


def test_broken_sheet_is_named(world: dict[str, Any]) -> None:
    run_dir = prepare(world, "codex/gpt-5.6-sol")
    sheet = read(run_dir / "resume.json")
    sheet["participants"][0]["resumeArgvTemplate"] = "codex resume"
    (run_dir / "resume.json").write_text(json.dumps(sheet), encoding="utf-8")
    code, doc, _ = okstra(world, "resume", str(run_dir), "--wait", "0")
    assert code == 2 and doc["field"] == "participants[0].resumeArgvTemplate"
    assert doc["file"].endswith("resume.json")


def test_template_round_trips_every_metacharacter(fake_bin, tmp_path: Path) -> None:
    from launch_helpers import NASTY, bundled, fake_env

    from okstra_core.launch import ResumeEntry, plan_launch, read_resume_sheet, write_resume_sheet

    bin_dir = fake_bin("codex")
    for value in NASTY:
        project = tmp_path / "p"
        project.mkdir(exist_ok=True)
        plan = plan_launch(
            bundled("codex"),
            model=value,
            prompt_file=project / "p.md",
            kickoff="go",
            project_root=project,
            environment=fake_env(bin_dir, CODEX_HOME=str(tmp_path / f"h{{{value}}}")),
        )
        run = tmp_path / "run"
        write_resume_sheet(run, [ResumeEntry.from_plan(plan, "participant-001")])
        (entry,) = read_resume_sheet(run).entries
        assert entry.pending_discovery and entry.discover is not None
        finished = entry.with_session(SID)
        assert finished.resume_argv == plan.resume_argv(SID), value
        assert finished.resume_template is None and finished.discover is None
