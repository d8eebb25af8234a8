"""A prepare that extends a task manifest or project.json checks it, unless okstra wrote
exactly those bytes (`okstra_core.documents.trust`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from okstra_core import derived
from okstra_core.documents import trust
from okstra_core.documents.task import ProjectDocument, TaskManifest
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.prepare import prepare
from tests.prepare.prepare_support import request_of
from tests.prepare.test_prepare_pipeline import snapshot


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The documents `parse` checked, by name, as prepare goes."""
    seen: list[str] = []
    for cls in (TaskManifest, ProjectDocument):
        original = cls.parse.__func__  # type: ignore[attr-defined]

        def spy(kind: type, data: object, *, path: Path | None = None, _f=original) -> object:  # type: ignore[no-untyped-def]
            seen.append(kind.__name__)
            return _f(kind, data, path=path)

        monkeypatch.setattr(cls, "parse", classmethod(spy))
    yield seen


def _task(project: Path) -> Path:
    return project / ".okstra/tasks/perf/widget/task-manifest.json"


def _project_json(project: Path) -> Path:
    return project / ".okstra/project.json"


def test_okstras_own_bytes_are_extended_without_a_check(
    project: Path, env: Environment, okstra_home: Path, checked: list[str]
) -> None:
    prepare(request_of(project), launch="none", environment=env)
    assert checked == []  # a new task and a new project: okstra's own values
    # The confirm screen's dry run reads them the same way.
    prepare(request_of(project), launch="none", environment=env, dry_run=True)
    assert checked == []
    prepare(request_of(project), launch="none", environment=env)
    prepare(request_of(project, task_id="gadget"), launch="none", environment=env)
    assert checked == []  # the files are exactly what the earlier prepares wrote
    manifest = orjson.loads(_task(project).read_bytes())
    assert manifest["latestRun"]["runId"] == "requirements-discovery-002"
    tasks = orjson.loads(_project_json(project).read_bytes())["tasks"]
    assert set(tasks) == {"perf/widget", "perf/gadget"}


def test_a_file_edited_by_hand_is_checked_and_kept(
    project: Path, env: Environment, okstra_home: Path, checked: list[str]
) -> None:
    prepare(request_of(project), launch="none", environment=env)
    data = orjson.loads(_project_json(project).read_bytes())
    data["note"] = "mine"
    _project_json(project).write_bytes(orjson.dumps(data))
    prepare(request_of(project), launch="none", environment=env)
    assert checked == ["ProjectDocument"]
    assert orjson.loads(_project_json(project).read_bytes())["note"] == "mine"
    # Written by okstra again: recognised from now on.
    prepare(request_of(project), launch="none", environment=env)
    assert checked == ["ProjectDocument"]


def test_a_bad_edit_is_refused_naming_the_field_and_nothing_is_written(
    project: Path, env: Environment, okstra_home: Path, checked: list[str]
) -> None:
    prepare(request_of(project), launch="none", environment=env)
    data = orjson.loads(_task(project).read_bytes())
    data["roleExecutionIndex"][0]["modelRef"] = 7
    _task(project).write_bytes(orjson.dumps(data))
    before = snapshot(project, okstra_home)
    with pytest.raises(DataFileError) as caught:
        prepare(request_of(project), launch="none", environment=env)
    assert caught.value.path == str(_task(project))
    assert "roleExecutionIndex[0].modelRef" in caught.value.render()
    assert checked == ["TaskManifest"]
    # The run number reserved under the task lock was given back: nothing changed.
    assert snapshot(project, okstra_home) == before


@pytest.mark.parametrize("move", [Path.rename, shutil.copyfile])
def test_a_marker_under_another_name_recognises_nothing(
    project: Path, env: Environment, okstra_home: Path, checked: list[str], move: object
) -> None:
    """A marker renamed (or copied) to the name of other bytes' marker: those bytes are
    still checked, and a bad edit is refused."""
    prepare(request_of(project), launch="none", environment=env)
    path = _task(project)
    good = path.read_bytes()
    data = orjson.loads(good)
    data["roleExecutionIndex"][0]["modelRef"] = 7
    bad = orjson.dumps(data)
    path.write_bytes(bad)
    markers = okstra_home / "cache" / "documents"
    marker = markers / f"{trust._key(path, good)}.entry"
    assert marker.is_file()
    move(marker, markers / f"{trust._key(path, bad)}.entry")  # type: ignore[operator]
    with pytest.raises(DataFileError) as caught:
        prepare(request_of(project), launch="none", environment=env)
    assert "roleExecutionIndex[0].modelRef" in caught.value.render()
    assert checked == ["TaskManifest"]


def test_without_the_cache_every_file_is_checked(
    project: Path, env: Environment, okstra_home: Path, checked: list[str]
) -> None:
    prepare(request_of(project), launch="none", environment=env)
    shutil.rmtree(okstra_home / "cache")
    prepare(request_of(project), launch="none", environment=env)
    assert sorted(checked) == ["ProjectDocument", "TaskManifest"]


def test_recognised_only_for_the_same_path_bytes_and_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "project.json"
    data = b'{"projectId": "p"}\n'
    assert not trust.recognised(path, data, cache)
    trust.remember(path, data, cache)
    assert trust.recognised(path, data, cache)
    assert not trust.recognised(path, data + b" ", cache)  # one byte more
    assert not trust.recognised(path, data.replace(b"p", b"q"), cache)  # one byte other
    assert not trust.recognised(tmp_path / "other.json", data, cache)
    # Bytes another okstra (another version) wrote are not recognised.
    monkeypatch.setattr(derived, "_STAMPS", {})
    monkeypatch.setattr(derived, "__version__", "0.0.0")
    assert not trust.recognised(path, data, cache)


def test_a_marker_anyone_may_write_is_ignored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "project.json"
    trust.remember(path, b"{}", cache)
    (marker,) = (cache / "documents").iterdir()
    marker.chmod(0o666)
    assert not trust.recognised(path, b"{}", cache)
