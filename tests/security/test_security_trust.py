"""A fresh clone is trusted only once its owner says so (trust audit, second round, 3).

The agent CLIs run a project's own settings (hooks, MCP servers), and a worker's argv
switches off a CLI's own trust question (`gemini --skip-trust`): so no lead is
launched and no worker started in a project its person has not trusted. Each test
drops the suite's blanket trust (`untrusted`) and uses the installed `okstra`.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from okstra_core import trust
from tests.conftest import untrusted
from tests.life.worker_support import World, fake


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    untrusted(monkeypatch)
    w = World(tmp_path)
    w.prepare("--role-count", "analyser=1")  # --launch none: nothing of the project runs
    return w


def test_an_untrusted_project_starts_no_worker_until_trusted(world: World) -> None:
    before = (world.run_dir / "run-manifest.json").read_bytes()
    proc = world.okstra("worker", "start", world.run, "analyser#1", "--prompt", fake("Hi."))
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert f"okstra trust {world.project.resolve()}" in err and "not trusted" in err
    assert "Traceback" not in err and not world.log.exists()  # no CLI ran
    assert (world.run_dir / "run-manifest.json").read_bytes() == before
    assert not (world.run_dir / "workers").exists()
    code, doc = world.json("worker", "start", world.run, "analyser#1", "--prompt", fake("Hi."))
    assert code == 2 and doc["trustCommand"] == f"okstra trust {world.project.resolve()}"
    # Trusted once: it starts.
    proc = world.okstra("trust", str(world.project))
    assert proc.returncode == 0 and b"trusted" in proc.stdout, proc.stderr
    code, doc = world.start("analyser#1", fake("Hi.", tag="t"), "--surface", "background")
    assert code == 0, doc
    world.started("t")
    world.recorded_end(doc["roleExecutionRef"])


def test_trust_list_revoke_and_doctor(world: World) -> None:
    real = str(world.project.resolve())
    code, doc = world.json("doctor")
    assert doc["projectTrust"] == {
        "project": real,
        "trusted": False,
        "why": doc["projectTrust"]["why"],
    }
    assert "okstra trust" in doc["projectTrust"]["why"]
    assert b"-- project" in world.okstra("doctor").stdout
    assert world.okstra("trust").returncode == 0  # the current project
    code, doc = world.json("trust", "--list")
    assert code == 0 and [p["path"] for p in doc["projects"]] == [real]
    assert doc["projects"][0]["ownerUid"] == os.stat(real).st_uid
    code, doc = world.json("doctor")
    assert doc["projectTrust"]["trusted"] is True
    code, doc = world.json("trust", "--revoke")
    assert code == 0 and doc["changed"] is True
    assert world.json("trust", "--list")[1]["projects"] == []
    code, doc = world.json("trust", "--revoke", str(world.project))
    assert code == 0 and doc["changed"] is False
    proc = world.okstra("trust", str(world.tmp / "nowhere"))
    assert proc.returncode == 2 and b"nowhere" in proc.stderr


def test_prepare_launches_no_lead_in_an_untrusted_project(world: World) -> None:
    runs = world.run_dir.parent
    before = sorted(p.name for p in runs.iterdir())
    for launch in ("exec", "tmux"):
        proc = world.okstra(
            "prepare", "--project-root", str(world.project), "--task-group", "perf",
            "--task-id", "widget", "--task-type", "requirements-discovery",
            "--brief", "brief.md", "--host", "terminal", "--launch", launch,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        said = proc.stdout + proc.stderr  # prepare says it as JSON
        assert b"okstra trust" in said and b"launch the lead" in said, said
    assert sorted(p.name for p in runs.iterdir()) == before  # nothing written


def test_the_record_is_keyed_on_the_real_path_and_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    untrusted(monkeypatch)
    project = tmp_path / "p"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    assert not trust.verdict(project).trusted
    entry = trust.trust_project(link)  # as okstra trusts a project it creates
    assert entry.path == str(project.resolve()) and entry.owner_uid == os.getuid()
    assert trust.verdict(project).trusted and trust.verdict(link).trusted
    assert not trust.verdict(tmp_path).trusted  # a parent is not the project
    # Another owner now (the record says who owned it): trusted no more.
    record = trust.record_path()
    data = orjson.loads(record.read_bytes())
    data["projects"][0]["ownerUid"] = os.getuid() + 1
    record.write_bytes(orjson.dumps(data))
    found = trust.verdict(project)
    assert not found.trusted and "owns it now" in found.why
    with pytest.raises(trust.UntrustedProjectError) as refused:
        trust.require_trusted(project, doing="start a worker")
    assert refused.value.exit_code == 2
    assert f"okstra trust {project.resolve()}" in refused.value.render()
    # The variable trusts a directory and everything below it (absolute entries only).
    monkeypatch.setenv(trust.TRUSTED_ENV, f"relative:{tmp_path}")
    assert trust.verdict(project).trusted
    monkeypatch.setenv(trust.TRUSTED_ENV, "relative")
    assert not trust.verdict(project).trusted
