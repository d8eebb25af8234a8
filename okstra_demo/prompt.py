"""Read an okstra lead prompt as an agent does: who is on the team and what to run.

Only the prompt's own words are used — the team table, each member's dispatch
instructions (its task file and its `okstra worker` commands) and the report commands —
so the demo lead follows exactly what okstra told it, as any lead must.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LeadPrompt", "Member", "PromptError", "read_prompt"]

_MEMBER = re.compile(r"^- \*\*(?P<label>[^*]+)\*\* \(`(?P<ref>[^`]+)`, (?P<participant>[^)]+)\):")
_TASK_FILE = re.compile(r"Write its task to `(?P<path>[^`]+)`")
_FINALIZE = re.compile(r"`(?P<cmd>[^`]+ report finalize [^`]+)`")
_CHECK = re.compile(r"`(?P<cmd>[^`]+ report check [^`]+)`")
_PATH_LINE = re.compile(r"^- (?P<what>[a-z ()]+): `(?P<path>[^`]+)`")
# With okstra's MCP tools: where the final report's data goes (a file of the project).
_REPORT_TOOL = re.compile(r'`report_finalize`[^`]*`\{"data": "(?P<path>[^"]+)"\}`')
_BRIEF = re.compile(r"^From `(?P<path>[^`]+)`:")


class PromptError(Exception):
    """The prompt does not say what the demo lead needs (named in the message)."""


@dataclass
class Member:
    """One role execution of the team, as the prompt lists it."""

    label: str
    ref: str
    access: str = ""
    task_file: str = ""
    commands: list[str] = field(default_factory=list)
    lead: bool = False

    @property
    def role(self) -> str:
        return self.label.split("#", 1)[0]

    @property
    def model_ref(self) -> str:
        return self.label.rpartition(" · ")[2]

    @property
    def writes(self) -> bool:
        return self.access == "workspace-write"

    def command(self, verb: str) -> list[str]:
        """The member's `okstra worker <verb>` command as argv (PromptError if absent)."""
        for line in self.commands:
            argv = shlex.split(line)
            if verb in argv and argv[argv.index(verb) - 1 : argv.index(verb)] == ["worker"]:
                return argv
        raise PromptError(f"the prompt gives no `worker {verb}` command for {self.label}")


@dataclass
class LeadPrompt:
    """What the demo lead takes from its prompt."""

    path: Path
    members: list[Member]
    finalize: list[str]
    check: list[str]
    paths: dict[str, str]
    brief: str | None
    report_file: str | None = None

    @property
    def workers(self) -> list[Member]:
        return [m for m in self.members if not m.lead and m.task_file]

    @property
    def run_dir(self) -> Path:
        manifest = self.paths.get("run manifest")
        if manifest is None:
            raise PromptError("the prompt names no run manifest")
        return Path(manifest).parent


def _members(lines: list[str]) -> list[Member]:
    members: list[Member] = []
    in_code = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        found = _MEMBER.match(line)
        if found and not in_code:
            members.append(Member(found["label"].strip(), found["ref"]))
            members[-1].lead = "launched this session as the lead" in line
            continue
        if not members:
            continue
        member = members[-1]
        if in_code and stripped:
            member.commands.append(stripped)
        elif (task := _TASK_FILE.search(line)) is not None:
            member.task_file = task["path"]
        if "(workspace-write)" in line or "(read-only)" in line:
            member.access = "workspace-write" if "(workspace-write)" in line else "read-only"
        if line.startswith("## "):
            members.append(Member("", ""))  # a new section ends the last member's lines
    return [m for m in members if m.ref]


def read_prompt(path: Path) -> LeadPrompt:
    """Parse the lead prompt at `path`.

    Raises:
        PromptError: it names no report finalize command or no member.
        OSError: it cannot be read.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    dispatch = text.split("How to dispatch each one:", 1)
    members = _members(dispatch[1].splitlines()) if len(dispatch) == 2 else []
    if not members:
        raise PromptError(f"{path}: the prompt lists no team ('How to dispatch each one:')")
    finalize = _FINALIZE.search(text)
    check = _CHECK.search(text)
    if finalize is None or check is None:
        raise PromptError(f"{path}: the prompt gives no `report finalize` / `report check` command")
    paths = {m["what"]: m["path"] for m in map(_PATH_LINE.match, lines) if m is not None}
    brief = next((m["path"] for m in map(_BRIEF.match, lines) if m is not None), None)
    return LeadPrompt(
        path=path,
        members=members,
        finalize=shlex.split(finalize["cmd"]),
        check=shlex.split(check["cmd"]),
        paths=paths,
        brief=brief,
        report_file=tool["path"] if (tool := _REPORT_TOOL.search(text)) is not None else None,
    )
