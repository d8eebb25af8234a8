"""The resume sheet: resume.json + resume-lead.sh, and the script really resumes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from launch_helpers import NASTY, bundled, fake_env, read_log

from okstra_core.errors import OkstraError
from okstra_core.launch import ResumeEntry, plan_launch, render_resume_sheet, write_resume_sheet

SID = "11111111-2222-4333-8444-555555555555"


def _plan(provider_id: str, bin_dir: Path, project: Path, **env: str):  # type: ignore[no-untyped-def]
    return plan_launch(
        bundled(provider_id),
        model="model; $(x)",
        prompt_file=project / "p.md",
        kickoff="go",
        project_root=project,
        environment=fake_env(bin_dir, **env),
    )


def test_sheet_files_modes_and_script_resumes(fake_bin, tmp_path: Path) -> None:
    project = tmp_path / "my project; $(touch pwned)"
    project.mkdir()
    bin_dir = fake_bin("claude", "codex")
    lead = ResumeEntry.from_plan(_plan("claude", bin_dir, project), "participant-001")
    run = tmp_path / "run"
    json_path, script = write_resume_sheet(run, [lead])
    assert json_path.stat().st_mode & 0o777 == 0o600
    assert script.stat().st_mode & 0o777 == 0o700
    data = json.loads(json_path.read_text(encoding="utf-8"))
    (entry,) = data["participants"]
    assert entry["sessionId"] == SID and entry["status"] == "ready"
    assert entry["resumeArgv"] == [
        str(bin_dir / "claude"),
        "--resume",
        SID,
        "--model",
        "model; $(x)",
    ]
    log = tmp_path / "log.jsonl"
    done = subprocess.run(
        [str(script)],
        env={"FAKE_CLI_LOG": str(log), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (call,) = read_log(log)
    assert call["argv"] == ["--resume", SID, "--model", "model; $(x)"]
    assert call["cwd"] == str(project)
    assert not (tmp_path / "pwned").exists() and not (project / "pwned").exists()


def test_pending_discovery_until_found(fake_bin, tmp_path: Path) -> None:
    bin_dir = fake_bin("codex")
    plan = _plan("codex", bin_dir, tmp_path)
    pending = ResumeEntry.from_plan(plan, "participant-001")
    data, pending_script = render_resume_sheet([pending])
    assert "pending discovery" in pending_script
    (entry,) = json.loads(data)["participants"]
    assert entry["status"] == "pending discovery" and entry["sessionId"] is None
    assert entry["resumeArgv"] is None and entry["resumeCommand"] is None
    run = tmp_path / "run"
    _, path = write_resume_sheet(run, [pending])
    # No okstra reachable (no run dir was recorded either): the script says what is
    # pending and fails. Healing through `okstra resume` is tested in
    # test_launch_resume_cmd.py.
    done = subprocess.run(
        [str(path)], capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 1 and "pending discovery" in done.stderr
    found = ResumeEntry.from_plan(plan, "participant-001", session_id="019a-found")
    write_resume_sheet(run, [found])
    (entry,) = json.loads((run / "resume.json").read_text(encoding="utf-8"))["participants"]
    assert entry["status"] == "ready"
    assert entry["resumeArgv"][1:] == ["resume", "--no-daemon", "-m", "model; $(x)", "019a-found"]


def test_ids_only_go_back_to_their_cli(fake_bin, tmp_path: Path) -> None:
    bin_dir = fake_bin("claude", "gemini")
    claude = _plan("claude", bin_dir, tmp_path)
    with pytest.raises(OkstraError, match="not minted for this claude launch"):
        ResumeEntry.from_plan(claude, "participant-001", session_id="someone-elses")
    gemini = _plan("antigravity", bin_dir, tmp_path)  # same injected uuid as claude's
    entries = [
        ResumeEntry.from_plan(claude, "participant-001"),
        ResumeEntry.from_plan(gemini, "participant-002", role="analyser"),
    ]
    with pytest.raises(OkstraError, match="only goes back to the CLI that minted it"):
        render_resume_sheet(entries)


def test_script_is_inert_for_hostile_values(fake_bin, tmp_path: Path) -> None:
    plan = _plan("antigravity", fake_bin("gemini"), tmp_path)
    for nasty in NASTY:
        entry = ResumeEntry.from_plan(plan, f"participant-001\n{nasty}")
        _, script = render_resume_sheet([entry])
        body = [line for line in script.splitlines() if not line.startswith("#")]
        assert body[0] == "set -e" and body[-1].startswith("exec ")
    _, script = render_resume_sheet([])
    assert "no lead CLI was launched" in script
