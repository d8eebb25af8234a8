"""Fuzzing every user input through the real command-line dispatcher.

Hypothesis drives `okstra_core.cli.main` in-process (the same code the installed
`okstra` runs, minus the interpreter start) with random bytes and structured
mutations of: state files, answers to `wizard step`, answers files for `wizard init
--answers`, profiles and provider files (through `OKSTRA_WORKSPACE` and the user
providers dir), `config.json`, approved plans, and argv for `okstra prepare` /
`okstra team`. A smaller sample goes through the installed command in a subprocess
to prove the exit code and that no traceback reaches stderr.

The invariants, for every case:

* never an internal error (exit 70) and never a traceback;
* a bad file or argv → exit 2 and `{"ok": false, "error": …}` with a message;
* a refused answer → exit 0, `ok: false`, the real current prompt, and the state
  file byte-identical;
* the fuzzed input file is never changed, and nothing is created for a refused input.

Scale with OKSTRA_FUZZ_EXAMPLES (per test; see docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.paths import bundled_prompts_root, user_dirs
from tests.reliability.reliability_support import (
    World,
    assert_clean_failure,
    make_world,
    new_wizard,
    okstra,
    prepare_argv,
)
from tests.reliability.reliability_support import (
    in_process as main,
)

EXAMPLES = int(os.environ.get("OKSTRA_FUZZ_EXAMPLES", "40"))
SUBPROCESS_SAMPLE = int(os.environ.get("OKSTRA_FUZZ_SUBPROCESS", "4"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
)

# -------------------------------------------------------------------------- plumbing

_WORLD: World | None = None
# Wizards parked at each kind of prompt: (name, state bytes).
_PARKED: dict[str, bytes] = {}


def world() -> World:
    """One world for the whole module (hypothesis re-runs a test body many times)."""
    global _WORLD
    if _WORLD is None:
        _WORLD = make_world(Path(tempfile.mkdtemp(prefix="okstra-fuzz-")))
        _park(_WORLD)
    return _WORLD


def _park(w: World) -> None:
    stops = {
        "task_pick": None,
        "task_group": {},
        "brief": {},
        "role-count": {},
        "role-model": {},
        "directive": {"directive_pick": "write"},
        "confirm": {},
    }
    for name, overrides in stops.items():
        path = w.wizards / f"park-{name}.json"
        from okstra_core.session import Wizard

        wizard = Wizard.init(path, w.project, host="terminal", environment=w.environment)
        prompt = wizard.prompt()
        while not prompt.id.startswith(name) and prompt.kind != "done":
            from tests.reliability.reliability_support import answer_for

            prompt = wizard.submit((overrides or {}).get(prompt.id, answer_for(prompt))).next
        assert prompt.id.startswith(name), (name, prompt.id)
        _PARKED[name] = path.read_bytes()
    done = new_wizard(w, w.wizards / "park-done.json")
    _PARKED["done"] = done.path.read_bytes()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (lock sidecars excluded: they are not content; the user
    cache dir too: derived data any command may fill, see docs/decisions.md)."""
    if not root.exists():
        return {}
    return {
        str(p): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.name.endswith(".lock")
        and "cache" not in p.relative_to(root).parts[:2]
    }


TEXT = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "", " ", "..", "../..", "/", "/etc/passwd", "a/b", "-", "--answer", "0", "-1",
            "99", "1e9", "confirm", "edit", "abort", "new", "skip", "write", "true", "null",
            "claude/opus-4.6", "nope/model", "claude/", "/opus", "\x00", "a\nb", "$(id)",
            "`id`", "; rm -rf ~", "é" * 40, "x" * 5000, "role-model:leader:1",
        ]
    ),
)  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=8,
)

# ------------------------------------------------------------------- wizard answers


@SETTINGS
@given(where=st.sampled_from(sorted(["task_pick", "task_group", "brief", "role-count",
                                     "role-model", "directive", "confirm", "done"])),
       answer=TEXT)  # fmt: skip
def test_random_answers_are_applied_or_refused_cleanly(where: str, answer: str) -> None:
    w = world()
    state = w.wizards / "fuzz-answer.json"
    state.write_bytes(_PARKED[where])
    if answer.startswith("-") or "\x00" in answer:
        # argparse reads "-x" as an option; NUL cannot be in argv: use the = form / skip.
        if "\x00" in answer:
            return
        code, doc = main(w, "wizard", "step", "--state", str(state), f"--answer={answer}")
    else:
        code, doc = main(w, "wizard", "step", "--state", str(state), "--answer", answer)
    assert code == 0, doc
    if doc["ok"] is False:
        assert doc["error"] and doc["current"]["id"], doc
        assert state.read_bytes() == _PARKED[where], "a refused answer changed the file"
    else:
        assert doc["next"]["id"], doc


# ---------------------------------------------------------------------- state files


def _mutated_state(data: st.DataObject) -> bytes:
    base = orjson.loads(_PARKED[data.draw(st.sampled_from(sorted(_PARKED)))])
    for _ in range(data.draw(st.integers(1, 3))):
        action = data.draw(st.sampled_from(["set", "delete", "add", "nested"]))
        keys = sorted(base)
        if action == "set":
            base[data.draw(st.sampled_from(keys))] = data.draw(JSON_VALUES)
        elif action == "delete":
            base.pop(data.draw(st.sampled_from(keys)), None)
        elif action == "add":
            base[data.draw(st.sampled_from(["lead_model", "workers_override", "executor",
                                            "bogus", "roleCounts", "legacySource"]))] = (
                data.draw(JSON_VALUES)
            )  # fmt: skip
        else:
            base["roleCounts"] = {data.draw(TEXT): data.draw(JSON_VALUES)}
            base["answered"] = data.draw(st.lists(JSON_VALUES, max_size=3))
    # json (not orjson): it also writes integers past 64 bits and NaN, as a person might.
    return json.dumps(base).encode()


@SETTINGS
@given(data=st.data(), raw=st.booleans(), blob=st.binary(max_size=300))
def test_random_state_files_give_a_clear_error_and_change_nothing(
    data: st.DataObject, raw: bool, blob: bytes
) -> None:
    w = world()
    content = blob if raw else _mutated_state(data)
    folder = w.wizards / "fuzz-state"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    state = folder / "s.json"
    state.write_bytes(content)
    for argv in (("show",), ("answers",), ("outcome",), ("step", "--answer", "confirm")):
        code, _doc = main(w, "wizard", argv[0], "--state", str(state), *argv[1:])
        if code == 2:
            after = snapshot(folder)
            assert after == {str(state): content}, "a refused state file changed something"
        if argv[0] != "step":
            assert state.read_bytes() == content


# -------------------------------------------------------------------- answers files


@SETTINGS
@given(data=st.data(), raw=st.booleans(), blob=st.binary(max_size=300))
def test_random_answers_files_for_init(data: st.DataObject, raw: bool, blob: bytes) -> None:
    w = world()
    if raw:
        content = blob
    else:
        entries: list[Any] = [
            {"step": data.draw(st.sampled_from(["task_pick", "task_group", "task_id", "brief",
                                                "task_type", "confirm", "x", ""])),
             "answer": data.draw(TEXT)}
            for _ in range(data.draw(st.integers(0, 5)))
        ]  # fmt: skip
        if data.draw(st.booleans()):
            entries.append(data.draw(JSON_VALUES))
        content = json.dumps(entries).encode()
    answers = w.root / "answers.json"
    answers.write_bytes(content)
    state = w.wizards / "fuzz-init.json"
    state.unlink(missing_ok=True)
    code, doc = main(
        w, "wizard", "init", "--state", str(state), "--project-root", str(w.project),
        "--host", "terminal", "--answers", str(answers),
    )  # fmt: skip
    assert answers.read_bytes() == content
    if code == 2 and state.exists():
        # A well-formed file whose replay stopped (a refused or left-over answer): the
        # state is kept where it stopped, and the refusal says so and names the step.
        assert f"the state {state} is kept at step" in doc["error"], doc
        assert doc["current"]["id"] in doc["error"], doc
        assert main(w, "wizard", "show", "--state", str(state))[0] == 0
    elif code == 2:
        # A malformed answers file is refused before anything is created.
        assert "is kept at step" not in str(doc), doc
    else:
        assert code == 0 and state.exists(), doc


# ------------------------------------------------- profiles, providers, config.json


def _mutate_text(text: str, data: st.DataObject) -> bytes:
    lines = text.splitlines()
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(data.draw(st.integers(1, 4))):
        i = rng.randrange(len(lines))
        choice = data.draw(st.sampled_from(["value", "drop", "dup", "junk"]))
        if choice == "value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = key + "= " + data.draw(st.sampled_from(
                ["1", "true", '""', '"x"', "[]", "{}", '"{bogus}"', "[1, 2]", "-5", '"a/b"',
                 '"leader"', '"\\u0000"', "nan"]))  # fmt: skip
        elif choice == "drop":
            del lines[i]
        elif choice == "dup":
            lines.insert(i, lines[i])
        else:
            lines.insert(i, data.draw(TEXT).replace("\x00", ""))
        if not lines:
            lines = [""]
    return ("\n".join(lines) + "\n").encode()


KINDS = ["profile", "provider", "user-provider", "config"]


@SETTINGS
@given(kind=st.sampled_from(KINDS), data=st.data(), raw=st.booleans(),
       blob=st.binary(max_size=300))  # fmt: skip
def test_random_data_files_give_a_clear_error(
    kind: str, data: st.DataObject, raw: bool, blob: bytes
) -> None:
    w = world()
    bundled = bundled_prompts_root()
    workspace = w.root / "workspace"
    home = w.root / "fuzz-home"
    for d in (workspace, home):
        if d.exists():
            import shutil

            shutil.rmtree(d)
    env = dict(w.env)
    env["OKSTRA_HOME"] = str(home)
    dirs = user_dirs(env)
    if kind == "profile":
        source = bundled / "profiles" / "requirements-discovery.md"
        target = workspace / "profiles" / "requirements-discovery.md"
        env["OKSTRA_WORKSPACE"] = str(workspace)
    elif kind == "provider":
        source = bundled / "providers" / "codex.toml"
        target = workspace / "providers" / "codex.toml"
        env["OKSTRA_WORKSPACE"] = str(workspace)
    elif kind == "user-provider":
        source = bundled / "providers" / "kimi.toml"
        target = dirs.user_providers / "mine.toml"
    else:
        source = None
        target = dirs.config_file
    if raw:
        content = blob
    elif source is not None:
        content = _mutate_text(source.read_text(encoding="utf-8"), data)
    else:
        content = json.dumps(
            {data.draw(st.sampled_from(["modelDefaults", "model_defaults", "defaults", "x"])):
             data.draw(JSON_VALUES)}
        ).encode()  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    before = snapshot(w.root)
    state = w.root / "fuzz-data-state.json"
    state.unlink(missing_ok=True)
    code, doc = main(
        w, "wizard", "init", "--state", str(state), "--project-root", str(w.project),
        "--host", "terminal", "--task-type", "requirements-discovery", env=env,
    )  # fmt: skip
    if code == 2:
        assert str(target) in doc["error"] or doc.get("file") == str(target), doc
        assert snapshot(w.root) == before and not state.exists()
    else:
        assert code == 0, doc
        state.unlink()
    assert target.read_bytes() == content


# -------------------------------------------------------------------- approved plans

PLAN = """---
approved: true
---
# Plan

## Stage 1 — build

Conformance tests: stage-1 — {root}/qa/scripts/stage-1.sh (requires=[io])

## Stage 2 — docs

Conformance exemption: documentation only.
"""


@SETTINGS
@given(data=st.data(), raw=st.booleans(), blob=st.binary(max_size=400))
def test_random_approved_plans(data: st.DataObject, raw: bool, blob: bytes) -> None:
    w = world()
    root = ".okstra/tasks/grp/plan"
    content = blob if raw else _mutate_text(PLAN.format(root=root), data)
    plan = w.project / "fuzz-plan.md"
    plan.write_bytes(content)
    before = snapshot(w.project)
    extra = ["--approved-plan", "fuzz-plan.md", "--dry-run", "--launch", "none"]
    argv = prepare_argv(w.project, task_id="plan", task_type="implementation", extra=extra)
    code, doc = main(w, *argv)
    assert code in (0, 2), doc
    if code == 0:
        assert doc["dryRun"] is True
    assert snapshot(w.project) == before, "a dry run or a refused plan wrote something"


# ---------------------------------------------------------------------------- argv

FLAGS = ["--project-root", "--task-group", "--task-id", "--task-type", "--brief",
         "--approved-plan", "--directive", "--related-tasks", "--host", "--entry-mode",
         "--role-count", "--role-model", "--host-session-context-json", "--state"]  # fmt: skip
VALUES = st.one_of(
    TEXT,
    st.sampled_from(
        ["analyser=2", "analyser=x", "analyser=", "=2", "critic=1", "leader=claude/opus-4.6",
         "analyser=codex/gpt-5.6-sol", "analyser=nope/x", "bogus=1", "analyser=2=3", "{}",
         '{"model": 1}', "[", "requirements-discovery", "implementation", "terminal",
         "claude-code", "current-session", "brief.md", "plan.md", "grp", "tsk"]
    ),
)  # fmt: skip


@SETTINGS
@given(tokens=st.lists(st.tuples(st.sampled_from(FLAGS), VALUES), max_size=8),
       base=st.booleans(), junk=st.lists(TEXT, max_size=2))  # fmt: skip
def test_random_prepare_argv(tokens: list[tuple[str, str]], base: bool, junk: list[str]) -> None:
    w = world()
    argv = prepare_argv(w.project)[1:] if base else []
    for flag, value in tokens:
        if "\x00" in value:
            continue
        argv.append(f"{flag}={value}")
    argv += [j for j in junk if "\x00" not in j]
    before = snapshot(w.project)
    code, doc = main(w, "prepare", *argv, "--dry-run", "--launch", "none")
    assert code in (0, 1, 2), doc
    assert snapshot(w.project) == before


@SETTINGS
@given(tokens=st.lists(st.tuples(st.sampled_from(["--task-type", "--role-count", "--role-model",
                                                  "--host", "--entry-mode", "--role"]),
                                 VALUES), max_size=6))  # fmt: skip
def _fuzz_team_and_models_argv(tokens: list[tuple[str, str]]) -> None:
    w = world()
    argv = [f"{flag}={value}" for flag, value in tokens if "\x00" not in value]
    command = "team" if not any(a.startswith("--role=") for a in argv) else "models"
    if command == "models":
        argv = [a for a in argv if a.startswith("--role=")]
    code, doc = main(w, command, *argv, "--json")
    if code == 1:
        assert "candidates" in doc and "constraints" in doc, doc


# ------------------------------------------------------------ the subprocess sample


def test_a_subprocess_sample_exits_2_without_a_traceback() -> None:
    w = world()
    rng = random.Random(int(os.environ.get("OKSTRA_SEED", "7")))
    bad_state = w.root / "bad-state.json"
    bad_answers = w.root / "bad-answers.json"
    cases: list[tuple[str, ...]] = []
    for i in range(SUBPROCESS_SAMPLE):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        bad_state.with_name(f"bad-state-{i}.json").write_bytes(blob)
        bad_answers.with_name(f"bad-answers-{i}.json").write_bytes(blob[::-1] + b"[")
        cases += [
            ("wizard", "step", "--state", str(bad_state.with_name(f"bad-state-{i}.json")),
             "--answer", "x"),
            ("wizard", "init", "--project-root", str(w.project), "--answers",
             str(bad_answers.with_name(f"bad-answers-{i}.json"))),
            ("prepare", *prepare_argv(w.project)[1:], "--role-count",
             f"analyser={rng.choice(['x', '-1', '', '99', 'true'])}", "--dry-run"),
        ]  # fmt: skip
    cases.append(("prepare", "--bogus-flag"))
    cases.append(("wizard", "step"))
    for case in cases:
        before = snapshot(w.root)
        run = okstra(w, *case)
        assert_clean_failure(run, code=2)
        assert snapshot(w.root) == before, case


def test_random_team_and_models_argv() -> None:
    _fuzz_team_and_models_argv()
