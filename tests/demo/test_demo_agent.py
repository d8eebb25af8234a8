"""okstra's demo agent (`okstra_demo`): a client of okstra's public commands only."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import okstra_demo
from okstra_demo.prompt import read_prompt
from okstra_demo.tools import ToolError, server_from
from okstra_demo.work import propose_change, run_tests, run_work

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "demo"
GOLDEN = REPO / "tests" / "prepare" / "documents" / "lead-prompt-workers.md"
PACKAGE = Path(okstra_demo.__file__).parent

# What the demo agent may never load: okstra's library, its app, or its launcher.
_FORBIDDEN = ("okstra_core", "okstra_tui", "okstra")

_PROBE = """
import importlib, pkgutil, sys
import {package}
for info in pkgutil.walk_packages({package}.__path__, "{package}."):
    importlib.import_module(info.name)
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})))
"""


def _loaded(package: str) -> list[str]:
    """The forbidden modules importing every module of `package` loads (a subprocess)."""
    code = _PROBE.format(package=package, forbidden=_FORBIDDEN)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.split()


def test_the_demo_agent_imports_nothing_of_okstra() -> None:
    assert _loaded("okstra_demo") == []
    # Statically too: no module of the package names okstra's own packages.
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            assert not [n for n in names if n.split(".")[0] in _FORBIDDEN], path


def test_the_import_probe_sees_okstra_core() -> None:
    # The probe itself works: a package that does load okstra_core is caught.
    assert "okstra_core" in _loaded("okstra_core.life")


def test_answering_its_version_and_help_loads_no_mcp_client() -> None:
    # okstra asks every CLI on PATH its version and help when it checks readiness (each
    # new home, each test): the MCP client (a second of imports) is loaded by the lead.
    code = (
        "import sys\n"
        "from okstra_demo.cli import main\n"
        "for argv in (['--version'], ['lead', '--help'], ['worker', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'anyio'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines()[-1] == "", done.stdout


def test_its_version_is_the_distributions_without_reading_the_metadata() -> None:
    # `--version` is asked on every readiness check: it says the release okstra ships in
    # without importlib.metadata (most of its time), and that release is the installed one.
    code = (
        "import sys\n"
        "from okstra_demo.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines() == [f"{okstra_demo.__version__} (okstra demo agent)", "False"]
    assert okstra_demo.__version__ == metadata.version("okstra")


def test_the_lead_reads_its_team_and_commands_from_the_prompt() -> None:
    prompt = read_prompt(GOLDEN)
    assert [m.ref for m in prompt.members] == [
        "role-exec-leader-001",
        "role-exec-implementer-001",
        "role-exec-verifier-001",
        "role-exec-report-writer-001",
    ]
    lead, implementer, verifier, writer = prompt.members
    assert lead.lead and not lead.task_file
    assert [m.ref for m in prompt.workers] == [implementer.ref, verifier.ref, writer.ref]
    assert implementer.writes and not verifier.writes
    assert implementer.role == "implementer" and verifier.model_ref == "claude/sonnet-4.6"
    assert implementer.task_file.endswith("workers/role-exec-implementer-001.task.md")
    run = "perf/widget/implementation-001"
    assert verifier.command("start")[:5] == ["okstra", "worker", "start", run, verifier.ref]
    assert verifier.command("wait") == [
        "okstra", "worker", "wait", run, verifier.ref, "--timeout", "540",
    ]  # fmt: skip
    assert verifier.command("result") == ["okstra", "worker", "result", run, verifier.ref]
    assert prompt.finalize == ["okstra", "report", "finalize", run, "--data", "<report.json>"]
    assert prompt.check == ["okstra", "report", "check", run, "<report.json>"]
    assert prompt.run_dir == Path(".okstra/tasks/perf/widget/runs/implementation-001")
    assert prompt.brief == "brief.md"
    # With okstra's MCP tools, the report's data goes to the project's file it names.
    assert prompt.report_file == "final-report-implementation-001.json"


def test_the_lead_reads_okstras_mcp_server_from_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        '{"mcpServers": {"okstra": {"command": "/opt/okstra", "args": ["mcp", "/r"]}}}'
    )
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "home"))
    server = server_from(config)
    assert (server.command, server.args) == ("/opt/okstra", ["mcp", "/r"])
    # The server inherits the lead's whole environment (its okstra home, its trust).
    assert server.env is not None and server.env["OKSTRA_HOME"] == str(tmp_path / "home")
    config.write_text('{"mcpServers": {"other": {"command": "x"}}}')
    with pytest.raises(ToolError, match=r"no mcpServers\.okstra server"):
        server_from(config)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the shipped demo project."""
    target = tmp_path / "wordfreq"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_scout_counts_the_words_of_the_files_its_task_names(project: Path) -> None:
    said: list[str] = []
    result = run_work("demo-scout", "Files: `README.md`", project, said.append, False)
    assert said == ["counting the words of README.md"]
    assert "- `README.md`: 86 words; most frequent: a (5), brief (5)" in result
    # A file outside the project is not read.
    outside = run_work("demo-scout", "Files: `../../etc/passwd.txt`", project, said.append, False)
    assert "`brief.md`" in outside


def test_the_tester_runs_the_projects_own_tests(project: Path) -> None:
    result = run_tests("", project, lambda _: None, False)
    assert "fail (exit 1)" in result
    assert "- FAIL: test_case_is_ignored" in result


def test_the_editor_changes_the_file_only_with_write_access(project: Path) -> None:
    target = project / "wordfreq" / "__init__.py"
    before = target.read_text(encoding="utf-8")
    proposed = propose_change("`wordfreq/__init__.py`", project, lambda _: None, False)
    assert "+    for word in WORD.findall(text.casefold()):" in proposed
    assert target.read_text(encoding="utf-8") == before
    made = propose_change("`wordfreq/__init__.py`", project, lambda _: None, True)
    assert "Made in the working tree." in made
    assert "text.casefold()" in target.read_text(encoding="utf-8")
    # The fix it made is the brief's: the demo's tests pass now.
    assert "`python -m unittest discover tests`: pass." in run_tests(
        "", project, lambda _: None, False
    )


def test_a_worker_writes_its_result_file_and_exits_0(project: Path, tmp_path: Path) -> None:
    result = tmp_path / "result.md"
    env = {**os.environ, "OKSTRA_DEMO_STEP_SECONDS": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "okstra_demo", "worker", "--model", "demo-scout",
         "--result-file", str(result), "--access", "read-only"],
        input="Files: `brief.md`\n", capture_output=True, text=True, cwd=project, env=env,
        check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert result.read_text(encoding="utf-8").startswith("## Word counts")
    assert "worker · demo-scout · read-only" in done.stdout
