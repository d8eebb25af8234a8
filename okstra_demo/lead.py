"""The demo lead: it runs its team through okstra, as its prompt says.

Given okstra's MCP server of the run (`--mcp-config`), it drives the team with the
server's tools, as a model lead would: 1. read the lead prompt; 2. start the workers
that gather findings (`worker_start`, each with its whole task), wait for them
(`worker_wait`, again while they still run) and read what they produced
(`worker_result`); 3. give the findings to the report writer and run it the same way;
4. write the final report's data where the prompt says and call `report_finalize`,
then run `okstra report check`; 5. wait at its prompt (on a terminal) or end (without
one). Without the server (or when it cannot be started) it does the same with okstra's
commands: it writes each worker's task file and runs `okstra worker start`, `okstra
worker wait`, `okstra worker result` and `okstra report finalize`.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .prompt import LeadPrompt, Member, read_prompt
from .screen import PROMPT, Screen
from .tools import Answer, ToolError, Tools, open_tools
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


def _shown_call(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as an agent CLI shows it: `okstra - worker_start (MCP)(who: "…")`."""
    parts = []
    for key, value in arguments.items():
        shown = json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}: {shown if len(shown) <= 60 else shown[:56] + ' …'}")
    return f"okstra - {name} (MCP)({', '.join(parts)})"


def _call(
    screen: Screen, tools: Tools, name: str, arguments: dict[str, Any], *, show_output: bool = True
) -> Answer:
    """Call one tool of okstra's MCP server, showing the call and its answer."""
    screen.work(f"calling {name}", 0.2)
    try:
        answer = tools.call(name, arguments)
    except ToolError as exc:
        screen.action(_shown_call(name, arguments), f"failed: {exc}")
        return Answer(text=str(exc), error=True)
    lines = answer.text.splitlines()
    if not show_output and len(lines) > 3:
        lines = [*lines[:3], f"… (+{len(lines) - 3} lines)"]
    detail = "\n".join(lines) or "(no text)"
    screen.action(_shown_call(name, arguments), detail + ("\n(tool error)" if answer.error else ""))
    return answer


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


def _surface() -> str | None:
    """Where `okstra demo` asks the lead to start its workers (`--surface`), if it does."""
    surface = os.environ.get(SURFACE_ENV, "")
    return surface if surface in ("tmux", "background") else None


def _dispatch_tools(
    screen: Screen, prompt: LeadPrompt, members: list[Member], out: Outcome, tools: Tools
) -> None:
    """Start the members with their tasks, wait for them and read their results, all
    through okstra's MCP tools."""
    started: list[Member] = []
    findings = "\n\n".join(out.results.values())
    surface = _surface()
    for member in members:
        task = _task_text(member, prompt, findings if member.role == _REPORT_ROLE else "")
        arguments: dict[str, Any] = {"who": member.ref, "prompt": task}
        if surface is not None:
            arguments["surface"] = surface
        if _call(screen, tools, "worker_start", arguments).error:
            out.failures.append(f"{member.label}: worker_start refused")
        else:
            started.append(member)
    if not started:
        return
    screen.work(f"waiting for {len(started)} worker{'s' if len(started) > 1 else ''}")
    while True:  # one call waits a slice; `timedOut`: they still run, so wait again
        waited = _call(screen, tools, "worker_wait", {"who": [m.ref for m in started]})
        if waited.error:
            out.failures.append("worker_wait refused")
        if waited.error or not waited.data.get("timedOut"):
            break
    for member in started:
        found = _call(screen, tools, "worker_result", {"who": member.ref}, show_output=False)
        text = "" if found.error else str(found.data.get("text", ""))
        out.results[member.label] = text.strip() or "(no result)"


def _start(member: Member) -> list[str]:
    """The member's start command; `--surface` added when `OKSTRA_DEMO_SURFACE` says
    where (`okstra demo --surface background` keeps every worker off tmux)."""
    argv = member.command("start")
    surface = _surface()
    if surface is not None and "--surface" not in argv:
        argv += ["--surface", surface]
    return argv


def _wait_all(members: list[Member]) -> list[str]:
    """One `okstra worker wait` for every member (the prompt: "name several to wait
    for all of them"): the first member's command with the others' refs added."""
    argv = members[0].command("wait")
    at = argv.index(members[0].ref) + 1
    return [*argv[:at], *(m.ref for m in members[1:]), *argv[at:]]


def _write_report(screen: Screen, prompt: LeadPrompt, out: Outcome, data: Path) -> None:
    """Write the final report: its markdown into the run's directory, its data to `data`."""
    run_dir = prompt.run_dir
    markdown = run_dir / "final-report.md"
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


def _check(screen: Screen, prompt: LeadPrompt, data: Path) -> int:
    code, _ = _run(screen, [*prompt.check[:-1], str(data)], show_output=False)
    return code


def _report(screen: Screen, prompt: LeadPrompt, out: Outcome) -> int:
    """Write the final report's data into the run's directory; finalize and check it."""
    data = prompt.run_dir / "final-report.json"
    _write_report(screen, prompt, out, data)
    finalize = [*prompt.finalize[:-1], str(data)] if prompt.finalize[-1] == "<report.json>" else []
    code, _ = _run(screen, finalize, show_output=False) if finalize else (2, "")
    return _check(screen, prompt, data) if code == 0 else code


def _report_tools(screen: Screen, prompt: LeadPrompt, out: Outcome, tools: Tools) -> int:
    """Write the final report's data where the prompt says (a file of the project),
    finalize it with `report_finalize` and check it."""
    name = prompt.report_file or f"final-report-{prompt.run_dir.name}.json"
    data = Path(name).absolute()
    _write_report(screen, prompt, out, data)
    if _call(screen, tools, "report_finalize", {"data": name}, show_output=False).error:
        return 2
    return _check(screen, prompt, data)


def _lead_team(screen: Screen, prompt: LeadPrompt, out: Outcome, tools: Tools | None) -> int:
    """Run the gatherers, then the report writer, then the report; its status."""
    workers = prompt.workers
    gatherers = [m for m in workers if m.role != _REPORT_ROLE]
    writers = [m for m in workers if m.role == _REPORT_ROLE]
    if tools is None:
        _dispatch(screen, prompt, gatherers, out)
        _dispatch(screen, prompt, writers, out)
        return _report(screen, prompt, out)
    _dispatch_tools(screen, prompt, gatherers, out, tools)
    _dispatch_tools(screen, prompt, writers, out, tools)
    return _report_tools(screen, prompt, out, tools)


def _connect(screen: Screen, stack: ExitStack, mcp_config: Path | None) -> Tools | None:
    """okstra's MCP server of the run, when the lead was given one and it starts."""
    if mcp_config is None:
        return None
    screen.work("starting okstra's MCP server", 0.2)
    try:
        tools = stack.enter_context(open_tools(mcp_config))
    except ToolError as exc:
        screen.action("MCP server okstra failed", f"{exc}\nusing okstra's commands instead")
        return None
    screen.action("MCP server okstra connected", f"from {mcp_config}: the team as tools")
    return tools


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


def run_lead(
    prompt_file: Path, session_id: str, model: str, kickoff: str, mcp_config: Path | None = None
) -> int:
    """The demo lead's whole turn; its exit status (0: report finalized and checked).

    Args:
        mcp_config: the `mcpServers` file naming okstra's MCP server of the run: the
            team is driven through its tools (else through okstra's commands).
    """
    screen = Screen()
    screen.say(f"okstra demo agent — scripted, no model · session {session_id} · {model}")
    if kickoff:
        screen.say(f"> {kickoff}")
    prompt = read_prompt(prompt_file)
    screen.action(
        f"Read({prompt_file})",
        f"{len(prompt.members)} role executions; {len(prompt.workers)} run as okstra workers",
    )
    screen.work("reading the prompt")
    out = Outcome()
    with ExitStack() as stack:
        code = _lead_team(screen, prompt, out, _connect(screen, stack, mcp_config))
    verdict = "finalized and checked" if code == 0 else "NOT finalized"
    screen.action(f"Done: {len(out.results)} results, report {verdict}.")
    for failure in out.failures:
        screen.say(f"  ! {failure}")
    if screen.tty and os.isatty(0):
        _wait_at_prompt(screen, prompt)
    return 0 if code == 0 and not out.failures else 1
