"""`okstra models` (every model and its availability, with the reason) and `okstra team`
(a team resolved without the wizard, or exit 1 with every failing candidate).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..environment import Environment
from ..errors import UsageError
from ..records import fields_of
from ..vocabulary import ENTRY_MODES
from . import TABLE_JSON, _human, add_command, json_flag

if TYPE_CHECKING:
    import argparse

    from ..catalog import Catalog
    from ..catalog.models import EntryMode, HostSpec


# `--host`, `--entry-mode` and `--project-root` of both commands.
_COMMON = (
    ("--host", dict(metavar="ID",
                    help="host runtime: claude-code, codex or terminal (default: detected)")),
    ("--entry-mode", dict(default=None, metavar="MODE", help="spawn-process (default): okstra "
                          "starts the lead; current-session: this host session is the lead")),
    ("--project-root", dict(default=None, metavar="DIR", help="project directory, for its "
                            "defaults (default: the current directory)")),
)  # fmt: skip


def register(sub: Any) -> None:
    """Add `okstra models` and `okstra team` to the top-level parser."""
    models = add_command(
        sub, "models", "the model pool with availability and reasons (a table; --json for JSON)",
        "okstra models                    every model, and what it can run",
        "okstra models --role analyser    which models can be an analyser, and why not",
        "okstra models --json | jq '.models[] | select(.available) | .modelRef'",
        description="List every model of the provider registry with its availability.",
        args=(*_COMMON, ("--role", dict(metavar="ROLE", help="availability for this role "
                                        "(default: any role)"))),
    )  # fmt: skip
    json_flag(models, _models, _human.render_models, TABLE_JSON)
    team = add_command(
        sub, "team", "resolve a team without the wizard, or explain why none exists",
        "okstra team --task-type implementation-planning",
        "okstra team --task-type requirements-discovery --role-count analyser=3",
        "okstra team --task-type implementation-planning --json",
        "okstra team --task-type implementation-planning --role-model planner=codex/gpt-5.6-sol",
        description="Resolve every role instance of a task type to a model binding.",
        args=(
            ("--task-type", dict(required=True, metavar="TYPE", help="the phase, e.g. "
                                 "requirements-discovery or implementation-planning")),
            ("--role-count", dict(action="append", default=[], metavar="ROLE=N",
                                  help="how many instances of a role (repeatable)")),
            ("--role-model", dict(action="append", default=[], metavar="ROLE=MODEL",
                                  help="repeatable; a role given again is its next instance; "
                                  "MODEL is a ref or provider/alias")),
            *_COMMON,
            ("--host-session-context-json", dict(default="", help="the host session context "
                                                 "(it decides host, entry mode and the "
                                                 "session's model)")),
        ),
    )  # fmt: skip
    json_flag(team, _team, _human.render_team, TABLE_JSON)


def _context(ns: argparse.Namespace) -> tuple[Environment, Catalog, HostSpec, EntryMode, Path]:
    from ..catalog import detect_host, load_catalog
    from ..resolver import check_entry_mode
    from .roleargs import context_of

    environment = Environment.real()
    catalog = load_catalog(environment)
    if ns.entry_mode is not None and ns.entry_mode not in ENTRY_MODES:
        raise UsageError(
            f"--entry-mode {ns.entry_mode!r}: expected one of {', '.join(ENTRY_MODES)}"
        )
    # The host session context (when given) decides host and entry mode, as in prepare.
    session = context_of(ns, environment)
    host = catalog.host(session.host_id) if session.host_id else detect_host(environment, catalog)
    entry_mode: EntryMode = session.entry_mode
    check_entry_mode(host, entry_mode)
    from ..discovery import default_project_root

    root = Path(ns.project_root) if ns.project_root else default_project_root(Path.cwd())
    if not root.is_dir():
        raise UsageError(f"--project-root {str(root)!r}: not a directory")
    return environment, catalog, host, entry_mode, root.resolve()


def _models(ns: argparse.Namespace) -> tuple[_human.ModelsReply, int]:
    from ..pool import ModelPool

    environment, catalog, host, entry_mode, _ = _context(ns)
    pool = ModelPool.from_catalog(catalog, environment)
    role: str | None = ns.role
    if role is not None:
        known = set(pool.roles())
        for profile in catalog.profiles.values():
            known.update(r.role for r in profile.roles)
        if role not in known:
            raise UsageError(f"--role {role!r}: unknown role (known: {', '.join(sorted(known))})")
    rows: list[_human.ModelRow] = []
    for model in pool.models():
        usable_for: list[str] = []
        reasons: list[str] = []
        for candidate in (role,) if role is not None else model.roles:
            verdict = pool.availability(model.ref, candidate, host, entry_mode)
            if verdict.available:
                usable_for.append(candidate)
            elif verdict.reason and verdict.reason not in reasons:
                reasons.append(verdict.reason)
        available = bool(usable_for)
        reason = None if available else "; ".join(reasons) or f"model {model.ref} supports no role"
        rows.append(
            _human.ModelRow(
                **fields_of(model, "display execution"),
                model_ref=model.ref,
                provider=model.provider_id,
                aliases=tuple(model.aliases),
                roles=tuple(model.roles),
                available_for=tuple(usable_for),
                available=available,
                reason=reason,
            )
        )
    reply = _human.ModelsReply(
        host=host.id,
        entry_mode=entry_mode,
        role=role,
        availability_for=f"role {role}" if role else "any role the model supports",
        models=tuple(rows),
    )
    return reply, 0


def _team(ns: argparse.Namespace) -> tuple[_human.TeamReply | _human.TeamRefused, int]:
    from ..defaults import fallback_notes, load_scopes
    from ..errors import AssignmentResolutionError
    from ..pool import ModelPool
    from ..request import UNREPORTED_MODEL
    from ..resolver import resolve_assignments
    from ..vocabulary import CLI_WRAPPER
    from .roleargs import host_context, parse_role_counts, parse_role_models

    environment, catalog, host, entry_mode, root = _context(ns)
    profile = catalog.profile(ns.task_type)
    pool = ModelPool.from_catalog(catalog, environment)
    counts = parse_role_counts(ns.role_count, profile)
    role_models = parse_role_models(ns.role_model, profile, pool)
    scopes = load_scopes(root, catalog, environment.env)
    for note in scopes.notes:
        print(f"okstra team: {note}", file=sys.stderr, flush=True)
    session = host_context(
        environment,
        pool,
        host=host.id,
        entry_mode=entry_mode,
        context_json=ns.host_session_context_json or "",
    )
    try:
        plan = resolve_assignments(
            profile,
            counts,
            role_models,
            scopes,
            pool,
            host,
            entry_mode,
            current_session_model=session.model_ref,
        )
    except AssignmentResolutionError as exc:
        refused = _human.TeamRefused(error=exc.to_json(), host=host.id, entry_mode=entry_mode)
        return refused, exc.exit_code
    # A current-session leader whose model the host did not report: unknown, not invented.
    unknown = entry_mode == "current-session" and session.model_ref is None
    team = []
    for a in plan.assignments:
        unreported = unknown and a.binding.runner == "current-session"
        team.append(
            _human.TeamRow(
                **fields_of(a, "role ordinal duty execution provenance"),
                **fields_of(a.binding, "runner host_model_value"),
                provider=a.provider_id,
                model_ref=None if unreported else a.model_ref,
                model_id=None if unreported else a.model_id,
                display=UNREPORTED_MODEL if unreported else a.display_name,
            )
        )
    dynamic = tuple(
        _human.DynamicRow(**fields_of(r, "role duty description")) for r in plan.dynamic_roles
    )
    reply = _human.TeamReply(
        task_type=profile.task_type,
        host=host.id,
        entry_mode=entry_mode,
        team=tuple(team),
        dynamic_roles=dynamic,
        # The CLIs okstra spawns whose login okstra cannot tell: chosen all the same.
        notes=(
            *pool.login_notes(
                a.provider_id for a in plan.assignments if a.binding.runner == CLI_WRAPPER
            ),
            # A report writer claude cannot run here: the default rules picked another.
            *fallback_notes(plan.assignments, pool, host, entry_mode),
        ),
    )
    return reply, 0
