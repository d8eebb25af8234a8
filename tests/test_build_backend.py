"""okstra's in-tree build backend (build_backend/okstra_build.py), hook by hook.

The backend is called in-process here, as pip calls it in its build environment (the
source tree as the current directory). What pip does with the results (installing the
wheel, running the command) is tests/test_packaging.py's part.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
DATA = {"prompts": "okstra_core/_data/prompts", "screens": "okstra_tui/_data/screens"}


def _load_backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "okstra_build", REPO / "build_backend" / "okstra_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


backend = _load_backend()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        name = backend.build_wheel(str(out))
    return out / name


def _members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _pyproject() -> dict:
    with (REPO / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


def test_the_build_system_needs_nothing_installed() -> None:
    system = _pyproject()["build-system"]
    assert system["requires"] == []
    assert system["build-backend"] == "okstra_build"
    assert backend.get_requires_for_build_wheel() == []
    assert backend.get_requires_for_build_editable() == []
    assert backend.get_requires_for_build_sdist() == []


def test_the_wheel_carries_every_tracked_file_of_the_packages(built: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "okstra", "okstra_core", "okstra_tui", *DATA],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    expected = set()
    for name in tracked:
        top, _, rest = name.partition("/")
        expected.add(f"{DATA[top]}/{rest}" if top in DATA else name)
    names = set(_members(built))
    assert expected - names == set()
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_record_lists_every_member_with_its_hash_and_size(built: Path) -> None:
    members = _members(built)
    (record_name,) = [n for n in members if n.endswith(".dist-info/RECORD")]
    rows = [line.split(",") for line in members[record_name].decode().splitlines()]
    assert sorted(row[0] for row in rows) == sorted(members)
    for name, digest, size in rows:
        if name == record_name:
            assert (digest, size) == ("", "")
            continue
        data = members[name]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        assert digest == f"sha256={expected.decode()}", name
        assert int(size) == len(data), name


def test_metadata_says_what_pyproject_says(built: Path) -> None:
    members = _members(built)
    (metadata,) = [v for n, v in members.items() if n.endswith(".dist-info/METADATA")]
    msg = Parser().parsestr(metadata.decode())
    project = _pyproject()["project"]
    assert msg["Metadata-Version"] == "2.4"
    assert msg["Name"] == project["name"]
    assert msg["Version"] == project["version"]
    assert msg["Summary"] == project["description"]
    assert msg["Requires-Python"] == project["requires-python"]
    assert msg["License-Expression"] == project["license"]
    assert msg.get_all("License-File") == ["LICENSE"]
    assert msg.get_payload() == (REPO / "README.md").read_text(encoding="utf-8")
    requires = [Requirement(text) for text in msg.get_all("Requires-Dist")]
    plain = [str(r) for r in requires if r.marker is None]
    assert plain == [str(Requirement(t)) for t in project["dependencies"]]
    # Each extra's requirements apply with that extra, and only with it.
    assert msg.get_all("Provides-Extra") == list(project["optional-dependencies"])
    for extra, texts in project["optional-dependencies"].items():
        chosen = [
            r.name for r in requires if r.marker is not None and r.marker.evaluate({"extra": extra})
        ]
        assert chosen == [Requirement(t).name for t in texts]
        unchosen = [
            r for r in requires if r.marker is not None and r.marker.evaluate({"extra": ""})
        ]
        assert unchosen == []


def test_wheel_metadata_and_license_files(built: Path) -> None:
    members = _members(built)
    info = "okstra-" + _pyproject()["project"]["version"] + ".dist-info"
    wheel = Parser().parsestr(members[f"{info}/WHEEL"].decode())
    assert wheel["Wheel-Version"] == "1.0"
    assert wheel["Root-Is-Purelib"] == "true"
    assert wheel["Tag"] == "py3-none-any"
    assert members[f"{info}/licenses/LICENSE"] == (REPO / "LICENSE").read_bytes()
    assert members[f"{info}/entry_points.txt"].decode() == (
        "[console_scripts]\nokstra = okstra_tui.entry:cli\n"
    )


def test_the_prepared_metadata_is_the_wheels(built: Path, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        name = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    members = _members(built)
    prepared = sorted(p for p in (tmp_path / name).rglob("*") if p.is_file())
    assert prepared
    for file in prepared:
        assert file.read_bytes() == members[file.relative_to(tmp_path).as_posix()]


def test_builds_are_byte_identical(built: Path, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        again = tmp_path / backend.build_wheel(str(tmp_path))
    assert again.read_bytes() == built.read_bytes()
    assert not list(tmp_path.glob(".*partial"))


def test_a_wheel_built_from_the_sdist_is_the_same_wheel(built: Path, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        sdist = tmp_path / backend.build_sdist(str(tmp_path))
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "src", filter="data")
    (top,) = {n.split("/", 1)[0] for n in names}
    assert f"{top}/PKG-INFO" in names
    assert f"{top}/build_backend/okstra_build.py" in names
    out = tmp_path / "out"
    out.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path / "src" / top)
        rebuilt = out / backend.build_wheel(str(out))
    assert _members(rebuilt) == _members(built)


def test_the_editable_wheel_points_at_the_tree(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        name = backend.build_editable(str(tmp_path))
    members = _members(tmp_path / name)
    pth = [n for n in members if n.endswith(".pth")]
    assert pth == ["_okstra_editable.pth"]
    assert members[pth[0]].decode() == f"{REPO}\n"
    assert any(n.endswith(".dist-info/entry_points.txt") for n in members)


def _project(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "1"\n'
        + extra
        + '\n[tool.okstra.build]\npackages = ["pkg"]\n'
    )
    return tmp_path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('classifiers = ["x"]', "unsupported key(s) ['classifiers']"),
        ('readme = "README.rst"', "readme: expected a .md file name"),
        ('license = {text = "MIT"}', "license: expected an SPDX string"),
        ('license-files = ["NOPE*"]', "license-files: no file matches"),
    ],
)
def test_a_project_it_cannot_build_is_refused_by_name(
    tmp_path: Path, extra: str, message: str
) -> None:
    root = _project(tmp_path, extra)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        with pytest.raises(backend.BuildError, match=r"pyproject\.toml \[project\].*") as err:
            backend.build_wheel(str(tmp_path))
    assert message in str(err.value)
    assert not list(tmp_path.glob("*.whl"))


def test_a_missing_package_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    shutil.rmtree(root / "pkg")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        with pytest.raises(backend.BuildError, match="packages: 'pkg'"):
            backend.build_wheel(str(tmp_path))


def test_a_missing_data_directory_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with (root / "pyproject.toml").open("a") as fh:
        fh.write('\n[tool.okstra.build.data]\n"nope" = "pkg/_data"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        with pytest.raises(backend.BuildError, match="data: 'nope' is not a directory"):
            backend.build_wheel(str(tmp_path))
    assert not list(tmp_path.glob("*.whl"))


def test_a_bad_source_date_epoch_is_named(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        mp.setenv("SOURCE_DATE_EPOCH", "yesterday")
        with pytest.raises(backend.BuildError, match="SOURCE_DATE_EPOCH: expected whole seconds"):
            backend.build_wheel(str(tmp_path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("python", "platform", "expected"),
    [("3.11", "linux", True), ("3.10", "linux", False), ("3.11", "win32", False)],
)
def test_an_extras_requirement_keeps_its_own_marker(
    python: str, platform: str, expected: bool
) -> None:
    text = backend._with_extra('x>=1; python_version >= "3.11" and sys_platform == "linux"', "dev")
    marker = Requirement(text).marker
    assert marker is not None
    env = {"python_version": python, "sys_platform": platform}
    assert marker.evaluate({**env, "extra": "dev"}) is expected
    assert marker.evaluate({**env, "extra": "other"}) is False
