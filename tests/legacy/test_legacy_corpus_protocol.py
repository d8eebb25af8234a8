"""The fixture corpus through the installed `okstra` (show / step / outcome / list /
prepare): files of the earlier okstra resume or prepare, and stay byte-identical."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from legacy_support import FAKE_HELP, FIXTURES

from okstra_core.paths import user_dirs

HOME_PROJECT = "/home/dev/shop"


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]


def _run(*args: str) -> tuple[dict[str, Any], int]:
    done = subprocess.run(
        [*_okstra(), *args], capture_output=True, env=dict(os.environ), timeout=120, check=False
    )
    assert done.stdout, done.stderr.decode()
    return orjson.loads(done.stdout), done.returncode


@pytest.fixture(autouse=True)
def _cli_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    for brief in ("chk-114", "chk-120"):
        path = root / "docs" / "briefs" / f"{brief}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {brief}\n\nGuest checkout: find what breaks.\n")
    return root


def _place(name: str, project: Path, *, wizards: bool = False, tmp: Path | None = None) -> Path:
    """A corpus file as the earlier okstra wrote it, for a project at `project`."""
    text = (FIXTURES / name).read_text().replace(HOME_PROJECT, str(project))
    directory = user_dirs(dict(os.environ)).wizards if wizards else (tmp or project.parent) / "w"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def _companions(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.v2.*.json"))


@pytest.mark.usefixtures("fake_path")
def test_confirmed_v1_with_a_non_slug_id_is_confirmed_and_prepares(project: Path) -> None:
    v1 = _place("v1_confirmed_rd.json", project)
    original = v1.read_bytes()

    shown, code = _run("wizard", "show", "--state", str(v1))
    assert code == 0 and shown["ok"], shown
    assert shown["legacy"] is True
    # Saved confirmed: confirmed here too (its answers re-checked), no confirm asked.
    assert shown["prompt"]["kind"] == "done", shown["prompt"]
    assert any("'CHK-114'" in note and "'chk-114'" in note for note in shown["notes"])
    texts = [line["text"] for line in shown["confirmation"]["lines"]]
    assert any("checkout/chk-114" in text for text in texts), texts
    history = {h["stepId"]: h for h in shown["history"]}
    assert "CHK-114" in history["task_id"]["echo"]

    outcome, code = _run("wizard", "outcome", "--state", str(v1))
    assert code == 0 and outcome["ok"], outcome
    argv = outcome["renderArgv"]
    assert "--task-id=chk-114" in argv and "--task-group=checkout" in argv

    prepared, code = _run("prepare", "--state", str(v1), "--launch", "none")
    assert code == 0 and prepared["ok"], prepared
    assert (project / ".okstra" / "tasks" / "checkout" / "chk-114").is_dir()
    assert v1.read_bytes() == original
    assert _companions(v1) == []  # nothing to save: it was confirmed as it was


@pytest.mark.usefixtures("fake_path")
def test_earlier_v2_file_resumes_to_an_outcome(project: Path) -> None:
    source = _place("v2_rd_role_block.json", project)
    original = source.read_bytes()
    digest = hashlib.sha256(original).hexdigest()

    shown, code = _run("wizard", "show", "--state", str(source))
    assert code == 0 and shown["ok"], shown
    assert shown["legacy"] is True
    assert shown["state"] == str(source.with_name(f"{source.name}.v2.{digest}.json"))
    # Everything the earlier wizard asked is answered; this okstra's translator is new.
    assert shown["prompt"]["id"] == "role-add:translator", shown["prompt"]

    prompt = shown["prompt"]
    for _ in range(10):
        if prompt["kind"] == "done":
            break
        answer = "confirm" if prompt["id"] == "confirm" else prompt["default"]
        result, code = _run("wizard", "step", "--state", str(source), "--answer", answer)
        assert code == 0 and result["ok"], result
        prompt = result["next"]
        assert source.read_bytes() == original
    assert prompt["kind"] == "done"

    outcome, code = _run("wizard", "outcome", "--state", str(source))
    assert code == 0 and outcome["ok"], outcome
    assert "--role-model=analyser=codex/gpt-5.6-sol" in outcome["renderArgv"]
    assert outcome["provenance"]["role:analyser#2"] == "converted:v2", outcome["provenance"]
    dry, code = _run("prepare", "--state", str(source), "--dry-run", "--launch", "none")
    assert code == 0 and dry["ok"], dry
    assert source.read_bytes() == original


@pytest.mark.usefixtures("fake_path")
def test_confirmed_earlier_v2_is_confirmed(project: Path) -> None:
    source = _place("v2_impl_confirmed_current_session.json", project)
    original = source.read_bytes()
    shown, code = _run("wizard", "show", "--state", str(source))
    assert code == 0 and shown["ok"], shown
    assert shown["prompt"]["kind"] == "done", shown["prompt"]
    assert any("selected_stages" in note for note in shown["notes"])
    assert source.read_bytes() == original


@pytest.mark.usefixtures("fake_path")
def test_list_reads_every_earlier_file_and_hides_their_companions(project: Path) -> None:
    v1 = _place("rd_spawn_workers_models.json", project, wizards=True)
    earlier = _place("v2_rd_role_block.json", project, wizards=True)
    early = _place("new_task_early.json", project, wizards=True)
    companion = orjson.loads((FIXTURES / "v2_rd_role_block.json").read_bytes())
    companion["legacySource"] = {
        "path": str(v1.resolve()),
        "sha256": hashlib.sha256(v1.read_bytes()).hexdigest(),
    }
    older = v1.with_name(f"{v1.name}.v2.json")
    older.write_bytes(orjson.dumps(companion, option=orjson.OPT_INDENT_2))
    before = {p: p.read_bytes() for p in (v1, earlier, early, older)}

    listed, code = _run("wizard", "list")
    assert code == 0 and listed["ok"], listed
    entries = {Path(w["path"]).name: w for w in listed["wizards"]}
    assert set(entries) == {v1.name, earlier.name, early.name}, entries
    assert all(w["problem"] is None and w["legacy"] for w in entries.values()), entries
    assert entries[early.name]["task"] == "onboarding/onb-2"

    # The earlier companion opened by name is its source's wizard, taken over.
    shown, code = _run("wizard", "show", "--state", str(older))
    assert code == 0 and shown["ok"], shown
    assert shown["source"] == str(v1)
    assert any("taken over" in note for note in shown["notes"])
    step, code = _run("wizard", "step", "--state", str(v1), "--no-submit")
    assert code == 0 and step["ok"], step
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.usefixtures("fake_path")
def test_invalid_companion_is_skipped_in_the_protocol(project: Path) -> None:
    v1 = _place("rd_spawn_workers_models.json", project)
    shown, code = _run("wizard", "step", "--state", str(v1), "--no-submit")
    assert code == 0 and shown["ok"], shown
    companion = _companions(v1)[0]
    data = orjson.loads(companion.read_bytes())
    data["roleModels"] = {"analyser": []}
    companion.write_bytes(orjson.dumps(data))

    again, code = _run("wizard", "show", "--state", str(v1))
    assert code == 0 and again["ok"], again
    assert any(str(companion) in note and "skipped" in note for note in again["notes"])
    assert again["state"].endswith(".1.json")
