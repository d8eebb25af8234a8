"""The lead's prompt (`lead-prompt.md`) and its meta document (`lead-prompt.meta.json`).

The prompt is `prompts/templates/lead.md.j2` rendered with the run's facts: its team
(`TeamLine`, one per role execution, with how the lead dispatches it), the profile's
instructions, the brief, the approved plan's stages, the directive and where the run's
files are.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.models import LEADER, ProviderSpec
from ..documents import LeadPromptMeta
from ..environment import Environment
from ..records import dataclass
from .render import render_template
from .resolve import Resolved

if TYPE_CHECKING:
    from .run_documents import RunLayout

__all__ = ["KICKOFF", "TeamLine", "lead_prompt", "lead_prompt_meta", "team_lines"]

# The lead CLI's first message: the prompt file holds the instructions.
KICKOFF = "Begin the run described in your instructions."
_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[A-Za-z0-9_]+)?)\}")


@dataclass(frozen=True, kw_only=True)
class TeamLine:
    """One role execution as the lead prompt lists it, with how to dispatch it.

    Attributes:
        ref, participant, label: the role execution's ref, participant and label.
        role, ordinal, duty, provider, model_ref, display, runner: what runs it.
        dispatch: the sentence telling the lead how to start it.
        command: the shell command it runs, when one does.
    """

    ref: str
    participant: str
    label: str
    role: str
    ordinal: int
    duty: str
    provider: str
    model_ref: str | None
    display: str
    runner: str
    dispatch: str
    command: str | None


def _display_argv(provider: ProviderSpec, model: str, project_root: Path, label: str) -> list[str]:
    """The provider's launch template filled for a human/lead to read (not executed)."""
    values = {
        "cli": provider.cli,
        "model": model,
        "session_id": "<new-session-id>",
        "prompt_file": f"<prompt file for {label}>",
        "prompt": f"<prompt for {label}>",
        "kickoff": f"<task for {label}>",
        "project_root": str(project_root),
    }

    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("env."):
            return "$" + name[4:]
        return values.get(name, m.group(0))

    out = []
    for part in provider.launch.new:
        marked = part.replace("{{", "\0").replace("}}", "\1")
        out.append(_PLACEHOLDER.sub(fill, marked).replace("\0", "{").replace("\1", "}"))
    return out


def _dispatch(r: Any, resolved: Resolved) -> tuple[str, str | None]:
    """How the lead runs one role execution: (sentence, command or None)."""
    runner = r.binding.runner
    if r.role == LEADER:
        if runner == "current-session":
            return "you — this host session is the lead", None
        return "you — okstra launched this session as the lead", None
    if runner == "native-session":
        return (
            f"start a native sub-session of your host ({r.binding.host_runtime}) with model "
            f"`{r.binding.host_model_value}`",
            None,
        )
    provider = resolved.catalog.provider(r.provider)
    argv = _display_argv(provider, r.execution, resolved.request.project_root, r.execution_label)
    command = shlex.join(argv)
    return f"run `{command}` in a new shell", command


def team_lines(resolved: Resolved) -> tuple[TeamLine, ...]:
    """Every role execution of the run, in the manifest's order, with its dispatch."""
    lines = []
    for r in resolved.manifest.role_executions:
        how, command = _dispatch(r, resolved)
        lines.append(
            TeamLine(
                ref=r.role_execution_ref,
                participant=r.participant_ref,
                label=r.execution_label,
                role=r.role,
                ordinal=r.ordinal,
                duty=r.duty,
                provider=r.provider,
                model_ref=r.model_ref,
                display=r.display_name,
                runner=r.binding.runner,
                dispatch=how,
                command=command,
            )
        )
    return tuple(lines)


def lead_prompt(resolved: Resolved, layout: RunLayout, environment: Environment) -> str:
    """The text of `lead-prompt.md`."""
    request, profile, approved = resolved.request, resolved.profile, resolved.approved_plan
    root = request.project_root
    context = {
        "run": {
            "id": layout.run_id,
            "seq": layout.seq,
            "task_type": request.task_type,
            "created_at": layout.now,
        },
        "task": {
            "key": request.task_key,
            "group": request.task_group,
            "id": request.task_id,
            "root": layout.relative(resolved.task_root),
            "project_root": str(root),
            "project_id": resolved.project_id,
        },
        "profile": {
            "task_type": profile.task_type,
            "title": profile.title or profile.task_type,
            "summary": profile.summary,
            "body": profile.body.strip(),
        },
        "host": {"id": resolved.host.id, "entry_mode": resolved.entry_mode},
        "team": team_lines(resolved),
        "dynamic_roles": resolved.manifest.dynamic_roles,
        "brief": {"path": layout.brief, "text": resolved.brief_text.rstrip("\n")},
        "directive": request.directive,
        "related_tasks": request.related_tasks,
        "approved_plan": (
            {"path": layout.relative(approved.path), "stages": approved.stages}
            if approved
            else None
        ),
        "paths": layout.rel,
    }
    return render_template("lead.md.j2", context, environment.env)


def lead_prompt_meta(resolved: Resolved, layout: RunLayout, prompt: bytes) -> LeadPromptMeta:
    """`lead-prompt.meta.json`: who the prompt is for, and the digest of its bytes."""
    leader = resolved.manifest.leader
    return LeadPromptMeta(
        invocation_id=f"{layout.run_id}-lead",
        participant_ref=leader.participant_ref,
        role_execution_ref=leader.role_execution_ref,
        duty=leader.duty,
        attempt=1,
        prompt_sha256=hashlib.sha256(prompt).hexdigest(),
        prompt_path=layout.rel["leadPrompt"],
    )
