"""`okstra worker start`: start one worker of a run, record it, return at once.

Crash safety: the plan, the CLI's readiness and the surface are decided first (a
refusal changes nothing, not even a lock file); then under the run's lock (re-planned
only if the manifest's bytes changed) the worker's directory is written, its supervisor
started and the start recorded. Killed before the record, the supervisor records the
start itself (`launch.json` carries any new role execution); killed before the
supervisor, the worker stays `prepared`.

`okstra worker send`: a follow-up turn of an ended worker's own conversation. `[launch]
worker_resume` continues the start's session, where the worker ran, prompt on stdin. The
ended turn's files move to `turn-<n>/`, so `wait`, `result` and `status` speak of the
latest turn; each turn is recorded on the role execution and the timeline.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...catalog import Catalog, load_catalog
from ...catalog.argv import placeholders_in
from ...documents.run import RunManifest
from ...documents.worker import WorkerLaunch
from ...environment import Environment
from ...errors import UsageError
from ...launch import mint_session_id, worker_argv
from ...processes.process import Identity, as_pid
from ...readiness import cli_readiness
from ...records import config, dataclass, fields_of
from ...runbase import merged_result
from ...store import atomic_write_bytes, dumps_json
from ...trust import require_trusted
from .. import worktrees
from . import files
from .observe import observe_team
from .plan import StartPlan, StartRequest, plan_follow_up, plan_start
from .record import read_manifest_bytes, record_next_turn, record_started, run_lock
from .supervise import Surface, choose_surface, start_background, start_tmux
from .team import WHO_ARG, Member, members

# Given to `{kickoff}` in a worker template: the task itself comes on standard input.
KICKOFF = "Do the task given on standard input."
_STALE = (
    *(files.EXIT, files.OUTPUT, files.STDOUT, files.EVENTS, files.RESULT, files.ENV),
    "supervisor.log",
)


@dataclass(frozen=True, kw_only=True)
class Started:
    """What `okstra worker start` did (its JSON document)."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool = True
    run_id: str
    run_dir: str
    role_execution_ref: str
    participant_ref: str
    label: str
    role: str
    model_ref: str | None
    surface: str
    argv: tuple[str, ...]
    session_id: str | None
    supervisor_pid: int
    pane_ref: str | None = None
    window_ref: str | None = None
    tmux_socket: str | None = None
    worker_dir: str
    output_log: str
    result_file: str | None
    source_role_execution_ref: str | None = None
    worktree_path: str | None = None
    branch: str | None = None
    base_commit: str | None = None
    tree_note: str | None = None
    turn: int = 1
    wait_command: str
    result_command: str
    notes: tuple[str, ...] = ()


def _leader(team: list[Member]) -> Member:
    return next(m for m in team if m.leader)


def _argv(
    plan: StartPlan, directory: Path, root: Path, prompt: str, environment: Environment
) -> tuple[tuple[str, ...], str | None, bool]:
    """(argv, session id, whether the template names a result file)."""
    launch = plan.provider.launch
    template = launch.worker or ()
    used = placeholders_in(template) | placeholders_in(
        (*launch.access.read_only, *launch.access.write)
    )
    session_id = None
    if "session_id" in used and launch.session_id != "discover":
        session_id = mint_session_id(launch.session_id, environment)
    values = {"session_id": session_id} if session_id is not None else {}
    if "prompt" in used:
        values["prompt"] = prompt
    argv = _plan_argv(plan, directory, str(root), environment, values)
    return argv, session_id, "result_file" in used


def _plan_argv(
    plan: StartPlan,
    directory: Path,
    root: str,
    environment: Environment,
    values: dict[str, str],
    follow_up: bool = False,
) -> tuple[str, ...]:
    """The worker argv of `plan`, its template given the worker's files and `values`."""
    values = {
        "cli": plan.cli,
        "prompt_file": str(directory / files.PROMPT),
        "result_file": str(directory / files.RESULT),
        "project_root": root,
        "kickoff": KICKOFF,
    } | values
    return worker_argv(
        plan.provider,
        model=plan.model_value,
        writes=plan.writes,
        values=values,
        env=environment.env,
        follow_up=follow_up,
    )


def _project_root(manifest: RunManifest) -> Path:
    root = Path(manifest.project_root)
    if not root.is_absolute() or not root.is_dir():
        raise UsageError(f"the run's project root {manifest.project_root!r} is not a directory")
    return root


def _write_files(
    directory: Path, launch: WorkerLaunch, prompt: str, env: dict[str, str] | None
) -> None:
    for name in _STALE:
        (directory / name).unlink(missing_ok=True)
    atomic_write_bytes(directory / files.PROMPT, prompt.encode("utf-8"))
    if env is not None:
        atomic_write_bytes(directory / files.ENV, dumps_json(env))
    atomic_write_bytes(directory / files.LAUNCH, launch.to_bytes())


def _writer_tree(
    manifest: RunManifest, plan: StartPlan, root: Path, config_dir: str | None, env: Any
) -> tuple[worktrees.Checkout | None, str | None]:
    """A writer's own worktree (made now), or why it runs in the project's tree."""
    if not plan.writes:
        return None, None
    if plan.shared_tree:
        return None, "runs in the project's own tree (--shared-tree)"
    tree = worktrees.project_tree(root, env)
    if tree is None:
        return None, "runs in the project's own tree: the project is not a git checkout"
    if tree.head is None:
        return None, "runs in the project's own tree: the project's repository has no commit yet"
    member = plan.member
    branch = worktrees.branch_name(
        manifest.task_group, manifest.task_id, manifest.run_id, member.role, member.ordinal
    )
    where = worktrees.worktrees_root(config_dir, env)
    path = worktrees.worktree_path(where, manifest.project_id, branch)
    base = _base_commit(manifest, tree, env)
    return worktrees.make(tree, path, branch, base, env, checkout=False), None


def _base_commit(manifest: RunManifest, tree: worktrees.Tree, env: Any) -> str:
    """Where a writer branches from: the project's commit, or the run's own base
    (`--base-ref`) moved on to its merged result, so a later writer builds on it."""
    if manifest.base_commit is None:
        assert tree.head is not None  # checked by the caller
        return tree.head
    return merged_result(manifest, tree, env) or manifest.base_commit


def _launch(
    run_dir: Path,
    manifest: RunManifest,
    plan: StartPlan,
    prompt: str,
    surface: Surface,
    server: Any,
    environment: Environment,
) -> Started:
    member = plan.member
    root = _project_root(manifest)
    checkout, note = _writer_tree(manifest, plan, root, plan.worktrees_dir, environment.env)
    cwd = checkout.cwd if checkout is not None else root
    directory = files.make_worker_dir(run_dir, member.ref)
    argv, session_id, names_result = _argv(plan, directory, cwd, prompt, environment)
    launch = launch_record(
        run_dir,
        plan,
        environment,
        argv=argv,
        cwd=str(cwd),
        surface=surface,
        result_file=files.RESULT if names_result else None,
        session_id=session_id,
        added=plan.added,
        worktree=str(checkout.path) if checkout is not None else None,
        branch=checkout.branch if checkout is not None else None,
        base_commit=checkout.base if checkout is not None else None,
        tree_note=note,
        session_pattern=plan.provider.launch.worker_session_pattern,
        checkout_pending=checkout is not None,
    )
    try:
        return launch_worker(run_dir, manifest, plan, launch, prompt, server, environment)
    except BaseException:
        if checkout is not None:  # nothing ran in it: leave no worktree or branch behind
            worktrees.discard(Path(manifest.project_root), checkout.path, checkout.branch)
        raise


def launch_record(
    run_dir: Path, plan: StartPlan, environment: Environment, **fields: Any
) -> WorkerLaunch:
    """The `launch.json` of a start or a follow-up turn: the member's, the team settings'
    and the time's fields, and the given ones."""
    member, usage, settings = plan.member, plan.provider.usage, plan.team
    return WorkerLaunch(
        run_dir=str(run_dir),
        role_execution_ref=member.ref,
        **fields_of(member, "participant_ref label role provider model_ref"),
        env={},
        started_at=environment.now().isoformat(timespec="seconds"),
        log_limit=settings.log_limit_mib * 1024 * 1024,
        keep_pane=settings.keep_ended_panes,
        usage_format=usage.format if usage is not None else None,
        **fields,
    )


def launch_worker(
    run_dir: Path,
    manifest: RunManifest,
    plan: StartPlan,
    launch: WorkerLaunch,
    prompt: str,
    server: Any,
    environment: Environment,
) -> Started:
    """Write the worker's files, start its supervisor, record it (a start or a turn)."""
    member, now, cwd = plan.member, launch.started_at, Path(launch.cwd)
    if launch.checkout_pending and launch.worktree is not None:
        cwd = Path(launch.worktree)  # its files (and subdirectories) come with the checkout
    directory = files.worker_dir(run_dir, member.ref)
    # The worker runs with okstra's own command directory first on its PATH.
    env = environment.okstra_first_env()
    _write_files(directory, launch, prompt, env if launch.surface == "tmux" else None)
    log = f"{files.WORKERS_DIR}/{member.ref}/{files.OUTPUT}"
    changes: dict[str, Any] = {
        "launch_backend": launch.surface,
        "launched_at": now,
        "session_ref": launch.session_id,
        "output_log": log,
    }
    pane = None
    if launch.surface == "tmux":
        team = members(manifest)
        pane = start_tmux(
            server,
            team,
            _leader(team),
            directory=directory,
            cwd=cwd,
            window_name=f"{manifest.task_id}-{manifest.run_id}",
            environment=environment,
            per_window=plan.team.panes_per_window,
        )
        supervisor = Identity.now(pane.pid) or Identity(pane.pid, "0")
        changes.update(pane_ref=pane.pane_id, window_ref=pane.window_ref, tmux_socket=pane.socket)
    else:
        supervisor = start_background(directory, cwd, env)
    changes.update(parent_process_id=supervisor.pid, parent_start=supervisor.start)
    record_started(run_dir, launch, changes, now=now, source_ref=plan.source_ref, locked=True)
    okstra, quoted = environment.okstra_command(), shlex.quote(str(run_dir))
    return Started(
        run_id=manifest.run_id,
        run_dir=str(run_dir),
        **fields_of(launch, "role_execution_ref participant_ref label role model_ref"),
        **fields_of(launch, "surface argv session_id branch base_commit tree_note"),
        supervisor_pid=as_pid(supervisor.pid) or 0,
        **{k: v for k, v in changes.items() if k in ("pane_ref", "window_ref", "tmux_socket")},
        worker_dir=str(directory),
        output_log=str(run_dir / log),
        result_file=str(directory / launch.result_file) if launch.result_file else None,
        source_role_execution_ref=plan.source_ref,
        worktree_path=launch.worktree,
        turn=launch.turn,
        wait_command=f"{okstra} worker wait {quoted} {member.short}",
        result_command=f"{okstra} worker result {quoted} {member.short}",
    )


def start_worker(
    run_dir: Path,
    request: StartRequest,
    prompt: str,
    environment: Environment,
    *,
    surface: str | None = None,
) -> Started:
    """Start the worker `request` names with `prompt`; return at once. Raises UsageError
    (refused, nothing changed) or LaunchError (no surface; the worker stays `prepared`)."""
    _, manifest, planned_on = read_manifest_bytes(run_dir)
    require_trusted(_project_root(manifest), environment.env, doing="start a worker")
    catalog = load_catalog(environment)
    plan = plan_start(manifest, request, catalog, environment)
    notes = _ready(plan, environment)
    chosen, server = choose_surface(surface, _leader(members(manifest)), environment)
    with run_lock(run_dir):
        _, now, data = read_manifest_bytes(run_dir)
        if data != planned_on:
            manifest, plan = now, plan_start(now, request, catalog, environment)
        started = _launch(run_dir, manifest, plan, prompt, chosen, server, environment)
    return replace(started, notes=notes)


def _ready(plan: StartPlan, environment: Environment) -> tuple[str, ...]:
    """The notes on the worker's CLI; UsageError when it does not run or is logged out."""
    verdict = cli_readiness(plan.provider, environment)
    wrong = verdict.why_not(lead=False)
    if wrong is not None:
        problem, fix = wrong
        raise UsageError(
            f"{plan.member.short}: {problem}" + (f" — {fix}" if fix else ""), field=WHO_ARG
        )
    return tuple(n for n in (verdict.login_note, verdict.warning) if n)


def _follow_up_launch(
    run_dir: Path,
    plan: StartPlan,
    session: str,
    number: int,
    surface: str,
    environment: Environment,
) -> WorkerLaunch:
    """The follow-up's launch: the ended turn's place and worktree, the resume argv."""
    before = files.read_launch(run_dir, plan.member.ref)
    directory = files.worker_dir(run_dir, plan.member.ref)
    argv = _plan_argv(plan, directory, before.cwd, environment, {"session_id": session}, True)
    names_result = "{result_file}" in "".join(plan.provider.launch.worker_resume or ())
    return launch_record(
        run_dir,
        plan,
        environment,
        argv=argv,
        cwd=before.cwd,
        surface=surface,
        result_file=files.RESULT if names_result else None,
        session_id=session,
        **fields_of(before, "worktree branch base_commit tree_note"),
        turn=number,
        session_pattern=None,
    )


def send_worker(
    run_dir: Path,
    who: str,
    prompt: str,
    environment: Environment,
    *,
    surface: str | None = None,
    catalog: Catalog | None = None,
) -> Started:
    """Send the ended worker `who` a follow-up `prompt` in its own conversation. Raises
    UsageError (refused, nothing changed) or LaunchError (the surface could not be opened)."""
    observe_team(run_dir, environment)  # an end nobody recorded yet is recorded first
    catalog = catalog or load_catalog(environment)
    _, manifest, planned_on = read_manifest_bytes(run_dir)
    plan, session = plan_follow_up(manifest, who, catalog, environment)
    chosen, server = choose_surface(surface, _leader(members(manifest)), environment)
    with run_lock(run_dir):
        _, now, data = read_manifest_bytes(run_dir)
        if data != planned_on:  # another writer changed the run meanwhile
            manifest = now
            plan, session = plan_follow_up(now, who, catalog, environment)
        ref = plan.member.ref
        execution = next(e for e in manifest.role_executions if e.role_execution_ref == ref)
        ended = max(len(execution.turns or ()), 1)  # 1 for a start recorded before turns
        launch = _follow_up_launch(run_dir, plan, session, ended + 1, chosen, environment)
        files.archive_turn(run_dir, ref, ended)
        manifest = record_next_turn(run_dir, ref, ended, now=launch.started_at)
        return launch_worker(run_dir, manifest, plan, launch, prompt, server, environment)
