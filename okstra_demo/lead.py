"""The demo lead: it runs its team through okstra's commands, as its prompt says.

1. read the lead prompt; 2. write each worker's task file; 3. start the workers that
gather findings (`okstra worker start`), wait for them (`okstra worker wait`) and read
what they produced (`okstra worker result`); 4. give the findings to the report writer
and run it the same way; 5. write the final report's data into the run's directory and
run `okstra report finalize` and `okstra report check`; 6. wait at its prompt (on a
terminal) or end (without one).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .prompt import LeadPrompt, Member, read_prompt
from .screen import PROMPT, Screen
from .work import FINDINGS

__all__ = ["run_lead"]

_COMMAND_TIMEOUT = 900.0
_REPORT_ROLE = "report-writer"
# Where `okstra demo` asks the lead to start its workers (`--surface`).
SURFACE_ENV = "OKSTRA_DEMO_SURFACE"


@dataclass
class Outcome:
    """What the team did: each worker's result text and the steps that failed."""

    results: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def _shown(argv: list[str]) -> str:
    return shlex.join([Path(argv[0]).name if os.path.isabs(argv[0]) else argv[0], *argv[1:]])


def _program(name: str) -> str:
    """`name` as a shell finds it; `okstra` not on PATH is the one installed beside this
    agent (both come with okstra: `.venv/bin` need not be on PATH)."""
    if os.path.dirname(name) or shutil.which(name) is not None:
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else name


def _run(screen: Screen, argv: list[str], *, show_output: bool = True) -> tuple[int, str]:
    """Run one okstra command from the project root, showing it as a shell tool call."""
    screen.work(f"running {argv[1] if len(argv) > 1 else argv[0]}", 0.2)
    try:
        done = subprocess.run(
            [_program(argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            timeout=_COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        screen.action(f"Bash({_shown(argv)})", f"failed: {exc}")
        return 127, ""
    output = (done.stdout + done.stderr).strip()
    lines = output.splitlines()
    if not show_output and len(lines) > 3:
        lines = [*lines[:3], f"… (+{len(lines) - 3} lines)"]
    detail = "\n".join(lines) if lines else f"exit {done.returncode}"
    if done.returncode != 0 and lines:
        detail += f"\n(exit {done.returncode})"
    screen.action(f"Bash({_shown(argv)})", detail)
    return done.returncode, done.stdout


def _write(path: Path, text: str) -> None:
    """Write `text` to `path` whole (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _task_text(member: Member, prompt: LeadPrompt, findings: str = "") -> str:
    brief = prompt.brief or "brief.md"
    files = [brief, "README.md"]
    if member.model_ref.endswith("/editor"):
        files = ["wordfreq/__init__.py"]
    lines = [
        f"# Task for {member.label}",
        "",
        f"You are {member.label} on this run. Read the brief `{brief}`.",
        "Files: " + ", ".join(f"`{name}`" for name in files),
        "Return your findings as markdown.",
    ]
    if findings:
        lines += ["", FINDINGS, "", findings]
    return "\n".join(lines) + "\n"


def _dispatch(screen: Screen, prompt: LeadPrompt, members: list[Member], out: Outcome) -> None:
    """Write the members' tasks, start them, wait for them and read their results."""
    started: list[Member] = []
    findings = "\n\n".join(out.results.values())
    for member in members:
        task = _task_text(member, prompt, findings if member.role == _REPORT_ROLE else "")
        _write(Path(member.task_file), task)
        screen.action(f"Write({member.task_file})", f"the task of {member.label}")
        screen.work("writing the task")
        code, _ = _run(screen, _start(member))
        if code == 0:
            started.append(member)
        else:
            out.failures.append(f"{member.label}: `worker start` exited {code}")
    if not started:
        return
    screen.work(f"waiting for {len(started)} worker{'s' if len(started) > 1 else ''}")
    code, _ = _run(screen, _wait_all(started))
    if code != 0:
        out.failures.append(f"`worker wait` exited {code}")
    for member in started:
        code, text = _run(screen, member.command("result"), show_output=False)
        out.results[member.label] = text.strip() or "(no result)"


def _start(member: Member) -> list[str]:
    """The member's start command; `--surface` added when `OKSTRA_DEMO_SURFACE` says
    where (`okstra demo --surface background` keeps every worker off tmux)."""
    argv = member.command("start")
    surface = os.environ.get(SURFACE_ENV, "")
    if surface in ("tmux", "background") and "--surface" not in argv:
        argv += ["--surface", surface]
    return argv


def _wait_all(members: list[Member]) -> list[str]:
    """One `okstra worker wait` for every member (the prompt: "name several to wait
    for all of them"): the first member's command with the others' refs added."""
    argv = members[0].command("wait")
    at = argv.index(members[0].ref) + 1
    return [*argv[:at], *(m.ref for m in members[1:]), *argv[at:]]


def _report(screen: Screen, prompt: LeadPrompt, out: Outcome) -> int:
    """Write the final report's data into the run's directory; finalize and check it."""
    run_dir = prompt.run_dir
    markdown = run_dir / "final-report.md"
    data = run_dir / "final-report.json"
    written = out.results.get(next((k for k in out.results if k.startswith(_REPORT_ROLE)), ""))
    body = written or "\n\n".join(out.results.values())
    _write(markdown, body + "\n")
    report = {
        "title": f"okstra demo run {run_dir.name}",
        "writtenBy": "okstra demo agent (scripted, no model)",
        "reportMarkdown": str(markdown),
        "findings": out.results,
        "failures": out.failures,
    }
    _write(data, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    screen.action(f"Write({data})", "the final report's data")
    screen.work("writing the report")
    finalize = [*prompt.finalize[:-1], str(data)] if prompt.finalize[-1] == "<report.json>" else []
    check = [*prompt.check[:-1], str(data)]
    code, _ = _run(screen, finalize, show_output=False) if finalize else (2, "")
    if code == 0:
        code, _ = _run(screen, check, show_output=False)
    return code


def _wait_at_prompt(screen: Screen, prompt: LeadPrompt) -> None:
    """Stay at the prompt, as an agent does after its turn, until EOF or `/exit`."""
    screen.say("")
    while True:
        try:
            line = input(PROMPT)
        except (EOFError, KeyboardInterrupt):
            screen.say("")
            return
        if line.strip() in ("/exit", "/quit", "exit", "quit"):
            return
        if line.strip():
            screen.action(
                "I am okstra's scripted demo agent: I have no model and nothing more to do.",
                f"The report is in {prompt.run_dir}/final-report.md. /exit (or Ctrl-D) ends me.",
            )


def run_lead(prompt_file: Path, session_id: str, model: str, kickoff: str) -> int:
    """The demo lead's whole turn; its exit status (0: report finalized and checked)."""
    screen = Screen()
    screen.say(f"okstra demo agent — scripted, no model · session {session_id} · {model}")
    if kickoff:
        screen.say(f"> {kickoff}")
    prompt = read_prompt(prompt_file)
    workers = prompt.workers
    screen.action(
        f"Read({prompt_file})",
        f"{len(prompt.members)} role executions; {len(workers)} run as okstra workers",
    )
    screen.work("reading the prompt")
    out = Outcome()
    gatherers = [m for m in workers if m.role != _REPORT_ROLE]
    writers = [m for m in workers if m.role == _REPORT_ROLE]
    _dispatch(screen, prompt, gatherers, out)
    _dispatch(screen, prompt, writers, out)
    code = _report(screen, prompt, out)
    verdict = "finalized and checked" if code == 0 else "NOT finalized"
    screen.action(f"Done: {len(out.results)} results, report {verdict}.")
    for failure in out.failures:
        screen.say(f"  ! {failure}")
    if screen.tty and os.isatty(0):
        _wait_at_prompt(screen, prompt)
    return 0 if code == 0 and not out.failures else 1
