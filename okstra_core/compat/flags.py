"""The earlier okstra's prepare flags and `OKSTRA_DEFAULT_*` variables, read as requests.

Scripts written for the earlier okstra call `okstra prepare` with per-provider flags
(`--workers claude,codex --claude-model sonnet --lead-provider claude --executor codex
--critic off --lead-runtime terminal`, …) and set `OKSTRA_DEFAULT_LEAD_MODEL`,
`OKSTRA_DEFAULT_EXECUTOR`, …. This module turns them into okstra's request flags before
the request is built: `--role-count role=N`, `--role-model role=model_ref`, `--host`,
`--brief`. Every flag or variable used prints a deprecation note naming the new form
(with the values it became); an older flag that decides the same thing as a new flag
given alongside it is refused naming both (exit 2). Variables are defaults: a new flag
(or an older one) wins over them without a conflict.

The per-provider model values resolve like the wizard's v1 conversion: alias, model
id, full ref or CLI execution value, case-insensitively; an empty value is the
provider's default for the role (highest scope first). The first cross-verification
role (`analyser`, `designer`, `planner`, `verifier`, in profile order) is the earlier
"workers". docs/compatibility.md lists every flag.

Public API::

    LEGACY_FLAGS                      # (flag, dest, new form) of every older flag
    add_legacy_arguments(parser)      # hidden from --help
    legacy_flags_given(ns) -> list[str]
    apply_legacy_inputs(ns, environment) -> list[str]   # rewrites ns; returns notes
    legacy_model(pool, scopes, provider, role, value) -> PoolModel | None
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OkstraError, UsageError
from ..records import dataclass, field

if TYPE_CHECKING:
    import argparse

    from ..catalog.models import Profile, RoleRequirement
    from ..defaults import DefaultScopes
    from ..environment import Environment
    from ..pool import ModelPool, PoolModel

__all__ = [
    "CROSS_VERIFICATION_ROLES",
    "ENV_DEFAULTS",
    "LEGACY_FLAGS",
    "add_legacy_arguments",
    "apply_legacy_inputs",
    "default_candidates",
    "legacy_flags_given",
    "legacy_model",
    "provider_default",
]

# The first of these (in profile order) is what the earlier okstra called its workers.
CROSS_VERIFICATION_ROLES = frozenset({"analyser", "designer", "planner", "verifier"})
LEADER = "leader"
DEFAULT_PROVIDER = "claude"  # the earlier default for the lead, report writer and executor
_OFF = frozenset({"off", "none", "no"})
_MODEL_PROVIDERS = ("claude", "codex", "antigravity", "grok", "kimi")

# (flag, dest, the new form the note names)
LEGACY_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("--workers", "legacy_workers", "--role-count {cross}=N and --role-model {cross}=<model ref>"),
    ("--lead-provider", "legacy_lead_provider", "--role-model leader=<model ref>"),
    ("--lead-model", "legacy_lead_model", "--role-model leader=<model ref>"),
    *(
        (f"--{p}-model", f"legacy_{p}_model", "--role-model <role>=<model ref>")
        for p in _MODEL_PROVIDERS
    ),
    ("--worker-model", "legacy_worker_model", "--role-model <role>=<model ref>"),
    ("--report-writer-provider", "legacy_rw_provider", "--role-model report-writer=<model ref>"),
    ("--report-writer-model", "legacy_rw_model", "--role-model report-writer=<model ref>"),
    ("--executor", "legacy_executor", "--role-model implementer=<model ref>"),
    ("--critic", "legacy_critic", "--role-count critic=0|1 and --role-model critic=<model ref>"),
    ("--lead-runtime", "legacy_lead_runtime", "--host <host>"),
    ("--task-brief", "legacy_task_brief", "--brief <file>"),
    ("--project-id", "legacy_project_id", "(nothing: the project id comes from the project)"),
    ("--workspace-root", "legacy_workspace_root", "(nothing: set OKSTRA_WORKSPACE instead)"),
)
# Inputs of the earlier prepare that this okstra has no equivalent for: accepted empty
# (the earlier wizard's renderArgv always carried them), refused with a value.
UNSUPPORTED_FLAGS: tuple[tuple[str, str], ...] = (
    ("--analysis-target", "legacy_analysis_target"),
    ("--evidence-inputs", "legacy_evidence_inputs"),
    ("--stage", "legacy_stage"),
    ("--stages", "legacy_stages"),
    ("--base-ref", "legacy_base_ref"),
    ("--clarification-response", "legacy_clarification_response"),
    ("--selected-direction", "legacy_selected_direction"),
    ("--pr-template-path", "legacy_pr_template_path"),
    ("--fix-cycle", "legacy_fix_cycle"),
    ("--work-category", "legacy_work_category"),
)
RENDER_ONLY = ("--render-only", "legacy_render_only")

# OKSTRA_DEFAULT_* variables of the earlier okstra (all defaults; flags win).
ENV_DEFAULTS: dict[str, str] = {
    "OKSTRA_DEFAULT_LEAD_MODEL": "--role-model leader=claude/<model> (or modelDefaults.leader)",
    "OKSTRA_DEFAULT_REPORT_WRITER_MODEL": (
        "--role-model report-writer=claude/<model> (or modelDefaults.report-writer)"
    ),
    "OKSTRA_DEFAULT_EXECUTOR": (
        "--role-model implementer=<model ref> (or modelDefaults.implementer)"
    ),
    **{
        f"OKSTRA_DEFAULT_{p.upper()}_MODEL": f"--role-model <role>={p}/<model> (or modelDefaults)"
        for p in _MODEL_PROVIDERS
    },
}


def add_legacy_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the earlier okstra's prepare flags to `parser`, hidden from `--help`."""
    import argparse  # only when a parser is built: the wizard imports this module too

    for flag, dest, _ in LEGACY_FLAGS:
        parser.add_argument(flag, dest=dest, default=None, help=argparse.SUPPRESS)
    for flag, dest in UNSUPPORTED_FLAGS:
        parser.add_argument(flag, dest=dest, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        RENDER_ONLY[0], dest=RENDER_ONLY[1], action="store_true", help=argparse.SUPPRESS
    )


def legacy_flags_given(ns: argparse.Namespace) -> list[str]:
    """The older flags present on `ns` (an empty value counts: it was given)."""
    given = [flag for flag, dest, _ in LEGACY_FLAGS if getattr(ns, dest, None) is not None]
    given += [flag for flag, dest in UNSUPPORTED_FLAGS if getattr(ns, dest, None) is not None]
    if getattr(ns, RENDER_ONLY[1], False):
        given.append(RENDER_ONLY[0])
    return given


# ---- model look-up (shared with the wizard's conversion of earlier state files) -------


def default_candidates(
    pool: ModelPool, scopes: DefaultScopes, role: str
) -> list[tuple[PoolModel, str]]:
    """The role's default candidates (highest scope first) that serve it; [] on a bad ref."""
    try:
        return [(m, p) for m, p in scopes.candidates(role, pool) if role in m.roles]
    except UsageError:
        return []


def provider_default(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str
) -> PoolModel | None:
    """A provider's default model for a role: its highest-scope default, else its first."""
    for model, _provenance in default_candidates(pool, scopes, role):
        if model.provider_id == provider_id:
            return model
    return next((m for m in pool.list(role) if m.provider_id == provider_id), None)


def legacy_model(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str, value: str
) -> PoolModel | None:
    """Map an earlier (provider, model value) to a pool model for `role`, or None.

    A value may be an alias (`opus`), a model id (`opus-4.6`), a full ref
    (`claude/opus-4.6`) or the CLI execution value (`claude-opus-4-6`); an empty value is
    the provider's default for the role. None: unknown provider or model, or a model
    that does not serve the role.
    """
    provider_id = provider_id.strip().lower()
    if not provider_id:
        return None
    provider_models = [m for m in pool.models() if m.provider_id == provider_id]
    if not provider_models:
        return None
    if not value:
        return provider_default(pool, scopes, provider_id, role)
    model: PoolModel | None = None
    try:
        if "/" in value:
            candidate = pool.lookup(value)
            model = candidate if candidate.provider_id == provider_id else None
        else:
            model = pool.resolve_alias(provider_id, value)
    except UsageError:
        folded = value.casefold()
        model = next((m for m in provider_models if m.execution.casefold() == folded), None)
    if model is None or role not in model.roles:
        return None
    return model


# ---- normalising a prepare command line ----------------------------------------------


@dataclass
class _Plan:
    """What the older inputs decided: new flag values per role, and the notes."""

    counts: dict[str, int] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # role -> older flag/variable
    contrib: dict[str, list[str]] = field(default_factory=dict)  # flag/variable -> new form
    notes: list[str] = field(default_factory=list)

    def credit(self, entry: str, *givers: str) -> None:
        """Record that `entry` (a new-form flag) came from these older flags/variables."""
        for giver in dict.fromkeys(givers):
            if giver:
                self.contrib.setdefault(giver, []).append(entry)


def _value(ns: argparse.Namespace, dest: str) -> str:
    raw = getattr(ns, dest, None)
    return raw.strip() if isinstance(raw, str) else ""


def _roles_named(values: Sequence[str]) -> dict[str, str]:
    """role → the first `--role-…` value naming it (for conflict messages)."""
    out: dict[str, str] = {}
    for value in values:
        role = value.partition("=")[0].strip()
        if role:
            out.setdefault(role, value)
    return out


def _worker_models(ns: argparse.Namespace, env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """provider → (model value, where it came from): flags first, then the variables."""
    out: dict[str, tuple[str, str]] = {}
    for item in _value(ns, "legacy_worker_model").split(","):
        if not item.strip():
            continue
        provider, sep, model = item.partition("=")
        if not sep or not provider.strip() or not model.strip():
            raise UsageError(
                f"expected 'provider=model' items, got {item.strip()!r}", field="--worker-model"
            )
        key = provider.strip().lower()
        if key in out:
            raise UsageError(f"provider {key!r} is given twice", field="--worker-model")
        out[key] = (model.strip(), "--worker-model")
    for provider in _MODEL_PROVIDERS:
        value = _value(ns, f"legacy_{provider}_model")
        if value:
            if provider in out:
                raise UsageError(
                    f"--{provider}-model and --worker-model {provider}=… both set the "
                    f"{provider} model: give one",
                    field=f"--{provider}-model",
                )
            out[provider] = (value, f"--{provider}-model")
    for provider in _MODEL_PROVIDERS:
        variable = f"OKSTRA_DEFAULT_{provider.upper()}_MODEL"
        value = (env.get(variable) or "").strip()
        if value and provider not in out:
            out[provider] = (value, variable)
    return out


def _resolve(
    pool: ModelPool,
    scopes: DefaultScopes,
    provider: str,
    role: str,
    value: str,
    where: str,
) -> str:
    model = legacy_model(pool, scopes, provider, role, value)
    if model is None:
        what = f"model {value!r} of provider {provider!r}" if value else f"provider {provider!r}"
        raise UsageError(
            f"{what} has no model for the {role} role here: expected a provider id and a "
            f"model alias, id or ref that serves it (see `okstra models --role {role}`)",
            field=where,
        )
    return model.ref


def _require_role(profile: Profile, role: str, flag: str) -> RoleRequirement:
    requirement = profile.role(role)
    if requirement is None or requirement.dynamic:
        raise UsageError(
            f"the {profile.task_type} profile has no {role} role to give it to", field=flag
        )
    return requirement


def _workers(
    plan: _Plan,
    ns: argparse.Namespace,
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    models: Mapping[str, tuple[str, str]],
) -> None:
    """The earlier roster (`--workers`, or per-provider models alone) → the cross role.

    Without `--workers`, the role's default candidates (at its recommended count) are
    the roster, each taking its provider's model when one is given — as the earlier
    okstra ran its profile roster. In implementation the per-provider models belong to
    the executor and `--workers` only checked it: neither touches the verifiers.
    """
    cross = next((r for r in profile.static_roles if r.role in CROSS_VERIFICATION_ROLES), None)
    raw = getattr(ns, "legacy_workers", None)
    flags = sorted({where for _, where in models.values() if where.startswith("--")})
    if profile.task_type == "implementation":
        if raw is not None:
            plan.notes.append(
                "okstra prepare: --workers is ignored for implementation (the earlier okstra "
                "used it only to check the executor): give --role-count verifier=N and "
                "--role-model verifier=<model ref>"
            )
        return
    roster = [
        p.strip().lower()
        for p in (raw or "").split(",")
        if p.strip() and p.strip().lower() != "report-writer"
    ]
    if cross is None:
        if roster or flags:
            raise UsageError(
                f"the {profile.task_type} profile has no cross-verification role for workers",
                field="--workers" if roster else flags[0],
            )
        return
    if roster:
        count = max(cross.min, min(cross.max, len(roster)))
        providers, source = roster[:count], "--workers"
    else:
        count = cross.recommended_count
        candidates = default_candidates(pool, scopes, cross.role)[:count]
        providers = [model.provider_id for model, _ in candidates]
        if flags:
            source = flags[0]
        else:
            variables = sorted({models[p][1] for p in providers if p in models})
            if not variables:
                return  # variables for providers the team does not use: nothing to do
            source = variables[0]
    if cross.kind == "adjustable":
        plan.counts[cross.role] = count
        plan.credit(f"--role-count {cross.role}={count}", source)
    refs: list[str] = []
    for provider in providers:
        value, where = models.get(provider, ("", source))
        ref = _resolve(pool, scopes, provider, cross.role, value, where)
        refs.append(ref)
        plan.credit(f"--role-model {cross.role}={ref}", source, where)
    plan.models[cross.role] = refs
    plan.sources[cross.role] = source


def _first_given(ns: argparse.Namespace, *pairs: tuple[str, str]) -> str | None:
    return next((flag for flag, dest in pairs if getattr(ns, dest, None) is not None), None)


def _single(
    plan: _Plan,
    role: str,
    provider: str,
    value: str,
    where: str,
    pool: ModelPool,
    scopes: DefaultScopes,
    *givers: str,
) -> None:
    ref = _resolve(pool, scopes, provider, role, value, where)
    plan.models[role] = [ref]
    plan.sources[role] = where
    plan.credit(f"--role-model {role}={ref}", where, *givers)


def plan_legacy_inputs(
    ns: argparse.Namespace,
    env: Mapping[str, str],
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
) -> _Plan:
    """Decide what the older flags and variables on `ns` / in `env` ask for (no changes)."""
    plan = _Plan()
    entry_mode = _value(ns, "entry_mode") or "spawn-process"
    new_counts = _roles_named(getattr(ns, "role_counts", None) or ())
    new_models = _roles_named(getattr(ns, "role_models", None) or ())
    models = _worker_models(ns, env)
    _workers(plan, ns, profile, pool, scopes, models)

    # The lead: --lead-provider / --lead-model, or OKSTRA_DEFAULT_LEAD_MODEL for claude.
    lead_provider = _value(ns, "legacy_lead_provider").lower()
    lead_model = _value(ns, "legacy_lead_model")
    lead_flag = _first_given(
        ns, ("--lead-provider", "legacy_lead_provider"), ("--lead-model", "legacy_lead_model")
    )
    if lead_flag is not None and entry_mode == "current-session":
        raise UsageError(
            f"{lead_flag} contradicts --entry-mode current-session: the host session is the "
            "leader there",
            field=lead_flag,
        )
    provider = lead_provider or DEFAULT_PROVIDER
    env_lead = (env.get("OKSTRA_DEFAULT_LEAD_MODEL") or "").strip()
    if lead_flag is not None:
        from_env = not lead_model and provider == DEFAULT_PROVIDER and bool(env_lead)
        value = lead_model or (env_lead if from_env else "")
        givers: list[str] = [
            f for f in ("--lead-provider", "--lead-model") if f in _given_flags(ns)
        ]
        if from_env:
            givers.append("OKSTRA_DEFAULT_LEAD_MODEL")
        _single(plan, LEADER, provider, value, lead_flag, pool, scopes, *givers)
    elif env_lead and entry_mode == "spawn-process" and LEADER not in new_models:
        _single(plan, LEADER, DEFAULT_PROVIDER, env_lead, "OKSTRA_DEFAULT_LEAD_MODEL", pool, scopes)

    # The report writer.
    rw_flag = _first_given(
        ns,
        ("--report-writer-provider", "legacy_rw_provider"),
        ("--report-writer-model", "legacy_rw_model"),
    )
    rw_provider = _value(ns, "legacy_rw_provider").lower() or DEFAULT_PROVIDER
    env_rw = (env.get("OKSTRA_DEFAULT_REPORT_WRITER_MODEL") or "").strip()
    if rw_flag is not None:
        _require_role(profile, "report-writer", rw_flag)
        rw_model = _value(ns, "legacy_rw_model")
        from_env = not rw_model and rw_provider == DEFAULT_PROVIDER and bool(env_rw)
        value = rw_model or (env_rw if from_env else "")
        givers = [
            str(f)
            for f in ("--report-writer-provider", "--report-writer-model")
            if f in _given_flags(ns)
        ]
        if from_env:
            givers.append("OKSTRA_DEFAULT_REPORT_WRITER_MODEL")
        _single(plan, "report-writer", rw_provider, value, rw_flag, pool, scopes, *givers)
    elif env_rw and profile.role("report-writer") is not None and "report-writer" not in new_models:
        _single(
            plan,
            "report-writer",
            DEFAULT_PROVIDER,
            env_rw,
            "OKSTRA_DEFAULT_REPORT_WRITER_MODEL",
            pool,
            scopes,
        )

    # The executor.
    executor = _value(ns, "legacy_executor").lower()
    env_executor = (env.get("OKSTRA_DEFAULT_EXECUTOR") or "").strip().lower()
    if getattr(ns, "legacy_executor", None) is not None:
        _require_role(profile, "implementer", "--executor")
        provider = executor or env_executor or DEFAULT_PROVIDER
        value, where = models.get(provider, ("", "--executor"))
        by_env = "OKSTRA_DEFAULT_EXECUTOR" if not executor and env_executor else ""
        _single(plan, "implementer", provider, value, "--executor", pool, scopes, where, by_env)
    elif (
        env_executor and profile.role("implementer") is not None and "implementer" not in new_models
    ):
        value, where = models.get(env_executor, ("", ""))
        _single(
            plan, "implementer", env_executor, value, "OKSTRA_DEFAULT_EXECUTOR", pool, scopes, where
        )

    # The critic (optional): off/none/no → not added; a provider → one critic.
    if getattr(ns, "legacy_critic", None) is not None:
        critic = _value(ns, "legacy_critic").lower()
        if critic in _OFF:
            if profile.role("critic") is not None:
                plan.counts["critic"] = 0
                plan.sources["critic"] = "--critic"
                plan.credit("--role-count critic=0", "--critic")
        elif critic:
            _require_role(profile, "critic", "--critic")
            value, where = models.get(critic, ("", "--critic"))
            plan.counts["critic"] = 1
            plan.credit("--role-count critic=1", "--critic")
            _single(plan, "critic", critic, value, "--critic", pool, scopes, where)

    # Conflicts: an older flag and a new flag deciding the same role.
    for role, source in plan.sources.items():
        if not source.startswith("--"):
            continue
        clash = new_counts.get(role) if role in plan.counts else None
        flag = "--role-count"
        if clash is None and role in plan.models:
            clash, flag = new_models.get(role), "--role-model"
        if clash is None and role in plan.counts:
            clash, flag = new_models.get(role), "--role-model"
        if clash is not None:
            raise UsageError(
                f"{source} and {flag} {clash} both decide the {role} role: give one "
                f"(prefer {flag})",
                field=source,
            )
    # Variables lose to new flags silently (they are defaults).
    for role in list(plan.sources):
        if plan.sources[role].startswith("OKSTRA_") and (role in new_models or role in new_counts):
            plan.models.pop(role, None)
            plan.counts.pop(role, None)
            plan.sources.pop(role)
            for entries in plan.contrib.values():
                entries[:] = [e for e in entries if not e.split(" ", 1)[1].startswith(f"{role}=")]
    return plan


def _given_flags(ns: argparse.Namespace) -> set[str]:
    return set(legacy_flags_given(ns))


def apply_legacy_inputs(ns: argparse.Namespace, environment: Environment) -> list[str]:
    """Rewrite the older flags and variables on `ns` into okstra's request flags.

    Reads the catalog, pool and model defaults only when something older is present.
    Appends `--role-count` / `--role-model` values to `ns.role_counts` / `ns.role_models`
    and sets `ns.host`, `ns.brief`, `ns.launch` where an older flag says so.

    Returns:
        Deprecation notes (for stderr), one per older flag or variable used.

    Raises:
        UsageError: an older flag conflicting with a new one (both named), an older
            value that names nothing known, or an unsupported input with a value.
    """
    env = environment.env
    given = legacy_flags_given(ns)
    variables = [v for v in ENV_DEFAULTS if (env.get(v) or "").strip()]
    if not given and not variables:
        return []
    notes: list[str] = []
    for flag, dest in UNSUPPORTED_FLAGS:
        if _value(ns, dest):
            raise UsageError(
                f"{flag} is not supported by this okstra (no such input: it prepares the "
                "whole approved plan, without evidence, clarification or PR-template inputs)",
                field=flag,
            )
    _simple_flags(ns, notes)
    if not _value(ns, "task_type"):
        return notes  # the request builder names the missing flags
    # Loaded here, not at import: `okstra` registers these flags for every command, and
    # the catalog is only needed when older inputs are present.
    from ..catalog.loaders import load_catalog
    from ..defaults import load_scopes
    from ..pool import ModelPool

    catalog = load_catalog(environment)
    try:
        profile = catalog.profile(_value(ns, "task_type"))
    except OkstraError:
        return notes  # the request builder names the unknown task type
    root = Path(_value(ns, "project_root") or ".").expanduser()
    pool = ModelPool.from_catalog(catalog, environment)
    scopes = load_scopes(root if root.is_dir() else None, catalog)
    plan = plan_legacy_inputs(ns, env, profile, pool, scopes)
    counts = [f"{role}={n}" for role, n in plan.counts.items()]
    models = [f"{role}={ref}" for role, refs in plan.models.items() for ref in refs]
    ns.role_counts = [*(getattr(ns, "role_counts", None) or []), *counts]
    ns.role_models = [*(getattr(ns, "role_models", None) or []), *models]
    for flag, _dest, _form in LEGACY_FLAGS:
        if flag not in given or flag not in _ROLE_FLAGS:
            continue
        entries = plan.contrib.get(flag)
        if entries:
            notes.append(_deprecated(flag, " ".join(dict.fromkeys(entries))))
        else:
            notes.append(
                f"okstra prepare: {flag} is deprecated and changed nothing here "
                "(no instance of that provider or role in the team)"
            )
    for variable in variables:
        entries = plan.contrib.get(variable)
        if entries:
            new_form = " ".join(dict.fromkeys(entries))
            notes.append(f"okstra prepare: {variable} is deprecated: use {new_form}")
        else:
            notes.append(
                f"okstra prepare: {variable} is deprecated and changed nothing here: "
                f"use {ENV_DEFAULTS[variable]}"
            )
    return notes + plan.notes


_ROLE_FLAGS = frozenset(
    flag
    for flag, _d, _f in LEGACY_FLAGS
    if flag not in ("--lead-runtime", "--task-brief", "--project-id", "--workspace-root")
)


def _deprecated(old: str, new: str) -> str:
    return f"okstra prepare: {old} is deprecated: use {new}"


def _simple_flags(ns: argparse.Namespace, notes: list[str]) -> None:
    """`--lead-runtime`, `--task-brief`, `--render-only` and the flags that do nothing."""
    runtime = getattr(ns, "legacy_lead_runtime", None)
    if runtime is not None and runtime.strip():
        host = _value(ns, "host")
        if host and host != runtime.strip():
            raise UsageError(
                f"--lead-runtime {runtime.strip()!r} and --host {host!r} disagree: give --host",
                field="--lead-runtime",
            )
        ns.host = runtime.strip()
        notes.append(_deprecated("--lead-runtime", f"--host {runtime.strip()}"))
    brief = getattr(ns, "legacy_task_brief", None)
    if brief is not None and brief.strip():
        given = _value(ns, "brief")
        if given and given != brief.strip():
            raise UsageError(
                f"--task-brief {brief.strip()!r} and --brief {given!r} disagree: give --brief",
                field="--task-brief",
            )
        ns.brief = brief.strip()
        notes.append(_deprecated("--task-brief", f"--brief {brief.strip()}"))
    for flag, dest in (
        ("--project-id", "legacy_project_id"),
        ("--workspace-root", "legacy_workspace_root"),
    ):
        if _value(ns, dest):
            form = next(f for fl, _d, f in LEGACY_FLAGS if fl == flag)
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
