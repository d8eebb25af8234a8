"""Regression guards for the speed work of docs/performance.md — counts, never seconds.

A timed test fails on a busy machine and passes on a fast one; what made the wizard
slow was repeated work, so these tests count it: how often one wizard step loads the
catalog, builds the resolver's team, decides a provider's availability and looks a
CLI up on PATH, and which modules a headless `okstra wizard step` (and a scripted setup,
`okstra prepare --answers`) imports.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import okstra_core.catalog
from okstra_core.catalog.models import (
    LEADER,
    GlobalConfig,
    HostSpec,
    LaunchSpec,
    ModelSpec,
    Profile,
    ProviderSpec,
    RoleRequirement,
)
from okstra_core.defaults import DefaultScopes
from okstra_core.documents.inputs import RunInputs
from okstra_core.documents.run import RunManifest
from okstra_core.documents.task import TaskManifest
from okstra_core.environment import Environment
from okstra_core.pool import ModelPool
from okstra_core.resolver import TeamQuery, model_option_rows
from okstra_core.resolver import team as team_module
from okstra_core.resolver.solver import Solver
from okstra_core.session import Wizard
from okstra_core.wizard import Prompt
from okstra_core.wizard import roles as roles_module
from tests.conftest import answering_probe

TEXT_ANSWERS = {"task_group": "Team A", "task_id": "Speed", "brief": "brief.md"}


class Counts:
    """Calls of the functions that do a step's heavy work, counted by name."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return fn(*args, **kwargs)

        return counted

    def reset(self) -> None:
        self.calls.clear()

    def __getitem__(self, name: str) -> int:
        return self.calls.get(name, 0)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    counter = Counts()
    # The step context imports `load_catalog` from the package at call time.
    monkeypatch.setattr(
        okstra_core.catalog,
        "load_catalog",
        counter.wrap("load_catalog", okstra_core.catalog.load_catalog),
    )
    monkeypatch.setattr(team_module, "Team", _counted_class(team_module.Team, counter, "team"))
    monkeypatch.setattr(
        ModelPool,
        "_provider_verdict",
        counter.wrap("provider_verdict", ModelPool._provider_verdict),
    )
    monkeypatch.setattr(Environment, "which", counter.wrap("which", Environment.which))
    yield counter


def _counted_class(cls: type, counter: Counts, name: str) -> type:
    init = cls.__init__

    def counted_init(self: Any, *args: Any, **kwargs: Any) -> None:
        counter.calls[name] = counter.calls.get(name, 0) + 1
        init(self, *args, **kwargs)

    return type(cls.__name__, (cls,), {"__init__": counted_init})


@pytest.fixture
def wizard_at_model_step(
    tmp_path: Path, okstra_home: Path, fake_bin: Callable[..., Path]
) -> tuple[Wizard, Prompt]:
    """A wizard answered with its defaults up to its second role-model prompt."""
    project = _project(tmp_path)
    env = Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": f"{fake_bin()}:/usr/bin:/bin"})
    wizard = Wizard.init(
        tmp_path / "w.json",
        project,
        host="terminal",
        task_type="requirements-discovery",
        environment=env,
    )
    prompt = wizard.prompt()
    models_answered = 0
    for _ in range(40):
        if prompt.step_kind == "role_model":
            if models_answered == 1:
                return wizard, prompt
            models_answered += 1
        answer = TEXT_ANSWERS.get(prompt.id) or prompt.default
        assert answer is not None, prompt
        prompt = wizard.submit(answer).next
    raise AssertionError(f"no second role-model prompt; reached {prompt.id}")


def test_one_submit_and_prompt_do_each_piece_of_work_once(
    wizard_at_model_step: tuple[Wizard, Prompt], counts: Counts
) -> None:
    wizard, prompt = wizard_at_model_step
    assert prompt.default is not None
    ctx = wizard._ctx()
    providers = len(ctx.catalog.providers)
    roles = 1 + len(ctx.profile(wizard.state.task_type or "").static_roles)  # + the leader

    counts.reset()
    result = wizard.submit(prompt.default)
    assert result.next.step_kind == "role_model", result.next.id
    # The submit checks the chosen team (dropping models that no longer fit) and then
    # computes the next prompt's options: one catalog load and ONE team for both.
    assert counts["load_catalog"] == 1
    assert counts["team"] == 1
    # Availability is decided once per provider and role — never per model or per
    # instance — and a CLI is looked up on PATH at most once per step.
    assert 0 < counts["provider_verdict"] <= providers * roles
    assert counts["which"] <= providers

    counts.reset()
    wizard.prompt()
    assert counts["load_catalog"] == 1
    assert counts["team"] == 1
    assert 0 < counts["provider_verdict"] <= providers * roles
    assert counts["which"] <= providers


def test_show_computes_the_prompt_once(
    wizard_at_model_step: tuple[Wizard, Prompt],
    counts: Counts,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`okstra wizard show` (prompt, confirmation, history, progress) from one prompt."""
    from okstra_core.cli import main
    from okstra_core.session import wizard as session

    wizard, _prompt = wizard_at_model_step
    monkeypatch.setattr(session, "advance", counts.wrap("advance", session.advance))
    for name, value in wizard.environment.env.items():
        monkeypatch.setenv(name, value)
    counts.reset()
    assert main(["wizard", "show", "--state", str(wizard.path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["prompt"]["kind"] == "pick" and shown["confirmation"]["lines"]
    assert counts["advance"] == 1 and counts["load_catalog"] == 1 and counts["team"] == 1


def test_pool_memo_is_per_pool(okstra_home: Path) -> None:
    env = Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": "/usr/bin:/bin"})
    catalog = okstra_core.catalog.load_catalog(env)
    first, second = ModelPool.from_catalog(catalog, env), ModelPool.from_catalog(catalog, env)
    built: list[int] = []
    assert first.memo("k", lambda: built.append(1) or "a") == "a"
    assert first.memo("k", lambda: built.append(2) or "b") == "a"
    # A new pool (a new step) computes again: nothing outlives its availability.
    assert second.memo("k", lambda: built.append(3) or "c") == "c"
    assert built == [1, 3]
    # The model list itself is shared by pools of the same (unchanged) provider specs.
    assert first.models() is second.models()


def test_available_refs_agree_with_availability(okstra_home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (bin_dir / "claude").chmod(0o755)
    env = Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": str(bin_dir)})
    catalog = okstra_core.catalog.load_catalog(env)
    for host in catalog.hosts.values():
        for mode in host.entry_modes:
            pool = ModelPool.from_catalog(catalog, env)
            for role in pool.roles():
                expected = {
                    m.ref
                    for m in pool.list(role)
                    if pool.availability(m.ref, role, host, mode).available
                }
                fresh = ModelPool.from_catalog(catalog, env)
                assert fresh.available_refs(role, host, mode) == expected, (host.id, mode, role)


def test_a_repeated_prompt_reuses_the_team_core_and_the_options(
    wizard_at_model_step: tuple[Wizard, Prompt], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step's pool is new, but what follows from the provider specs, the roles and
    the availability (the team's core: candidates, model classes, solvers) is built
    once and shared by later steps; so are the pool models' option objects."""
    wizard, _prompt = wizard_at_model_step
    counter = Counts()
    monkeypatch.setattr(
        team_module, "TeamCore", _counted_class(team_module.TeamCore, counter, "core")
    )
    monkeypatch.setattr(
        team_module, "RoleRows", _counted_class(team_module.RoleRows, counter, "rows")
    )
    monkeypatch.setattr(team_module, "Solver", _counted_class(Solver, counter, "solver"))
    made = counter.wrap("option", roles_module._pool_option)
    monkeypatch.setattr(roles_module, "_pool_option", made)
    first = wizard.prompt()
    counter.reset()
    again = wizard.prompt()
    assert again == first
    assert counter["core"] == 0
    assert counter["rows"] == 0
    assert counter["solver"] == 0
    assert counter["option"] == 0  # every pool model's option is the one made before
    # The next step (same counts, same availability) shares the core too.
    assert first.default is not None
    counter.reset()
    wizard.submit(first.default)
    assert counter["core"] == 0
    assert counter["solver"] == 0


def test_option_verdicts_are_decided_per_model_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Models that no fixed choice touches are interchangeable within their class
    (provider, roles that may use them): the completion check runs once per class,
    not once per model."""
    launch = LaunchSpec(
        version=("{cli}", "--version"),
        new=("{cli}", "--model", "{model}"),
        resume=("{cli}", "--resume", "{session_id}"),
    )
    providers = [
        ProviderSpec(
            id=f"p{p}",
            display_label=f"P{p}",
            cli=f"cli{p}",
            roles=(LEADER, "analyser"),
            launch=launch,
            models=tuple(
                ModelSpec(id=f"m{i}", display=f"M{i}", execution=f"x{i}") for i in range(40)
            ),
        )
        for p in range(3)
    ]
    environment = Environment(
        env={"PATH": "/fake"},
        which_override=lambda c: f"/fake/{c}",
        probe_override=answering_probe,
    )
    pool = ModelPool(providers, environment, GlobalConfig())
    host = HostSpec(id="terminal", display_label="Terminal")
    analyser = RoleRequirement(role="analyser", duty="analyse", min=1, max=3, distinct="provider")
    query = TeamQuery(
        profile=Profile(task_type="t", roles=(analyser,)),
        counts={"analyser": 3},
        scopes=DefaultScopes(),
        pool=pool,
        host=host,
        entry_mode="spawn-process",
        models={"analyser": ["p0/m0"]},
    )
    calls = Counts()
    monkeypatch.setattr(Solver, "choice_feasible", calls.wrap("check", Solver.choice_feasible))
    rows = model_option_rows(query, "analyser", 2)
    assert len(rows.models) == 120
    # Three providers: three classes, and p0's models clash with analyser#1 (distinct
    # providers), so they are decided one by one by the clash rule, not the solver.
    assert calls["check"] <= 3
    assert [r is None for r in rows.reasons].count(True) == 80
    assert all(r is not None for r in rows.reasons[:40])


# ------------------------------------------------------------------ headless imports

# Runs one headless command in a fresh interpreter and reports what it imported.
IMPORTS_OF = r"""
import json, sys
from okstra_tui.entry import main
code = main(sys.argv[1:])
sys.stdout.flush()
records = sys.modules.get("okstra_core.records")
# The catalog records whose validators this process built (it validated with them).
built = [
    cls.__name__
    for cls in (getattr(records, "_ADAPTERS", None) or {})
    if cls.__module__ == "okstra_core.catalog.models"
]
print(json.dumps({"modules": sorted(sys.modules), "built": built}), file=sys.stderr)
sys.exit(code)
"""

# A step needs the catalog, the wizard engine and the resolver — not the templates
# (jinja2), not the terminal app (textual), not prepare's pipeline or the launchers.
NOT_IMPORTED_BY_A_STEP = (
    "jinja2",
    "textual",
    "okstra_core.prepare.pipeline",
    "okstra_core.prepare.manifest",
    "okstra_core.launch",
    # Other commands' modules: the CLI imports only the running command's.
    "okstra_core.cli._prepare",
    "okstra_core.cli._schema",
    "okstra_core.cli._runs",
    "okstra_core.documents.run",
    "okstra_core.documents.task",
    "okstra_core.documents.schema",
    # Imported by pydantic only when it builds a validator: a step builds none.
    "pydantic.plugin._loader",
    # The step's plain spelling is read without argparse (okstra_core.cli._wizard).
    "argparse",
    # Its catalog and state file were checked by an earlier process (cached by their
    # bytes): a step reads them back as plain records, without pydantic.
    "pydantic",
    "pydantic_core",
    # The catalog and the wizard's text tables come from their caches: no TOML parsed,
    # no profile's front matter read.
    "tomllib",
    "okstra_core.catalog.frontmatter",
    # The reader of the earlier okstra's files: a state file okstra checked needs none.
    "okstra_core.wizard.legacy",
    "okstra_core.legacyargs",
)
# Only the steps about the task read the project's tasks or an approved plan.
NOT_IMPORTED_BY_A_ROLE_STEP = ("okstra_core.tasks", "okstra_core.plans")


def _imports_of(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict[str, Any], set[str]]:
    payload, report = _run_reporting(argv, cwd, env)
    return payload, set(report["modules"])


def _run_reporting(
    argv: list[str], cwd: Path, env: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF, *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout), json.loads(proc.stderr.strip().splitlines()[-1])


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("# Brief\n", encoding="utf-8")
    return project


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The loaded modules that are one of `names` or inside one of them."""
    return sorted(m for m in modules for name in names if m == name or m.startswith(name + "."))


def test_wizard_step_imports_only_what_a_step_needs(
    tmp_path: Path, okstra_home: Path, fake_bin: Callable[..., Path]
) -> None:
    project = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OKSTRA_HOME=str(okstra_home), PATH=f"{fake_bin()}:/usr/bin:/bin")
    state = str(tmp_path / "w.json")
    _, modules = _imports_of(
        [
            "wizard",
            "init",
            "--state",
            state,
            "--project-root",
            str(project),
            "--host",
            "terminal",
            "--task-type",
            "requirements-discovery",
        ],
        tmp_path,
        env,
    )
    # Walk to a role step (the resolver's), then look at one more step's imports.
    for _ in range(40):
        payload, modules = _imports_of(
            ["wizard", "step", "--state", state, "--no-submit"], tmp_path, env
        )
        prompt = payload["next"]
        loaded = _loaded(modules, NOT_IMPORTED_BY_A_STEP)
        assert loaded == [], (prompt["id"], loaded)
        if prompt["meta"].get("stepKind") == "role_model":
            assert "okstra_core.resolver" in modules
            assert _loaded(modules, NOT_IMPORTED_BY_A_ROLE_STEP) == []
            # The catalog came from the cache: no catalog model validated.
            _, report = _run_reporting(
                ["wizard", "step", "--state", state, "--no-submit"], tmp_path, env
            )
            assert report["built"] == []
            # Without the cache the same step parses and validates the catalog.
            shutil.rmtree(okstra_home / "cache")
            _, report = _run_reporting(
                ["wizard", "step", "--state", state, "--no-submit"], tmp_path, env
            )
            assert {"Profile", "ProviderSpec", "HostSpec"} <= set(report["built"])
            break
        answer = TEXT_ANSWERS.get(prompt["id"]) or prompt["default"]
        payload, _ = _imports_of(
            ["wizard", "step", "--state", state, "--answer", answer], tmp_path, env
        )
        assert payload["ok"], payload
    else:
        raise AssertionError("no role-model step reached")


# A prepare that launches nothing needs neither the preflight probes (a thread pool,
# which imports logging) nor the backends that run processes.
# Preflight runs (it checks the CLIs the lead will spawn, launched or not) on plain
# threads; nothing that starts the lead is loaded.
NOT_IMPORTED_BY_PREPARE_LAUNCH_NONE = (
    "okstra_core.launch.backends",
    "okstra_core.launch.foreground",
    "concurrent.futures",
    "logging",
    "textual",
)


# ------------------------------------------------------------------ wizard text cache


def test_wizard_text_is_parsed_once_across_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomllib

    from okstra_core.paths import resource
    from okstra_core.wizard import text as text_module

    parsed: list[str] = []
    real_loads = tomllib.loads

    def counting(source: str) -> dict[str, Any]:
        parsed.append(source[:20])
        return real_loads(source)

    monkeypatch.setattr(tomllib, "loads", counting)
    cache = tmp_path / "cache"
    env: dict[str, str] = {}

    def fresh_process() -> text_module.WizardText:
        text_module._TABLES.clear()  # what a new process starts with
        return text_module.load_text(env, cache=cache)

    first = fresh_process()
    assert len(parsed) == 1 and len(list((cache / "text").glob("*.entry"))) == 1
    again = fresh_process()
    assert len(parsed) == 1 and again.entries == first.entries  # served from the cache
    # An edited catalog (here: a workspace copy with one label changed) is parsed again.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = resource("wizard.toml").read_text(encoding="utf-8")
    label = first.raw("task_pick.label")
    (workspace / "wizard.toml").write_text(
        source.replace(f'"{label}"', '"Which task, then?"', 1), encoding="utf-8"
    )
    env["OKSTRA_WORKSPACE"] = str(workspace)
    edited = fresh_process()
    assert len(parsed) == 2 and edited.get("task_pick.label") == "Which task, then?"
    # A torn entry is a miss, never an error.
    for entry in (cache / "text").glob("*.entry"):
        entry.write_bytes(entry.read_bytes()[:-7])
    assert fresh_process().entries == edited.entries and len(parsed) == 3


# ------------------------------------------------------------------ cached validators

REPORT_VALIDATED = r"""
import sys
from okstra_tui.entry import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("VALIDATED" if "pydantic" in sys.modules else "TRUSTED", file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
def test_a_state_file_is_trusted_only_by_the_bytes_okstra_checked(
    tmp_path: Path, okstra_home: Path
) -> None:
    """A state file okstra did not write is validated (with pydantic) by every process
    that reads it, with the same answer each time; once a process validated a file, the
    next one reading the very same bytes trusts it without importing pydantic."""
    project = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OKSTRA_HOME"] = str(okstra_home)
    good = tmp_path / "good.json"
    init = ["wizard", "init", "--state", str(good), "--project-root", str(project)]
    subprocess.run([sys.executable, "-m", "okstra_tui", *init], env=env, check=True, timeout=60)
    state = json.loads(good.read_text(encoding="utf-8"))
    answered = [{"step": "task_pick", "answer": "new"}]
    broken = {
        "count-is-a-boolean": ({**state, "roleCounts": {"analyser": True}}, "roleCounts.analyser"),
        "unknown-field": ({**state, "colour": "blue"}, "colour"),
        "missing-field": ({k: v for k, v in state.items() if k != "project_root"}, "project_root"),
        "answered-twice": ({**state, "answered": answered * 2}, None),
        "bad-entry-mode": ({**state, "host_entry_mode": "teleport"}, "host_entry_mode"),
        "revision-too-big": ({**state, "revision": 2**60}, "revision"),
        "fine": (state, None),
    }

    def show(path: Path) -> tuple[dict[str, Any], str]:
        proc = subprocess.run(
            [sys.executable, "-c", REPORT_VALIDATED, "wizard", "show", "--state", str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return json.loads(proc.stdout), proc.stderr.strip().splitlines()[-1]

    for name, (content, field) in broken.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(content), encoding="utf-8")  # not okstra's bytes
        first, how_first = show(path)
        second, how_second = show(path)
        assert how_first == "VALIDATED", name
        assert first["ok"] is (name == "fine"), (name, first)
        if name == "fine":
            assert how_second == "TRUSTED", name
            assert second["prompt"] == first["prompt"]
            continue
        assert (how_second, second) == ("VALIDATED", first), name
        assert first["file"] == str(path), (name, first)
        if field is not None:
            assert first["field"] == field, (name, first)
    # A file changed by one byte is validated again (its bytes were never checked).
    fine = tmp_path / "fine.json"
    fine.write_text(fine.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert show(fine)[1] == "VALIDATED"


# ------------------------------------------------------------------ scripted setup

# A scripted setup (`prepare --answers`) replays the answers on records okstra already
# checked and writes the run's documents as plain records: pydantic is for data read
# from outside (an answers line of another shape, a task manifest or project.json that
# okstra did not write byte for byte).
NOT_IMPORTED_BY_A_SCRIPTED_SETUP = ("pydantic", "pydantic_core", "importlib.metadata")


def test_prepare_answers_writes_a_new_run_without_pydantic_or_a_launcher(
    tmp_path: Path, okstra_home: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.prepare.conftest import FAKE_HELP
    from tests.prepare.test_prepare_cli import _answers_of_a_confirmed_setup

    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)  # the fake CLIs pass preflight
    project = _project(tmp_path)
    answers, _ = _answers_of_a_confirmed_setup(project, tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = ["prepare", "--answers", str(answers), "--project-root", str(project)]
    args += ["--host", "terminal", "--launch", "none"]
    # A dry run first: the caches a repeated scripted setup finds filled.
    payload, _ = _imports_of([*args, "--state", "warm", "--dry-run"], project, env)
    assert payload["ok"] is True, payload
    payload, modules = _imports_of([*args, "--state", "scripted"], project, env)
    assert payload["ok"] is True and payload["dryRun"] is False, payload
    assert _loaded(modules, NOT_IMPORTED_BY_A_SCRIPTED_SETUP) == []
    # Nothing was launched, and nothing that launches was loaded; preflight ran (and is
    # seen loaded: the list of modules is the real one) on the verdicts the dry run
    # recorded: no CLI was run again.
    assert payload["backend"] == "none" and payload["launch"] is None
    assert payload["preflight"] and all(p["ok"] for p in payload["preflight"])
    assert {"okstra_core.launch.checks", "threading"} <= modules
    assert Path(payload["runDir"]).is_dir() and payload["leadArgv"]
    assert _loaded(modules, NOT_IMPORTED_BY_PREPARE_LAUNCH_NONE) == []
    assert "okstra_core.launch.sheet" in modules  # the resume sheet was written
    # What it wrote reads back through the documents (the edge: pydantic checks it).
    run_dir = Path(payload["runDir"])
    inputs = RunInputs.read(run_dir / "run-inputs.json")
    assert inputs.run_id == payload["runId"]
    manifest = RunManifest.read(run_dir / "run-manifest.json")
    assert manifest.run_id == payload["runId"]
    task = TaskManifest.read(run_dir.parents[1] / "task-manifest.json")
    assert task.latest_run.run_id == payload["runId"]
    # Another run of the same task extends the task manifest and project.json that
    # prepare wrote: their exact bytes are recognised, so still no pydantic.
    again = ["prepare", "--state", "scripted", "--again", "--launch", "none"]
    payload, modules = _imports_of(again, project, env)
    assert payload["ok"] is True and payload["runId"].endswith("-002"), payload
    assert _loaded(modules, NOT_IMPORTED_BY_A_SCRIPTED_SETUP) == []
    # project.json edited by hand (a key of the user's) is checked: pydantic is loaded.
    project_json = project / ".okstra" / "project.json"
    data = json.loads(project_json.read_text(encoding="utf-8"))
    project_json.write_text(json.dumps({**data, "note": "mine"}), encoding="utf-8")
    payload, modules = _imports_of(again, project, env)
    assert payload["ok"] is True and payload["runId"].endswith("-003"), payload
    assert "pydantic" in modules
    assert json.loads(project_json.read_text(encoding="utf-8"))["note"] == "mine"


# ------------------------------------------------------------------ no patching for speed

# The one module allowed to replace attributes of a library: the app's quarantine of
# fixes for the pinned Textual (see docs/textual-fixes.md), applied by `make_app`.
PATCH_QUARANTINE = {"okstra_tui/_textual_fixes.py"}


def _outside_names(tree: ast.Module) -> set[str]:
    """Names a module binds to what it imported from outside okstra."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("okstra"):
                    names.add((alias.asname or alias.name).split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and not node.module.startswith("okstra")
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def test_nothing_of_the_standard_library_or_of_textual_is_patched() -> None:
    """No okstra module assigns an attribute of a module or class it imported from
    outside (`dataclasses._create_fn = …`, `sys.modules[…].__class__ = …`,
    `OptionList._move_page = …`), except the Textual quarantine."""
    repo = Path(__file__).resolve().parents[2]
    found = []
    for package in ("okstra_core", "okstra_tui"):
        for path in sorted((repo / package).rglob("*.py")):
            relative = path.relative_to(repo).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            outside = _outside_names(tree)
            for node in ast.walk(tree):
                targets = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                for target in targets:
                    root = _root(target) if isinstance(target, ast.Attribute) else None
                    if isinstance(root, ast.Name) and root.id in outside:
                        found.append(f"{relative}:{node.lineno}")
    assert sorted({f for f in found if f.split(":")[0] not in PATCH_QUARANTINE}) == []
    assert any(f.split(":")[0] in PATCH_QUARANTINE for f in found)  # the check sees patches
