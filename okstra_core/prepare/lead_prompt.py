"""The lead's prompt (`lead-prompt.md`, `lead.md.j2` rendered with the run's facts), its
meta document (`lead-prompt.meta.json`), and where one run's files go (`RunLayout`).

Every template (a workspace may replace any) renders sandboxed and bounded
(`template_bounds`, jinja2 loaded only then); whatever goes wrong inside one is a
`DataFileError` naming the template (exit 2), and nothing is written.

A worker (`cli-wrapper`) is started through okstra: the prompt gives its exact `okstra
worker start|wait|result` commands and its task file under the run's `workers/`.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..catalog.loaders import Catalog
from ..catalog.models import LEADER
from ..documents.run import LeadPromptMeta, RoleExecution
from ..environment import Environment
from ..errors import DataFileError
from ..paths import resource, user_dirs
from ..records import config, dataclass, fields_of
from ..store import decode_utf8, read_bytes
from .manifest import ExecutionManifest
from .resolve import Resolved

# The lead CLI's first message: the prompt file holds the instructions.
KICKOFF = "Begin the run described in your instructions."
# How much of an error a template raised is quoted (a template chooses its message).
_SAID = 300

WORKERS_DIR = "workers"
# Where a lead with okstra's MCP tools writes the final report's data (in the project).
FINAL_REPORT = "final-report-{run_id}.json"
# The longest a `wait` blocks: agents' shell tools cut longer commands (124: wait again).
WAIT_SLICE_SECONDS = 540


def task_file(run_dir: str, name: str) -> str:
    """Where the lead writes a worker's task (`<run dir>/workers/<name>.task.md`)."""
    return f"{run_dir}/{WORKERS_DIR}/{name}.task.md"


def _dispatch(r: RoleExecution, catalog: Catalog) -> tuple[str, str | None]:
    """(how the lead runs role execution `r`, why okstra cannot start it or None)."""
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
    provider = catalog.provider(r.provider)
    refusal = provider.worker_refusal()
    if refusal is not None:
        return f"okstra cannot start it ({refusal})", refusal
    return f"an okstra worker, a one-shot `{provider.cli}` run", None


def team_context(
    manifest: ExecutionManifest, catalog: Catalog, *, run: str, run_dir: str, okstra: str = "okstra"
) -> list[dict[str, Any]]:
    """One row per role execution, leader first: who it is and how the lead runs it."""
    access = {p.participant_ref: p.worker_write_capability for p in manifest.participants}
    rows = []
    for r in manifest.role_executions:
        how, refusal = _dispatch(r, catalog)
        worker = None
        if r.role != LEADER and r.binding.runner == "cli-wrapper" and refusal is None:
            prompt_file = task_file(run_dir, r.role_execution_ref)
            named = f"{shlex.quote(run)} {shlex.quote(r.role_execution_ref)}"
            worker = {
                "task_file": prompt_file,
                "start": f"{okstra} worker start {named} --prompt-file {shlex.quote(prompt_file)}",
                "wait": f"{okstra} worker wait {named} --timeout {WAIT_SLICE_SECONDS}",
                "result": f"{okstra} worker result {named}",
            }
        rows.append(
            {
                "ref": r.role_execution_ref,
                "participant": r.participant_ref,
                "label": r.execution_label,
                **fields_of(r, "role ordinal duty provider model_ref"),
                "display": r.display_name,
                "runner": r.binding.runner,
                "access": access.get(r.participant_ref) or "read-only",
                "dispatch": how,
                "worker": worker,
                "refusal": refusal,
            }
        )
    return rows


def dynamic_context(
    manifest: ExecutionManifest, catalog: Catalog, *, run: str, run_dir: str, okstra: str = "okstra"
) -> list[dict[str, Any]]:
    """One row per dynamic role: its duty, access, the model refs that can run it as a
    worker (a demo provider's only to a team with a demo member) and its start command."""
    disabled = set(catalog.config.disabled_providers)
    in_team = {r.provider for r in manifest.role_executions}
    disabled.update(p.id for p in catalog.providers if p.demo and p.id not in in_team)
    rows = []
    for d in manifest.dynamic_roles:
        models = [
            f"{p.id}/{m.id}"
            for p in catalog.providers
            if p.id not in disabled and d.role in p.roles and p.worker_refusal() is None
            for m in p.models
            if not m.roles or d.role in m.roles
        ]
        prompt_file = task_file(run_dir, f"{d.role}-<n>")
        start = (
            f"{okstra} worker start {shlex.quote(run)} --role {shlex.quote(d.role)} "
            f"--model <model ref> --prompt-file {prompt_file}"
        )
        rows.append(
            {
                **fields_of(d, "role duty"),
                "access": d.worker_write_capability or "read-only",
                "models": models,
                "start": start,
            }
        )
    return rows


def dispatch_context(
    manifest: ExecutionManifest,
    catalog: Catalog,
    *,
    task_key: str,
    run_id: str,
    run_dir: str,
    okstra: str = "okstra",
    mcp: bool = False,
) -> Mapping[str, Any]:
    """The lead prompt's `team`, `dynamic_roles` and `workers` values."""
    run = f"{task_key}/{run_id}"  # as every `okstra worker` command names it
    team = team_context(manifest, catalog, run=run, run_dir=run_dir, okstra=okstra)
    dynamic = dynamic_context(manifest, catalog, run=run, run_dir=run_dir, okstra=okstra)
    quoted = shlex.quote(run)
    return {
        "team": team,
        "dynamic_roles": dynamic,
        "workers": {
            "any": any(m["worker"] for m in team) or bool(dynamic),
            "run": run,
            "dir": f"{run_dir}/{WORKERS_DIR}",
            "status": f"{okstra} worker status {quoted}",
            "again": f"{okstra} worker start {quoted} <ref> --again --prompt-file <file>",
            "stop": f"{okstra} worker stop {quoted} <ref>",
            "send": f"{okstra} worker send {quoted} <ref> --prompt-file <file>",
            "diff": f"{okstra} worker diff {quoted} <ref> --stat",
            "merge": f"{okstra} worker merge {quoted} <ref>",
            "writers": any(m["worker"] and m["access"] == "workspace-write" for m in team)
            or any(d["access"] == "workspace-write" for d in dynamic),
            "finalize": f"{okstra} report finalize {quoted} --data <report.json>",
            "check": f"{okstra} report check {quoted} <report.json>",
            "wait_slice": WAIT_SLICE_SECONDS,
            "okstra": okstra,
            "mcp": mcp,
            "report_file": FINAL_REPORT.format(run_id=run_id),
        },
    }


@dataclass(frozen=True, kw_only=True)
class RunPaths:
    """Each file of one run and where it goes (camelCase in the documents' `paths`)."""

    __pydantic_config__ = config(camel_case=True)

    run_inputs: Path
    run_manifest: Path
    lead_prompt: Path
    lead_prompt_meta: Path
    resume: Path
    resume_script: Path
    task_manifest: Path
    task_index: Path
    timeline: Path


@dataclass(frozen=True, kw_only=True)
class RunLayout:
    """Where one run's files go, and the facts every document of the run shares.

    `rel` is `paths` relative to the project, by camelCase name; `now` is ISO 8601 to the
    second; `mcp_tools`: the lead's CLI is given okstra's MCP server of the run.
    """

    run_id: str
    seq: int
    run_dir: Path
    project_root: Path
    now: str
    session_id: str | None
    paths: RunPaths
    rel: dict[str, str]
    brief: str
    mcp_tools: bool = False

    def relative(self, path: Path) -> str:
        """`path` as the run's documents write it (see `relative`)."""
        return relative(path, self.project_root)

    @property
    def run_manifest(self) -> str:
        """The run manifest, as the run's documents write it."""
        return self.relative(self.paths.run_manifest)


def relative(path: Path, root: Path) -> str:
    """`path` relative to the project `root` (POSIX spelling), else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def render_template(name: str, context: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Render `prompts/templates/<name>` sandboxed and bounded (StrictUndefined, no
    autoescaping); any failure is a DataFileError naming the template file."""
    import jinja2  # deferred: only prepare renders (keeps `okstra wizard step` lean)

    from . import template_bounds

    path = resource(f"templates/{name}", env)
    # A regular UTF-8 file only (never a FIFO or device), size-capped.
    source = decode_utf8(
        read_bytes(path, what="template", error=DataFileError), path, error=DataFileError
    )
    environment = template_bounds.environment(name, path, source, user_dirs(env).cache)
    try:
        with template_bounds.bounded(template_bounds.Budget(context)):
            template = environment.get_template(name)
            return template_bounds.render_bounded(template, context)
    except jinja2.TemplateSyntaxError as exc:
        raise DataFileError(
            f"template syntax error: {exc.message}", path=path, field=f"line {exc.lineno}"
        ) from None
    except jinja2.UndefinedError as exc:
        raise DataFileError(f"template uses an undefined value: {exc.message}", path=path) from None
    except jinja2.exceptions.SecurityError as exc:
        raise DataFileError(f"template refused by the sandbox: {exc}", path=path) from None
    except template_bounds.BoundExceeded as exc:
        raise DataFileError(str(exc), path=path) from None
    except RecursionError:
        raise DataFileError(
            "template recursed too deeply (a macro calling itself?)", path=path
        ) from None
    except MemoryError:
        raise DataFileError("template ran out of memory", path=path) from None
    except Exception as exc:  # the template's own code raised: its error, not okstra's
        said = str(exc)
        said = said if len(said) <= _SAID else said[: _SAID - 1] + "…"
        raise DataFileError(f"template failed: {type(exc).__name__}: {said}", path=path) from None


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
