"""The lead's prompt (`lead-prompt.md`, `lead.md.j2` rendered with the run's facts) and
its meta document (`lead-prompt.meta.json`)."""

from __future__ import annotations

import hashlib

from ..documents import LeadPromptMeta
from ..environment import Environment
from .dispatch import dispatch_context
from .layout import RunLayout
from .render import render_template
from .resolve import Resolved

# The lead CLI's first message: the prompt file holds the instructions.
KICKOFF = "Begin the run described in your instructions."


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
        # The team, dynamic roles and the `okstra worker` commands that dispatch them.
        **dispatch_context(
            resolved.manifest,
            resolved.catalog,
            task_key=request.task_key,
            run_id=layout.run_id,
            run_dir=layout.relative(layout.run_dir),
            okstra=environment.okstra_command(),
            mcp=layout.mcp_tools,
        ),
        "brief": {"path": layout.brief, "text": resolved.brief_text.rstrip("\n")},
        "directive": request.directive,
        "related_tasks": request.related_tasks,
        "approved_plan": (
            {"path": layout.relative(approved.path), "stages": approved.stages}
            if approved
            else None
        ),
        "paths": layout.rel,
        "base": (
            {"ref": resolved.base.ref, "commit": resolved.base.commit} if resolved.base else None
        ),
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
        prompt_path=layout.relative(layout.paths.lead_prompt),
    )
