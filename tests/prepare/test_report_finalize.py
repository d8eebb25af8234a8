"""`okstra report finalize`: the run's execution roles written onto a final report.

Driven through the installed `okstra` command against a run that prepare wrote.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from okstra_core.environment import Environment
from okstra_core.prepare import prepare
from tests.conftest import okstra_cmd
from tests.prepare.prepare_support import request_of


def okstra(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*okstra_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def run_dir(project: Path, env: Environment) -> Path:
    result = prepare(
        request_of(project, role_counts=("analyser=2",)), launch="none", environment=env
    )
    return result.run_dir


def _record_outcome(run_dir: Path, ref: str, status: str, exit_status: int | None) -> None:
    """What okstra records when a member ends: its participant's status and exit status
    (and, for a worker, its role execution's status)."""
    path = run_dir / "run-manifest.json"
    manifest = orjson.loads(path.read_bytes())
    for r in manifest["roleExecutions"]:
        if r["roleExecutionRef"] == ref:
            if r["role"] != "leader":
                r["status"] = status
            for p in manifest["participants"]:
                if p["participantRef"] == r["participantRef"]:
                    p.update(status=status, exitStatus=exit_status)
    path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))


def test_finalize_writes_the_roles_and_check_passes(project: Path, run_dir: Path) -> None:
    _record_outcome(run_dir, "role-exec-analyser-002", "exited", 3)
    # The lead's end is recorded on its participant only (its role execution stays).
    _record_outcome(run_dir, "role-exec-leader-001", "stopped", None)
    report = project / "final-report.json"
    report.write_text(
        '{"title": "Widget", "zeta": [1, 2], "executionRoles": [], "alpha": {"b": null}}\n',
        encoding="utf-8",
    )
    report.chmod(0o644)
    before = okstra("report", "check", str(run_dir), str(report), cwd=project)
    assert before.returncode == 2 and "missing" in (before.stdout + before.stderr)

    run = "perf/widget/requirements-discovery-001"
    done = okstra("report", "finalize", run, "--data", "final-report.json", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    data = orjson.loads(report.read_bytes())
    # Other keys kept, in their order; executionRoles in its place; the version added.
    assert list(data) == ["title", "zeta", "executionRoles", "alpha", "executionIdentityVersion"]
    assert data["title"] == "Widget" and data["zeta"] == [1, 2] and data["alpha"] == {"b": None}
    assert data["executionIdentityVersion"] == 2
    manifest = orjson.loads((run_dir / "run-manifest.json").read_bytes())
    outcomes = {"role-exec-leader-001": "stopped", "role-exec-analyser-002": "exited 3"}
    assert data["executionRoles"] == [
        {
            "roleExecutionRef": r["roleExecutionRef"],
            "role": r["role"],
            "ordinal": r["ordinal"],
            "provider": r["provider"],
            "modelRef": r["modelRef"],
            "executionLabel": r["executionLabel"],
            "status": outcomes.get(r["roleExecutionRef"], "prepared").split(" ")[0],
            "outcome": outcomes.get(r["roleExecutionRef"], "prepared"),
            "exitStatus": 3 if r["roleExecutionRef"] == "role-exec-analyser-002" else None,
        }
        for r in manifest["roleExecutions"]
    ]
    assert [r["outcome"] for r in data["executionRoles"]] == [
        "stopped",
        "prepared",
        "exited 3",
        "prepared",
    ]
    assert orjson.loads(done.stdout)["executionRoles"] == data["executionRoles"]
    assert report.stat().st_mode & 0o777 == 0o644  # its permissions are kept
    check = okstra("report", "check", str(run_dir), str(report), cwd=project)
    assert check.returncode == 0, check.stdout + check.stderr

    # Again: the same bytes (the keys keep their place).
    written = report.read_bytes()
    assert (
        okstra("report", "finalize", str(run_dir), "--data", str(report), cwd=project).returncode
        == 0
    )
    assert report.read_bytes() == written


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[1, 2]\n", "expected a JSON object (final report), got an array"),
        (b'{"title": "x",\n', "invalid JSON"),
        (b'"just text"', "expected a JSON object (final report), got a string"),
        (b"\xff\xfe{}", "not valid UTF-8"),
    ],
)
def test_a_report_that_is_not_an_object_is_refused_unchanged(
    project: Path, run_dir: Path, text: bytes, message: str
) -> None:
    report = project / "final-report.json"
    report.write_bytes(text)
    done = okstra("report", "finalize", str(run_dir), "--data", str(report), cwd=project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in (done.stdout + done.stderr) and "final-report.json" in (
        done.stdout + done.stderr
    )
    assert "Traceback" not in (done.stdout + done.stderr)
    assert report.read_bytes() == text
    assert sorted(p.name for p in project.iterdir()) == [".okstra", "brief.md", "final-report.json"]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` (lock sidecars aside) and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_refusals_name_what_is_wrong(project: Path, run_dir: Path, tmp_path: Path) -> None:
    before = _files(project / ".okstra")
    target = tmp_path / "real.json"
    target.write_text("{}", encoding="utf-8")
    link = project / "link.json"
    link.symlink_to(target)
    done = okstra("report", "finalize", str(run_dir), "--data", str(link), cwd=project)
    assert done.returncode == 2 and "link" in (done.stdout + done.stderr), done.stdout + done.stderr
    assert target.read_text(encoding="utf-8") == "{}" and link.is_symlink()

    missing = okstra("report", "finalize", str(run_dir), cwd=project)
    assert missing.returncode == 2 and "--data" in (missing.stdout + missing.stderr)
    absent = okstra("report", "finalize", str(run_dir), "--data", "nope.json", cwd=project)
    assert absent.returncode != 0 and "nope.json" in (absent.stdout + absent.stderr)
    no_run = okstra(
        "report", "finalize", "perf/widget/planning-009", "--data", "x.json", cwd=project
    )
    assert no_run.returncode == 2 and "no run" in (no_run.stdout + no_run.stderr)
    assert not (project / "x.json").exists() and not (project / "nope.json").exists()
    assert _files(project / ".okstra") == before  # the run and its task are untouched
