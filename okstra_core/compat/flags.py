"""The earlier okstra's prepare flags and `OKSTRA_DEFAULT_*` variables, read as requests.

Scripts written for the earlier okstra call `okstra prepare` with per-provider flags
(`--workers claude,codex --claude-model sonnet --lead-provider claude --executor codex
--critic off --lead-runtime terminal`, …). They become okstra's request flags
(`--role-count`, `--role-model`, `--host`, `--brief`) before the request is built, each
with a deprecation note naming the new form; an older flag deciding what a new flag given
alongside it decides is refused naming both (exit 2). The team flags are read by
`okstra_core.compat.team_flags`; docs/compatibility.md lists every flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OkstraError, UsageError
from .lookup import ENV_DEFAULTS, MODEL_PROVIDERS, variables_given
from .team_flags import FlagDecisions, flag_value, parse_legacy_flags

if TYPE_CHECKING:
    import argparse

    from ..catalog.loaders import Catalog
    from ..environment import Environment

# (flag, dest, the new form the note names)
LEGACY_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("--workers", "legacy_workers", "--role-count {cross}=N and --role-model {cross}=<model ref>"),
    ("--lead-provider", "legacy_lead_provider", "--role-model leader=<model ref>"),
    ("--lead-model", "legacy_lead_model", "--role-model leader=<model ref>"),
    *(
        (f"--{p}-model", f"legacy_{p}_model", "--role-model <role>=<model ref>")
        for p in MODEL_PROVIDERS
    ),
    ("--worker-model", "legacy_worker_model", "--role-model <role>=<model ref>"),
    ("--report-writer-provider", "legacy_rw_provider", "--role-model report-writer=<model ref>"),
    ("--report-writer-model", "legacy_rw_model", "--role-model report-writer=<model ref>"),
    ("--executor", "legacy_executor", "--role-model implementer=<model ref>"),
    ("--critic", "legacy_critic", "--role-count critic=0|1 and --role-model critic=<model ref>"),
    ("--lead-runtime", "legacy_lead_runtime", "--host <host>"),
    ("--task-brief", "legacy_task_brief", "--brief <file>"),
    ("--project-id", "legacy_project_id", "(nothing: the project id comes from the project)"),
    ("--task-key", "legacy_task_key", "(nothing: --task-group and --task-id name the task)"),
    ("--workspace-root", "legacy_workspace_root", "(nothing: set OKSTRA_WORKSPACE instead)"),
)
# Inputs of the earlier prepare that this okstra has no equivalent for: accepted empty
# (the earlier wizard's renderArgv always carried them), refused with a value.
UNSUPPORTED_FLAGS: tuple[tuple[str, str], ...] = (
    ("--analysis-target", "legacy_analysis_target"),
    ("--evidence-inputs", "legacy_evidence_inputs"),
    ("--stage", "legacy_stage"),
    ("--stages", "legacy_stages"),
    ("--clarification-response", "legacy_clarification_response"),
    ("--selected-direction", "legacy_selected_direction"),
    ("--pr-template-path", "legacy_pr_template_path"),
    ("--fix-cycle", "legacy_fix_cycle"),
    ("--work-category", "legacy_work_category"),
)
RENDER_ONLY = ("--render-only", "legacy_render_only")
# Of those, the ones the earlier wizard's renderArgs carried for an approved plan with
# stages (`stage`, `stages`): accepted with a value too, changing nothing (this okstra
# prepares the whole approved plan; the lead carries out its stages in order).
STAGE_FLAGS = frozenset({"--stage", "--stages"})


def add_legacy_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the earlier okstra's prepare flags to `parser`, hidden from `--help`."""
    import argparse  # only when a parser is built: the wizard imports this module too

    for flag, dest, *_ in (*LEGACY_FLAGS, *UNSUPPORTED_FLAGS):
        parser.add_argument(flag, dest=dest, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        RENDER_ONLY[0], dest=RENDER_ONLY[1], action="store_true", help=argparse.SUPPRESS
    )


def legacy_flags_given(ns: argparse.Namespace) -> list[str]:
    """The older flags present on `ns` (an empty value counts: it was given)."""
    flags = (*LEGACY_FLAGS, *UNSUPPORTED_FLAGS)
    given = [flag for flag, dest, *_ in flags if getattr(ns, dest, None) is not None]
    if getattr(ns, RENDER_ONLY[1], False):
        given.append(RENDER_ONLY[0])
    return given


def apply_legacy_inputs(ns: argparse.Namespace, environment: Environment) -> list[str]:
    """Rewrite the older flags and variables on `ns` into okstra's request flags and
    return the deprecation notes (the catalog is read only when something older is
    there). A `UsageError` for a conflict with a new flag (both named), an older value
    naming nothing known, or an unsupported input with a value."""
    env = environment.env
    given = legacy_flags_given(ns)
    variables = variables_given(env)
    notes: list[str] = []
    if variables and (getattr(ns, "role_counts", None) or getattr(ns, "role_models", None)):
        # The canonical flags decide the team: the variables are not applied with them,
        # as the earlier okstra's canonical path did not.
        notes += [
            f"okstra prepare: {variable} is not applied with --role-count/--role-model "
            "(those flags decide the team)"
            for variable in variables
        ]
        env = {k: v for k, v in env.items() if k not in variables}
        variables = []
    if not given and not variables:
        return notes
    for flag, dest in UNSUPPORTED_FLAGS:
        if flag in STAGE_FLAGS and flag_value(ns, dest):
            notes.append(
                f"okstra prepare: {flag} {flag_value(ns, dest)} is deprecated and changes "
                "nothing: this okstra prepares the whole approved plan, and the lead carries "
                "out its stages in order (the outcome's orchestration.chainStages)"
            )
        elif flag_value(ns, dest):
            raise UsageError(
                f"{flag} is not supported by this okstra (no such input: it prepares the "
                "whole approved plan, without evidence, clarification or PR-template inputs)",
                field=flag,
            )
    _simple_flags(ns, notes)
    if not flag_value(ns, "task_type"):
        return notes  # the request builder names the missing flags
    decided = _decide_team(ns, environment, env)
    if decided is None:
        return notes  # the request builder names the unknown task type
    counts = [f"{role}={n}" for role, n in decided.counts.items()]
    models = [f"{role}={ref}" for role, refs in decided.models.items() for ref in refs]
    ns.role_counts = [*(getattr(ns, "role_counts", None) or []), *counts]
    ns.role_models = [*(getattr(ns, "role_models", None) or []), *models]
    return notes + _team_notes(decided, given, variables) + decided.notes


def _decide_team(
    ns: argparse.Namespace, environment: Environment, env: Mapping[str, str]
) -> FlagDecisions | None:
    """What the older team flags and variables decide; None for an unknown task type."""
    # Loaded here, not at import: `okstra` registers these flags for every command, and
    # the catalog is only needed when older inputs are present.
    from ..catalog.loaders import load_catalog
    from ..defaults import load_scopes
    from ..pool import ModelPool

    catalog = load_catalog(environment)
    try:
        profile = catalog.profile(flag_value(ns, "task_type"))
    except OkstraError:
        return None
    root = Path(flag_value(ns, "project_root") or ".").expanduser()
    pool = ModelPool.from_catalog(catalog, environment)
    scopes = load_scopes(root if root.is_dir() else None, catalog, environment.env)
    return parse_legacy_flags(
        ns, env, profile, pool, scopes, _host_provider(ns, environment, catalog)
    )


def _host_provider(
    ns: argparse.Namespace, environment: Environment, catalog: Catalog
) -> str | None:
    """The native provider of the host `--host` names (or the detected host); None
    when it has none, or the host is unknown (the request builder names it)."""
    from ..catalog.loaders import detect_host

    host_id = flag_value(ns, "host")
    try:
        host = catalog.host(host_id) if host_id else detect_host(environment, catalog)
    except OkstraError:
        return None
    return host.native_provider


def _team_notes(decided: FlagDecisions, given: list[str], variables: list[str]) -> list[str]:
    """One deprecation note per older team flag and variable used, naming the new form."""
    notes: list[str] = []
    flags = [f for f, _dest, _form in LEGACY_FLAGS if f in given and f in _ROLE_FLAGS]
    for giver in (*flags, *variables):
        entries = decided.contrib.get(giver)
        if entries:
            notes.append(_deprecated(giver, " ".join(dict.fromkeys(entries))))
        elif giver in ENV_DEFAULTS:
            notes.append(
                f"okstra prepare: {giver} is deprecated and changed nothing here: "
                f"use {ENV_DEFAULTS[giver]}"
            )
        else:
            notes.append(
                f"okstra prepare: {giver} is deprecated and changed nothing here "
                "(no instance of that provider or role in the team)"
            )
    return notes


# Older flags that only say to do nothing, and those that decide the team.
_IGNORED_FLAGS = ("--project-id", "--task-key", "--workspace-root")
_ROLE_FLAGS = frozenset(
    flag
    for flag, _d, _f in LEGACY_FLAGS
    if flag not in ("--lead-runtime", "--task-brief", "--project-id", "--workspace-root")
)


def _deprecated(old: str, new: str) -> str:
    return f"okstra prepare: {old} is deprecated: use {new}"


# Older flags that are today's under another name: (old, its dest, new, its dest).
_RENAMED_FLAGS = (
    ("--lead-runtime", "legacy_lead_runtime", "--host", "host"),
    ("--task-brief", "legacy_task_brief", "--brief", "brief"),
)


def _simple_flags(ns: argparse.Namespace, notes: list[str]) -> None:
    """`--lead-runtime`, `--task-brief`, `--render-only` and the flags that do nothing."""
    for old, old_dest, new, new_dest in _RENAMED_FLAGS:
        value = flag_value(ns, old_dest)
        if not value:
            continue
        given = flag_value(ns, new_dest)
        if given and given != value:
            raise UsageError(f"{old} {value!r} and {new} {given!r} disagree: give {new}", field=old)
        setattr(ns, new_dest, value)
        notes.append(_deprecated(old, f"{new} {value}"))
    key = flag_value(ns, "legacy_task_key")
    named = f"{flag_value(ns, 'task_group')}/{flag_value(ns, 'task_id')}"
    if key and key != named:
        raise UsageError(
            f"--task-key {key!r} and --task-group/--task-id {named!r} disagree: give "
            "--task-group and --task-id",
            field="--task-key",
        )
    for flag, dest, form in LEGACY_FLAGS:
        if flag in _IGNORED_FLAGS and flag_value(ns, dest):
            notes.append(f"okstra prepare: {flag} is deprecated and ignored: {form[1:-1]}")
    if getattr(ns, RENDER_ONLY[1], False):
        launch = getattr(ns, "launch", "auto")
        if launch not in ("auto", "none"):
            raise UsageError(
                f"--render-only and --launch {launch} disagree: give --launch none",
                field="--render-only",
            )
        ns.launch = "none"
        notes.append(_deprecated("--render-only", "--launch none"))
