"""Command-line conventions, run through the installed `okstra` in subprocesses.

No terminal → exit 2 naming the headless commands; a bad --project-root → exit 2
naming it; `--version` anywhere; tables by default and the same data with `--json`;
help with examples; shell completion scripts that load in their shells.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import okstra_core
from tests.conftest import okstra_cmd


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\n", encoding="utf-8")
    return root


def okstra(*args: str, cwd: Path | None = None, stdin: int | None = subprocess.DEVNULL):
    return subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env=dict(os.environ),
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_app_without_a_terminal_exits_2_naming_the_headless_commands(tmp_path) -> None:
    proc = okstra(cwd=tmp_path)  # stdin /dev/null, stdout a pipe
    assert proc.returncode == 2
    assert "needs a terminal" in proc.stderr
    assert "okstra wizard" in proc.stderr and "okstra prepare" in proc.stderr
    assert proc.stdout == ""  # no escape codes written anywhere
    assert "Traceback" not in proc.stderr


def test_a_missing_project_root_is_refused_at_once(tmp_path) -> None:
    missing = tmp_path / "nope"
    proc = okstra("--project-root", str(missing))
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "no such directory" in proc.stderr
    a_file = tmp_path / "file"
    a_file.write_text("x")
    proc = okstra("--project-root", str(a_file))
    assert proc.returncode == 2 and "not a directory" in proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["models", "--version"],
        ["wizard", "step", "--state", "x", "--version"],
        ["--project-root", "/nonexistent", "--version"],
        ["prepare", "--dry-run", "--version"],
    ],
)
def test_version_anywhere(argv) -> None:
    proc = okstra(*argv)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"okstra {okstra_core.__version__}"


def test_models_prints_a_table_and_json_the_same_data(tmp_path, fake_path) -> None:
    table = okstra("models", "--host", "terminal", cwd=tmp_path)
    doc = okstra("models", "--host", "terminal", "--json", cwd=tmp_path)
    assert table.returncode == doc.returncode == 0
    payload = json.loads(doc.stdout)
    assert payload["ok"] is True and payload["models"]
    lines = table.stdout.splitlines()
    assert "Model ref" in lines[1] and "Provider" in lines[1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(table.stdout)
    for model in payload["models"]:
        row = next(line for line in lines if line.startswith(model["modelRef"] + " "))
        assert model["provider"] in row
        assert ("yes" if model["available"] else "no") in row.split()


def test_models_errors_are_text_without_json_and_json_with_it(tmp_path) -> None:
    text = okstra("models", "--role", "nobody", cwd=tmp_path)
    assert text.returncode == 2 and text.stdout == ""
    assert text.stderr.startswith("okstra: ") and "nobody" in text.stderr
    doc = okstra("models", "--role", "nobody", "--json", cwd=tmp_path)
    assert doc.returncode == 2 and json.loads(doc.stdout)["ok"] is False


def test_team_prints_a_table(tmp_path, fake_path) -> None:
    proc = okstra(
        "team", "--task-type", "requirements-discovery", "--host", "terminal", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "Team for requirements-discovery" in proc.stdout
    assert "analyser" in proc.stdout and "claude/opus-4.6" in proc.stdout


def test_report_roles_table_markdown_and_json(project, fake_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_HELP", "usage: cli [--session-id ID] [--model M] [prompt]")
    prepared = okstra(
        "prepare",
        "--project-root",
        str(project),
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
        "--launch",
        "none",
    )
    assert prepared.returncode == 0, prepared.stdout
    run_dir = json.loads(prepared.stdout)["runDir"]
    table = okstra("report", "roles", run_dir)
    markdown = okstra("report", "roles", run_dir, "--markdown")
    doc = okstra("report", "roles", run_dir, "--json")
    assert table.returncode == markdown.returncode == doc.returncode == 0
    rows = json.loads(doc.stdout)["executionRoles"]
    assert markdown.stdout == json.loads(doc.stdout)["markdown"]
    assert markdown.stdout.startswith("| Role execution |")
    for row in rows:
        assert row["roleExecutionRef"] in table.stdout
    assert "|" not in table.stdout.splitlines()[-1]  # a table, not markdown


def test_every_command_and_flag_has_help_and_every_command_examples() -> None:
    import argparse

    from okstra_core.cli import build_parser
    from okstra_core.cli._completion import _parsers, completion_parser

    for each in _parsers(completion_parser()):
        for action in each._actions:
            if action.option_strings:
                assert action.help, f"{each.prog} {action.option_strings[0]} has no help"
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert choice.help, f"{each.prog} {choice.dest} has no help"

    def commands(parser, path=""):
        for action in parser._actions:
            if action.__class__.__name__ == "_SubParsersAction":
                for name, command in action.choices.items():
                    yield f"{path} {name}".strip(), command
                    yield from commands(command, f"{path} {name}")

    found = dict(commands(build_parser()))
    assert {"wizard step", "wizard outcome", "report roles", "report check"} <= set(found)
    for name, command in found.items():
        assert command.epilog and "examples" in command.epilog, name
        assert f"okstra {name}" in command.epilog, name
    assert "okstra wizard step --state" in okstra("wizard", "step", "--help").stdout
    assert "examples:" in okstra("--help").stdout
    assert "okstra models" in okstra("models", "--help").stdout


def complete(line: str, cwd: Path, tmp_path: Path, **env: str) -> list[str]:
    """What okstra offers for `line` (the cursor at its end), asked the way the shells'
    scripts ask it (argcomplete's protocol: `_ARGCOMPLETE` and `COMP_LINE` set)."""
    out = tmp_path / "offered"
    done = subprocess.run(
        okstra_cmd(),
        cwd=cwd,
        env={
            **os.environ,
            **env,
            "_ARGCOMPLETE": "1",
            "_ARGCOMPLETE_SHELL": "bash",
            "_ARGCOMPLETE_IFS": "\n",
            "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
            "COMP_LINE": line,
            "COMP_POINT": str(len(line)),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [word.strip() for word in out.read_text(encoding="utf-8").split("\n") if word]


def test_bash_completion_loads_and_completes(tmp_path: Path) -> None:
    script = okstra("completion", "bash")
    assert script.returncode == 0
    bin_dir = Path(okstra_cmd()[0]).parent
    probe = (
        f'export PATH="{bin_dir}:$PATH"\n'
        + script.stdout
        + '\nt() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9;'
        " _python_argcomplete okstra; echo ${COMPREPLY[*]}; }\n"
        "complete -p okstra\n"
        "t 'okstra pre'\nt 'okstra prepare --la'\nt 'okstra prepare --launch t'\n"
        "t 'okstra wizard s'\nt 'okstra wizard init --task-type impl'\n"
    )
    out = subprocess.run(
        ["bash", "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    lines = out.stdout.splitlines()
    assert "-F _python_argcomplete okstra" in lines[0], out.stdout + out.stderr
    assert [line.split() for line in lines[1:]] == [
        ["prepare"],
        ["--launch"],
        ["tmux"],
        ["step", "show", "schema"],
        ["implementation-planning", "implementation"],
    ], out.stderr


def test_completion_offers_the_projects_runs_workers_roles_and_setups(tmp_path: Path) -> None:
    from tests.life.worker_support import World

    world = World(tmp_path)
    run_dir = world.prepare("--role-count", "analyser=1")
    project, env = world.project, world.env
    assert complete("okstra status ", project, tmp_path, **env) == sorted(
        [run_dir.name, f"widget/{run_dir.name}"]
    )
    assert complete("okstra stop requirements-", project, tmp_path, **env) == [run_dir.name]
    code, status = world.json("worker", "status", run_dir.name)
    assert code == 0, status
    labels = complete(f"okstra worker result {run_dir.name} ", project, tmp_path, **env)
    assert labels == [w["short"] for w in status["workers"]]
    assert {"leader#1", "analyser#1"} <= set(labels)
    assert complete(f"okstra worker start {run_dir.name} an", project, tmp_path, **env) == [
        "analyser#1"
    ]
    roles = complete(f"okstra worker start {run_dir.name} --role ", project, tmp_path, **env)
    assert {"analyser", "critic", "fixer"} <= set(roles)
    init = world.okstra("wizard", "init", "--project-root", str(project), "--state", "mine")
    assert init.returncode == 0, init.stderr
    assert complete("okstra wizard step --state m", project, tmp_path, **env) == ["mine"]
    # Nothing to offer is no error: a run that is not there, no project at all.
    assert complete("okstra worker result nope ", project, tmp_path, **env) == []
    assert complete("okstra status ", tmp_path, tmp_path, **env) == []


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_loads() -> None:
    bin_dir = Path(okstra_cmd()[0]).parent
    probe = (
        f'export PATH="{bin_dir}:$PATH"\n'
        "autoload -U compinit && compinit -u\n"
        "source <(okstra completion zsh) || exit 3\n"
        'print -r -- "${_comps[okstra]}"\n'
    )
    loaded = subprocess.run(
        ["zsh", "-f", "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["_python_argcomplete"], loaded.stdout


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_loads_and_completes(tmp_path: Path) -> None:
    bin_dir = Path(okstra_cmd()[0]).parent
    probe = (
        f"set -x PATH {bin_dir} $PATH\n"
        "okstra completion fish | source\n"
        'complete -C "okstra prep"\ncomplete -C "okstra prepare --launch t"\n'
        'complete -C "okstra wizard s"\n'
    )
    done = subprocess.run(
        ["fish", "--no-config", "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    offered = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert offered == ["prepare", "tmux", "schema", "show", "step"], done.stdout


def _to_a_closed_pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the installed okstra with stdout a pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*okstra_cmd(), *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)


def test_a_reader_that_goes_away_stops_okstra_quietly(project: Path, fake_path: Path) -> None:
    """`okstra wizard show | head -c 10`: no traceback, no message, exit 141 (as git)."""
    code = subprocess.run(
        [*okstra_cmd(), "wizard", "init", "--state", "piped", "--project-root", str(project)],
        capture_output=True,
        timeout=60,
        check=False,
    ).returncode
    assert code == 0
    show = ["wizard", "show", "--state", "piped"]
    for args in (show, ["models"], ["models", "--json"]):
        proc = _to_a_closed_pipe(args, project)
        assert (proc.returncode, proc.stderr) == (141, b""), (args, proc.stderr.decode())
    # And through a shell pipeline, as people type it.
    command = " ".join([*okstra_cmd(), *show]) + " | head -c 10"
    piped = subprocess.run(
        ["bash", "-c", command], cwd=project, capture_output=True, timeout=60, check=False
    )
    assert piped.returncode == 0 and len(piped.stdout) == 10 and piped.stderr == b""


@pytest.mark.parametrize(
    "argv",
    [
        ["wizard", "step", "--state", "w", "--no-submit"],
        ["wizard", "step", "--no-submit", "--state", "w"],
        ["wizard", "step", "--state", "w", "--answer", "new", "--step", "task_pick"],
        ["wizard", "step", "--state", "w", "--answer", ""],
        ["wizard", "step", "--state", "w", "--answer", "two words"],
        ["wizard", "step", "--state", "w", "--back"],
        ["wizard", "step", "--state", "w", "--rewind", "role-model:analyser:1"],
        ["wizard", "show", "--state", "a/b.json"],
        ["wizard", "outcome", "--state", "w"],
        ["wizard", "answers", "--state", "w"],
    ],
)
def test_plain_wizard_commands_parse_as_argparse_does(argv: list[str]) -> None:
    """The argparse-free path of the per-step commands gives argparse's namespace."""
    from okstra_core.cli import build_parser
    from okstra_core.cli._wizard import parse_plain

    plain = parse_plain(argv)
    assert plain is not None
    assert vars(plain) == vars(build_parser("wizard").parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["wizard", "step", "--state=w", "--no-submit"],  # the = spelling
        ["wizard", "step", "--state", "w", "--no-sub"],  # an abbreviation
        ["wizard", "step", "--state", "w"],  # no action
        ["wizard", "step", "--state", "w", "--back", "--no-submit"],  # two actions
        ["wizard", "step", "--state", "w", "--answer", "-1"],  # a value like a flag
        ["wizard", "step", "--state", "w", "--state", "v", "--back"],  # repeated
        ["wizard", "step", "--state", "w", "--no-submit", "--help"],
        ["wizard", "show", "--state", "w", "extra"],
        ["wizard", "show"],
        ["wizard", "init", "--project-root", "."],  # not a per-step command
    ],
)
def test_other_spellings_go_to_argparse(argv: list[str]) -> None:
    from okstra_core.cli._wizard import parse_plain

    assert parse_plain(argv) is None
