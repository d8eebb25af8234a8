"""The validated catalog cache: reused across processes, never trusted for changed files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core import derived
from okstra_core.catalog import loaders
from okstra_core.catalog.loaders import load_catalog
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError

PROVIDER = """id = "cached"
display_label = "{label}"
cli = "cached-cli"
roles = ["leader", "analyser"]

[launch]
version = ["{{cli}}", "--version"]
new = ["{{cli}}", "--session-id", "{{session_id}}", "--model", "{{model}}",
  "--append-system-prompt-file", "{{prompt_file}}", "--", "{{kickoff}}"]
resume = ["{{cli}}", "--resume", "{{session_id}}", "--model", "{{model}}"]
session_id = "uuid4"

[[models]]
id = "m1"
display = "Model one"
execution = "m1"
"""


@pytest.fixture
def env(okstra_home: Path, tmp_path: Path) -> Environment:
    providers = okstra_home / "config" / "providers"
    providers.mkdir(parents=True)
    (providers / "cached.toml").write_text(PROVIDER.format(label="First"), encoding="utf-8")
    return Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": "/usr/bin:/bin"})


def _entries(okstra_home: Path) -> list[Path]:
    directory = okstra_home / "cache" / "catalog"
    return sorted(directory.iterdir()) if directory.is_dir() else []


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Forget this process's catalogs (as a new process would); count validations."""
    monkeypatch.setattr(loaders, "_CATALOGS", {})
    monkeypatch.setattr(loaders, "_CACHE", {})
    built: list[int] = []
    real = loaders._build_catalog

    def counting(inputs: list[loaders._Input]) -> loaders.Catalog:
        built.append(1)
        return real(inputs)

    monkeypatch.setattr(loaders, "_build_catalog", counting)
    return built


def _label(catalog: loaders.Catalog) -> str:
    return catalog.provider("cached").display_label


def test_a_new_process_reuses_the_validated_catalog(
    env: Environment, okstra_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _fresh_process(monkeypatch)
    first = load_catalog(env)
    assert built == [1]
    (entry,) = _entries(okstra_home)
    assert entry.suffix == ".entry"
    assert entry.stat().st_mode & 0o777 == 0o600
    assert (okstra_home / "cache" / "catalog").stat().st_mode & 0o777 == 0o700
    assert load_catalog(env) is first  # same process: the same object

    built = _fresh_process(monkeypatch)
    again = load_catalog(env)
    assert built == []  # read from the cache, not validated again
    assert again is not first
    assert [p.id for p in again.providers] == [p.id for p in first.providers]
    assert again.profiles == first.profiles and dict(again.hosts) == dict(first.hosts)
    assert _label(again) == "First"


def test_a_changed_file_is_never_served_from_the_cache(
    env: Environment, okstra_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_catalog(env)
    path = okstra_home / "config" / "providers" / "cached.toml"
    before = path.stat()
    # Same size, same mtime: only the bytes differ.
    path.write_text(PROVIDER.format(label="Other"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    built = _fresh_process(monkeypatch)
    assert _label(load_catalog(env)) == "Other"
    assert built == [1]
    assert len(_entries(okstra_home)) == 2


def test_a_bad_file_is_reported_and_not_cached(
    env: Environment, okstra_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = okstra_home / "config" / "providers" / "cached.toml"
    path.write_text(
        PROVIDER.format(label="First").replace('cli = "cached-cli"', "cli = 3"), "utf-8"
    )
    _fresh_process(monkeypatch)
    with pytest.raises(DataFileError, match="cli"):
        load_catalog(env)
    assert _entries(okstra_home) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "foreign-writable"])
def test_a_damaged_entry_is_ignored_and_rebuilt(
    env: Environment, okstra_home: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    load_catalog(env)
    (entry,) = _entries(okstra_home)
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    elif damage == "garbage":
        entry.write_bytes(b"not a cache entry at all")
    else:
        entry.chmod(0o666)
    built = _fresh_process(monkeypatch)
    assert _label(load_catalog(env)) == "First"
    assert built == [1]
    # Rebuilt in place: the next process reads it again.
    assert entry.read_bytes() == blob
    assert entry.stat().st_mode & 0o777 == 0o600
    built = _fresh_process(monkeypatch)
    load_catalog(env)
    assert built == []


def test_an_unwritable_cache_directory_only_costs_time(
    env: Environment, okstra_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (okstra_home / "cache").write_text("a file where the cache directory goes", "utf-8")
    _fresh_process(monkeypatch)
    assert _label(load_catalog(env)) == "First"


LOADER = """
import sys
from okstra_core.catalog.loaders import load_catalog
from okstra_core.environment import Environment
sys.stdin.read()  # start together
catalog = load_catalog(Environment.real())
print(catalog.provider("cached").display_label)
"""


def test_concurrent_writers_leave_one_whole_entry(env: Environment, okstra_home: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOADER],
            env={**os.environ, "OKSTRA_HOME": str(okstra_home)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outputs = [p.communicate("go", timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6
    assert outputs == ["First\n"] * 6
    entries = _entries(okstra_home)
    assert [p.suffix for p in entries] == [".entry"]  # no temporary file left behind
    cache = okstra_home / "cache"
    assert derived.recall_value(cache, loaders.CATALOG, entries[0].stem, loaders.Catalog)


# A process that loads the catalog and says whether it needed pydantic to do it.
PYDANTIC_FREE = """
import json, sys
import okstra_core.derived, okstra_core.catalog.loaders, okstra_core.catalog.models
from okstra_core.catalog.loaders import load_catalog
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
try:
    catalog = load_catalog(Environment.real())
    out = {"label": catalog.provider("cached").display_label}
except DataFileError as exc:
    out = {"file": exc.path, "field": exc.field, "message": exc.message}
out["imported"] = sorted(m for m in ("pydantic", "pydantic_core") if m in sys.modules)
print(json.dumps(out))
"""


def _load_in_a_new_process(okstra_home: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PYDANTIC_FREE],
        env={**os.environ, "OKSTRA_HOME": str(okstra_home)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_a_catalog_from_the_cache_needs_no_pydantic(env: Environment, okstra_home: Path) -> None:
    # The first process parses and validates the files (pydantic checks them)...
    assert _load_in_a_new_process(okstra_home) == {
        "label": "First",
        "imported": ["pydantic", "pydantic_core"],
    }
    assert len(_entries(okstra_home)) == 1
    # ...the next one reads the validated catalog back without importing pydantic.
    assert _load_in_a_new_process(okstra_home) == {"label": "First", "imported": []}


def test_a_one_byte_change_is_validated_again_and_named_when_wrong(
    env: Environment, okstra_home: Path
) -> None:
    path = okstra_home / "config" / "providers" / "cached.toml"
    assert _load_in_a_new_process(okstra_home)["imported"] == ["pydantic", "pydantic_core"]
    assert _load_in_a_new_process(okstra_home)["imported"] == []
    # One byte (same size): a miss, validated again.
    path.write_text(PROVIDER.format(label="Firsu"), encoding="utf-8")
    assert _load_in_a_new_process(okstra_home) == {
        "label": "Firsu",
        "imported": ["pydantic", "pydantic_core"],
    }
    assert len(_entries(okstra_home)) == 2
    # One byte that breaks a rule across fields (a model id must be lower-case).
    path.write_text(PROVIDER.format(label="Firsu").replace('id = "m1"', 'id = "M1"'), "utf-8")
    assert _load_in_a_new_process(okstra_home) == {
        "file": str(path),
        "field": "models[0].id",
        "message": "expected an id of lower-case letters, digits, '.', '-', '_', got 'M1'",
        "imported": ["pydantic", "pydantic_core"],
    }
    # One byte that breaks a type (a number where a string goes), and a nested unknown
    # key: each named by file and field, with what was expected.
    path.write_text(
        PROVIDER.format(label="Firsu").replace('execution = "m1"', "execution = 11"), "utf-8"
    )
    report = _load_in_a_new_process(okstra_home)
    assert (report["file"], report["field"]) == (str(path), "models[0].execution")
    assert report["message"] == "expected a string, got an integer (11)"
    path.write_text(PROVIDER.format(label="Firsu") + "sorts = 1\n", "utf-8")
    report = _load_in_a_new_process(okstra_home)
    assert (report["file"], report["field"]) == (str(path), "models[0].sorts")
    assert report["message"] == (
        "unknown key 'sorts': expected one of id, display, execution, aliases, version, "
        "default_for, roles"
    )
    assert len(_entries(okstra_home)) == 2  # nothing stored for a bad file
