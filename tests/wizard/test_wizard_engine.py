"""The wizard state machine: steps, role block, edit & rewind, outcome."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from wizard_helpers import make_task, run_through

from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused, OkstraError, StateInUseError, UsageError
from okstra_core.session import Wizard


def _ids(wizard: Wizard) -> list[str]:
    return [e.step_id for e in wizard.history()]


def _unchanged(state_file: Path, action: object) -> AnswerRefused:
    before = state_file.read_bytes()
    with pytest.raises(AnswerRefused) as info:
        action()  # type: ignore[operator]
    assert state_file.read_bytes() == before
    return info.value


# ---------------------------------------------------------------------------- whole setups


def test_spawn_process_setup_in_order(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    assert run_through(wizard).kind == "done"
    assert _ids(wizard) == [
        "task_pick",
        "task_group",
        "task_id",
        "brief",
        "task_type",
        "role-count:analyser",
        "role-add:critic",
        "role-add:translator",
        "role-model:leader:1",
        "role-model:analyser:1",
        "role-model:analyser:2",
        "role-model:report-writer:1",
        "directive_pick",
        "confirm",
    ]
    outcome = wizard.outcome()
    args = outcome.render_args
    assert args["task-group"] == "team-a" and args["task-id"] == "login-bug"
    assert args["task-key"] == "team-a/login-bug"
    assert args["brief"] == "brief.md"
    assert args["role-count"] == ["analyser=2"]
    models = args["role-model"]
    assert isinstance(models, list) and [m.split("=")[0] for m in models] == [
        "leader",
        "analyser",
        "analyser",
        "report-writer",
    ]
    argv = list(outcome.render_argv)
    # Every value is one `--flag=value` argument: none can be read as a flag.
    assert argv[0] == f"--project-root={project.resolve()}"
    assert sum(a.startswith("--role-model=") for a in argv) == 4
    assert not any(a.startswith("--task-key") for a in argv)
    flag = "--host-session-context-json="
    context = json.loads(next(a for a in argv if a.startswith(flag))[len(flag) :])
    assert context["hostId"] == "terminal" and context["entryMode"] == "spawn-process"
    request = outcome.request
    assert request.role_counts == {"analyser": 2} and len(request.role_models["analyser"]) == 2
    assert outcome.provenance["role:analyser#1"].startswith("default:")
    assert "analyser #2 : " in outcome.confirmation_text
    assert wizard.progress()[0] == wizard.progress()[1] == 14


def test_current_session_setup_has_leader_session_and_no_leader_model(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(
        state_file,
        project,
        host="claude-code",
        entry_mode="current-session",
        task_type="implementation",
        environment=env,
    )
    prompt = run_through(wizard, stop="leader-session")
    assert prompt.options[0].value == "continue" and prompt.meta["role"] == "leader"
    assert "model not reported" in prompt.label
    with pytest.raises(AnswerRefused):
        wizard.submit("claude/opus-4.6")
    run_through(wizard)
    ids = _ids(wizard)
    assert ids[0] == "task_type"  # answered up front by --task-type
    assert "approved_plan" in ids and "leader-session" in ids
    assert not any(i.startswith("role-model:leader") for i in ids)
    assert "role-model:implementer:1" in ids and "role-count:verifier" in ids
    outcome = wizard.outcome()
    assert not any(m.startswith("leader=") for m in outcome.render_args["role-model"])
    assert outcome.render_args["approved-plan"] == "plan.md"
    assert "fixer : spawned at run time" in outcome.confirmation_text
    assert "leader #1 : model not reported (this session)" in outcome.confirmation_text
    assert outcome.request.host.model_ref is None


def test_current_session_leader_shows_the_model_the_host_reports(
    env: Environment, project: Path, state_file: Path, tmp_path: Path
) -> None:
    from dataclasses import replace

    from okstra_core.cli.roleargs import request_from_argv
    from okstra_core.prepare import prepare

    reported = replace(
        env, env={**env.env, "OKSTRA_HOST_MODEL": "claude/OPUS", "OKSTRA_HOST_EFFORT": "high"}
    )
    wizard = Wizard.init(
        state_file,
        project,
        host="claude-code",
        entry_mode="current-session",
        task_type="requirements-discovery",
        environment=reported,
    )
    prompt = run_through(wizard, stop="leader-session")
    # The alias is resolved to the model ref; the effort is shown too.
    assert "claude/opus-4.6 (effort high)" in prompt.label
    run_through(wizard)
    outcome = wizard.outcome()
    assert "leader #1 : claude/opus-4.6 (this session)" in outcome.confirmation_text
    context = orjson.loads(outcome.render_args["host-session-context-json"])
    assert context["currentModel"] == {
        "provider": "claude",
        "modelRef": "claude/opus-4.6",
        "effort": "high",
    }
    request = request_from_argv(outcome.render_argv, reported)
    assert request == outcome.request
    result = prepare(request, dry_run=True, environment=reported)
    leader = result.manifest.participants[0]
    assert leader.model_ref == "claude/opus-4.6" and leader.runner == "current-session"


def test_unknown_host_entry_mode_task_type_are_usage_errors(
    env: Environment, project: Path, state_file: Path
) -> None:
    with pytest.raises(UsageError, match="entry mode"):
        Wizard.init(state_file, project, entry_mode="current-session", environment=env)
    with pytest.raises(UsageError, match="unknown host"):
        Wizard.init(state_file, project, host="nope", environment=env)
    with pytest.raises(UsageError, match="unknown task type"):
        Wizard.init(state_file, project, task_type="nope", environment=env)
    with pytest.raises(UsageError, match="project root"):
        Wizard.init(state_file, project / "missing", environment=env)
    assert not state_file.exists()
    Wizard.init(state_file, project, environment=env)
    with pytest.raises(UsageError, match="already exists"):
        Wizard.init(state_file, project, environment=env)


# ---------------------------------------------------------------------------- static steps


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", "  ", "!!!", "a\\b"])
def test_task_id_escapes_are_refused(
    env: Environment, project: Path, state_file: Path, bad: str
) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="task_id")
    error = _unchanged(state_file, lambda: wizard.submit(bad))
    assert "task id" in error.message


def test_existing_task_id_is_refused(env: Environment, project: Path, state_file: Path) -> None:
    make_task(project, "team-a/login-bug")
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="task_id")
    assert "already exists" in _unchanged(state_file, lambda: wizard.submit("Login Bug")).message


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("missing.md", "not found"),
        ("/etc/passwd", "inside the project"),
        (".", "not a file"),
        ("", "path"),
    ],
)
def test_brief_must_be_a_file_inside_the_project(
    env: Environment, project: Path, state_file: Path, path: str, why: str
) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="brief")
    assert why in _unchanged(state_file, lambda: wizard.submit(path)).message


def test_brief_absolute_inside_project_is_stored_relative(
    env: Environment, project: Path, state_file: Path
) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "b.md").write_text("x", encoding="utf-8")
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="brief")
    assert wizard.submit(str(project / "docs" / "b.md")).echo == "brief: docs/b.md"
    assert wizard.state.brief_path == "docs/b.md"


def test_task_picker_labels_and_recommendation(
    env: Environment, project: Path, state_file: Path
) -> None:
    make_task(
        project,
        "g/ready",
        phase="implementation-planning",
        pointer={"phase": "implementation", "status": "ready"},
    )
    make_task(
        project,
        "g/pending",
        phase="implementation",
        pointer={"phase": "final-verification", "status": "pending"},
    )
    make_task(project, "g/legacy", pointer="error-analysis", brief=None)
    make_task(project, "g/none")
    (project / ".okstra/tasks/g/broken").mkdir()
    (project / ".okstra/tasks/g/broken/task-manifest.json").write_text("{", encoding="utf-8")
    wizard = Wizard.init(state_file, project, environment=env)
    prompt = wizard.prompt()
    labels = {o.value: o.label for o in prompt.options}
    assert labels["g/ready"] == "g/ready · implementation-planning · next: implementation"
    assert labels["g/pending"] == "g/pending · implementation · next: final-verification (pending)"
    assert labels["g/legacy"].endswith("next: error-analysis")
    assert labels["g/none"].endswith("next: -- (pending)")
    broken = prompt.option("g/broken")
    assert (
        broken is not None and broken.disabled_reason and "invalid JSON" in broken.disabled_reason
    )
    assert "cannot be chosen" in _unchanged(state_file, lambda: wizard.submit("g/broken")).message

    nxt = wizard.submit("g/ready").next
    assert nxt.id == "task_type"  # the manifest's brief is used: no brief step
    assert nxt.options[0].value == "implementation" and nxt.default == "implementation"
    wizard.back()
    assert wizard.submit("g/pending").next.default == "requirements-discovery"
    wizard.back()
    nxt = wizard.submit("g/legacy").next
    assert nxt.id == "brief"  # existing task without a brief asks for one
    assert wizard.submit("brief.md").next.default == "error-analysis"


def test_directive_and_related_tasks(env: Environment, project: Path, state_file: Path) -> None:
    make_task(project, "g/other")
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, {"directive_pick": "write"}, stop="directive")
    assert "empty" in _unchanged(state_file, lambda: wizard.submit("   ")).message
    assert wizard.submit(" focus on auth ").next.id == "related_tasks_pick"
    prompt = wizard.submit("choose").next
    assert prompt.id == "related_tasks" and "g/other" in prompt.help
    assert "unknown task" in _unchanged(state_file, lambda: wizard.submit("g/nope")).message
    assert wizard.submit("g/other, g/other").next.id == "confirm"
    args = run_through(wizard) and wizard.outcome().render_args
    assert args["directive"] == "focus on auth" and args["related-tasks"] == "g/other"


# ---------------------------------------------------------------------------- role block


def test_role_count_add_and_model_steps(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, task_type="requirements-discovery", environment=env)
    count = run_through(wizard, stop="role-count:analyser")
    assert [o.value for o in count.options] == ["1", "2", "3"] and count.default == "2"
    assert {
        "stepKind": "role_count",
        "role": "analyser",
        "min": 1,
        "max": 3,
        "recommended": 2,
        "duty": "cross-verification",
    }.items() <= count.meta.items()
    assert "(recommended)" in count.options[1].label
    add = wizard.submit("3").next
    assert add.id == "role-add:critic" and add.default == "0"
    assert [o.value for o in add.options] == ["0", "1"]
    wizard.submit("1")
    model = wizard.submit("0").next
    assert model.id == "role-model:leader:1" and model.meta["ordinal"] == 1
    option = model.options[0]
    assert option.meta["provider"] and option.meta["display"]
    assert model.default == next(o.value for o in model.options if o.selectable)
    run_through(wizard, stop="role-model:critic:1")
    analysers = wizard.state.role_models["analyser"]
    critic = wizard.prompt()
    # exclude_models_of = ["analyser"]: the analysers' models are disabled with a reason.
    for ref in analysers:
        opt = critic.option(ref)
        assert opt is not None and opt.disabled_reason
        assert "cannot be chosen" in _unchanged(state_file, lambda r=ref: wizard.submit(r)).message


def test_out_of_order_model_is_refused(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, task_type="requirements-discovery", environment=env)
    prompt = run_through(wizard, stop="role-model:analyser:1")
    error = _unchanged(
        state_file, lambda: wizard.submit(prompt.default or "", step="role-model:analyser:2")
    )
    assert "before analyser #1" in error.message
    assert "asks" in _unchanged(state_file, lambda: wizard.submit("x", step="directive")).message


def test_count_answer_clears_that_roles_models(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, project, task_type="requirements-discovery", environment=env)
    run_through(wizard, stop="directive_pick")
    assert len(wizard.state.role_models["analyser"]) == 2
    prompt = wizard.rewind("role-count:analyser")
    assert prompt.id == "role-count:analyser" and prompt.default == "2"  # remembered
    nxt = wizard.submit("1").next
    state = wizard.state
    assert "analyser" not in state.role_models and state.role_counts == {"analyser": 1}
    assert nxt.id == "role-add:critic" and nxt.default == "0"
    assert state.remembered_answers["role-model:analyser:2"]


def test_invalid_models_are_discarded_when_the_environment_changes(
    env: Environment, project: Path, state_file: Path, bin_dir: Path
) -> None:
    wizard = Wizard.init(state_file, project, task_type="requirements-discovery", environment=env)
    run_through(wizard, {"role-model:analyser:2": "codex/gpt-5.6-sol"}, stop="directive_pick")
    chosen = dict(wizard.state.role_models)
    assert chosen["analyser"][1] == "codex/gpt-5.6-sol"
    (bin_dir / "codex").unlink()
    reopened = Wizard.open(state_file, environment=env)
    prompt = reopened.prompt()
    assert prompt.id == "role-model:analyser:2"
    bad = prompt.option("codex/gpt-5.6-sol")
    assert bad is not None and "not found on PATH" in (bad.disabled_reason or "")
    # Reading never saved: the file still holds the old choice until a step saves.
    assert json.loads(state_file.read_bytes())["roleModels"]["analyser"][1] == "codex/gpt-5.6-sol"
    reopened.refresh()
    state = reopened.state
    assert state.role_models["analyser"] == chosen["analyser"][:1]
    assert "report-writer" not in state.role_models  # dropped from the first invalid onward
    assert "role-model:analyser:2" not in [e.step for e in state.answered]
    assert state.remembered_answers["role-model:analyser:2"] == "codex/gpt-5.6-sol"
    # The remembered later answer is offered again as the default when still valid.
    after = run_through(reopened, stop="role-model:report-writer:1")
    assert after.default == chosen["report-writer"][0]


# ---------------------------------------------------------------------------- edit & rewind


def test_edit_target_lists_every_answer_in_order(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="confirm")
    edit = wizard.submit("edit").next
    assert edit.id == "edit_target"
    assert [o.value for o in edit.options] == _ids(wizard)[:-1]  # all but the confirm itself
    prompt = wizard.submit("role-model:analyser:2").next
    assert prompt.id == "role-model:analyser:2"
    state = wizard.state
    assert state.confirmed is None and len(state.role_models["analyser"]) == 1
    # The rest of the team goes; the answers after the role block (directive, related
    # tasks) are kept, and the wizard returns to the confirmation once the team is set.
    assert state.is_answered("directive_pick") and state.entry("directive_pick") is not None
    assert "directive_pick" not in state.remembered_answers
    assert "confirm" not in state.remembered_answers and not state.is_answered("confirm")
    nxt = wizard.submit(prompt.default or "").next
    while nxt.id != "confirm":
        assert nxt.id.startswith("role-"), nxt.id
        nxt = wizard.submit(nxt.default or "").next


def test_rewind_static_before_role_block_clears_roles(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, {"role-count:analyser": "3", "directive_pick": "write"})
    before = wizard.state
    prompt = wizard.rewind("task_type")
    state = wizard.state
    assert prompt.id == "task_type" and prompt.default == "requirements-discovery"
    assert state.role_counts == {} and state.role_models == {} and state.role_selection_order == []
    assert state.directive == "" and state.task_type == "" and state.confirmed is None
    assert _ids(wizard) == ["task_pick", "task_group", "task_id", "brief"]
    # Pressing Enter through the rest reproduces the same setup (remembered answers).
    run_through(wizard)
    after = wizard.state
    assert after.role_counts == before.role_counts and after.role_models == before.role_models
    assert after.directive == before.directive == "keep it small"
    assert wizard.outcome().render_argv


def test_rewind_static_after_role_block_keeps_roles(
    env: Environment, project: Path, state_file: Path
) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard)
    models = wizard.state.role_models
    assert wizard.rewind("directive_pick").id == "directive_pick"
    assert wizard.state.role_models == models and wizard.state.confirmed is None


def test_back_and_rewind_refusals(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    assert "nothing to go back" in _unchanged(state_file, wizard.back).message
    wizard.submit("new")
    assert "not been answered" in _unchanged(state_file, lambda: wizard.rewind("brief")).message
    assert wizard.back().id == "task_pick"
    run_through(wizard)
    assert "finished" in _unchanged(state_file, lambda: wizard.submit("x")).message
    assert wizard.back().id == "confirm"


def test_abort_has_no_outcome(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    with pytest.raises(OkstraError, match="not confirmed"):
        wizard.outcome()
    done = run_through(wizard, {"confirm": "abort"})
    assert done.kind == "done" and done.meta["aborted"] is True
    with pytest.raises(OkstraError, match="aborted"):
        wizard.outcome()


# ---------------------------------------------------------------------------- reuse


def test_reuse_previous_run(env: Environment, project: Path, state_file: Path) -> None:
    inputs = {
        "roleCounts": ["analyser=3", "critic=1"],
        "roleModels": [
            "leader=claude/opus-4.6",
            "analyser=claude/opus-4.6",
            "analyser=codex/gpt-5.6-sol",
            "analyser=grok/grok-4",
            "critic=kimi/kimi-k2",
        ],
        "directive": "again",
    }
    make_task(
        project,
        "g/t",
        runs={
            "requirements-discovery-001": {"roleCounts": {}},
            # The previous layout: nested under `inputs`, `role=value` strings.
            "requirements-discovery-002": {"inputs": inputs},
        },
    )
    wizard = Wizard.init(state_file, project, environment=env)
    wizard.submit("g/t")
    prompt = wizard.submit("requirements-discovery").next
    assert prompt.id == "reuse_previous" and "requirements-discovery-002" in prompt.label
    nxt = wizard.submit("reuse").next
    state = wizard.state
    assert state.role_counts["analyser"] == 3 and state.role_counts["critic"] == 1
    assert state.role_models["analyser"] == ["claude/opus-4.6", "codex/gpt-5.6-sol", "grok/grok-4"]
    assert state.directive == "again"
    assert nxt.id == "role-add:translator"  # not in the run: asked
    entry = state.entry("role-model:analyser:2")
    assert entry is not None and entry.provenance == "reused:requirements-discovery-002"
    assert _ids(wizard)[:4] == ["task_pick", "task_type", "reuse_previous", "role-count:analyser"]
    run_through(wizard)
    outcome = wizard.outcome()
    assert outcome.provenance["role:analyser#3"] == "reused:requirements-discovery-002"
    assert outcome.provenance["directive"] == "reused:requirements-discovery-002"
    # Back undoes the reuse as a whole, not one pre-filled value.
    wizard.back()  # confirm
    wizard.back()  # role-model:report-writer:1 (chosen)
    wizard.back()  # role-add:translator
    assert wizard.back().id == "reuse_previous"
    assert wizard.state.role_models == {}


def test_reuse_refuses_malformed_run_inputs(
    env: Environment, project: Path, state_file: Path
) -> None:
    make_task(project, "g/t", runs={"error-analysis-001": {"roleCounts": {"analyser": True}}})
    wizard = Wizard.init(state_file, project, environment=env)
    wizard.submit("g/t")
    wizard.submit("error-analysis")
    error = _unchanged(state_file, lambda: wizard.submit("reuse"))
    assert "run-inputs.json" in error.message and "roleCounts" in error.message
    assert wizard.submit("again").next.id == "role-count:analyser"


# ---------------------------------------------------------------------------- locking, text


def test_hold_keeps_the_lock(env: Environment, project: Path, state_file: Path) -> None:
    wizard = Wizard.init(state_file, project, environment=env)
    other = Wizard.open(state_file, environment=env)
    with wizard.hold():
        wizard.submit("new")
        before = state_file.read_bytes()
        with pytest.raises(StateInUseError, match="in use"):
            other.submit("new")
        assert state_file.read_bytes() == before
        assert other.prompt().id == "task_pick"  # reading never waits
    assert other.submit("grp").next.id == "task_id"  # re-read from disk: no lost update


def test_korean_catalog_with_english_fallback(
    env: Environment, project: Path, state_file: Path
) -> None:
    ko = Environment(env={**env.env, "OKSTRA_LANG": "ko"})
    wizard = Wizard.init(state_file, project, environment=ko)
    prompt = wizard.prompt()
    english = Wizard.open(state_file, environment=env).prompt()
    assert prompt.label != english.label
    assert [o.value for o in prompt.options] == [o.value for o in english.options]


def test_language_from_config(
    env: Environment, project: Path, state_file: Path, okstra_home: Path
) -> None:
    (okstra_home / "config").mkdir(parents=True, exist_ok=True)
    (okstra_home / "config" / "config.json").write_text(
        json.dumps({"language": "ko"}), encoding="utf-8"
    )
    wizard = Wizard.init(state_file, project, environment=env)
    assert wizard.prompt().label != "Which task?"


def test_missing_ko_key_falls_back_to_english(tmp_path: Path, env: Environment) -> None:
    from okstra_core.wizard.text import load_text

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "wizard.ko.toml").write_text('[task_pick]\nlabel = "작업?"\n', encoding="utf-8")
    text = load_text({"OKSTRA_WORKSPACE": str(workspace)}, "ko")
    assert text.get("task_pick.label") == "작업?"
    assert text.get("task_pick.option.new") == "Start a new task"


def test_v1_file_resumes_through_its_companion(
    env: Environment, project: Path, okstra_home: Path
) -> None:
    from okstra_core.paths import user_dirs
    from okstra_core.session import list_wizards

    wizards = user_dirs(env.env).wizards
    wizards.mkdir(parents=True)
    v1 = wizards / "old.json"
    v1.write_text(
        json.dumps(
            {
                "project_root": str(project),
                "host_runtime": "terminal",
                "host_entry_mode": "spawn-process",
                "task_mode": "new",
                "task_group": "g",
                "task_id": "t",
                "brief_path": "brief.md",
                "task_type": "requirements-discovery",
                "lead_provider": "claude",
                "answered": ["task_pick", "task_group", "task_id", "brief", "task_type"],
            }
        ),
        encoding="utf-8",
    )
    source = v1.read_bytes()
    wizard = Wizard.open(v1, environment=env)
    assert wizard.legacy and wizard.path != v1 and not wizard.path.exists()
    run_through(wizard)
    assert v1.read_bytes() == source and wizard.path.exists()
    again = Wizard.open(v1, environment=env)
    assert again.path == wizard.path and again.state.confirmed is True
    listed = list_wizards(env)
    assert [(s.path, s.legacy, s.status) for s in listed] == [(v1, True, "confirmed")]
