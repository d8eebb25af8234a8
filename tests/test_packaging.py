"""The wheel: what it carries, and that it works installed on its own.

`prompts/` and `screens/` are data directories at the top of the checkout; the wheel
must carry every file of them as package data, and an installed okstra must find its
data with no checkout anywhere near.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import okstra_core

REPO = Path(__file__).resolve().parent.parent
# Source data dir → where the wheel puts it (pyproject's force-include).
DATA_DIRS = {
    "prompts": "okstra_core/_data/prompts",
    "screens": "okstra_tui/_data/screens",
    "demo": "okstra_core/_data/demo",
}
# What the wheel ships (prompts and screens data), as glob patterns inside the wheel.
REQUIRED = (
    "okstra_core/_data/prompts/profiles/*.md",
    "okstra_core/_data/prompts/providers/*.toml",
    "okstra_core/_data/demo/.okstra/project.json",
    "okstra_core/_data/prompts/hosts/*.toml",
    "okstra_core/_data/prompts/wizard.toml",
    "okstra_core/_data/prompts/templates/*.j2",
    "okstra_tui/_data/screens/*.tcss",
)

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _source_data_files() -> set[str]:
    """Every data file in the checkout, named as the wheel should name it."""
    expected = set()
    for source, target in DATA_DIRS.items():
        root = REPO / source
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            shipped_dot = rel.parts[:1] == (".okstra",) and rel.parts[1:] == ("project.json",)
            if path.is_file() and not any(
                (p.startswith(".") and not shipped_dot) or p == "__pycache__" for p in rel.parts
            ):
                expected.add(f"{target}/{rel.as_posix()}")
    return expected


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel once for this module, from the checkout."""
    out = tmp_path_factory.mktemp("wheel")
    # The build backend (hatchling) is installed with the tests: no index is asked.
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-q"]
    argv.append("--no-build-isolation")
    proc = _run([*argv, "-w", str(out), str(REPO)], out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("okstra-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_the_tests_run_against_the_installed_package() -> None:
    if os.environ.get("OKSTRA_TEST_INSTALLED") != "1":
        pytest.skip("only meaningful under scripts/test.sh, which installs the wheel")
    where = Path(okstra_core.__file__).resolve()
    assert "site-packages" in where.parts, where
    assert not where.is_relative_to(REPO / "okstra_core"), where


def test_wheel_carries_every_data_file(wheel_names: set[str]) -> None:
    expected = _source_data_files()
    shipped = {
        name
        for name in wheel_names
        if any(name.startswith(target + "/") for target in DATA_DIRS.values())
    }
    assert expected - shipped == set(), "data files missing from the wheel"
    assert shipped - expected == set(), "files in the wheel's data dirs not in the checkout"


@pytest.mark.parametrize("pattern", REQUIRED)
def test_wheel_carries_the_data_the_spec_requires(wheel_names: set[str], pattern: str) -> None:
    from fnmatch import fnmatchcase

    # fnmatch's `*` crosses `/`; require the match to sit at the pattern's depth.
    depth = pattern.count("/")
    matches = [n for n in wheel_names if fnmatchcase(n, pattern) and n.count("/") == depth]
    assert matches, f"the wheel has nothing matching {pattern}"


def test_wheel_holds_only_okstras_packages(wheel_names: set[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1, tops
    # A top-level `prompts` or `screens` would clash in site-packages; `okstra` only
    # gives `python -m okstra`.
    assert tops - dist_info == {"okstra", "okstra_core", "okstra_tui", "okstra_demo"}
    assert not any("__pycache__" in name for name in wheel_names)


def test_wheel_declares_the_console_script(wheel: Path, wheel_names: set[str]) -> None:
    (entry_points,) = [n for n in wheel_names if n.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(entry_points).decode()
    assert "okstra = okstra_tui.entry:cli" in text


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new venv with only the wheel installed; its dependencies come from this venv.

    The dependencies are borrowed through a .pth file (appended to sys.path, after the
    venv's own site-packages) so the test needs no package index.
    """
    root = tmp_path_factory.mktemp("fresh")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    proc = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        root,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            root,
        ).stdout.strip()
    )
    # Written after the install, so pip could not mistake this venv's okstra for ours.
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_okstra_test_deps.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    yield env_dir


def test_installed_wheel_finds_its_data_away_from_the_checkout(
    fresh_venv: Path, tmp_path: Path
) -> None:
    python = fresh_venv / "bin" / "python"
    proc = _run(
        [
            str(python),
            "-c",
            "import okstra_core, okstra_core.paths as p;"
            "print(okstra_core.__file__); print(p.bundled_prompts_root())",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    module_file, prompts = (Path(line) for line in proc.stdout.splitlines())
    assert module_file.is_relative_to(fresh_venv), module_file
    assert prompts.is_relative_to(fresh_venv), prompts
    assert (prompts / "profiles").is_dir()


def test_installed_command_runs_away_from_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    okstra = str(fresh_venv / "bin" / "okstra")
    version = _run([okstra, "--version"], tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"okstra {okstra_core.__version__}"
    # `python -m okstra` is the same command.
    module = _run([str(fresh_venv / "bin" / "python"), "-m", "okstra", "--version"], tmp_path)
    assert module.returncode == 0, module.stderr
    assert module.stdout.strip() == version.stdout.strip()

    models = _run([okstra, "models", "--json"], tmp_path)
    assert models.returncode == 0, models.stdout + models.stderr
    payload = json.loads(models.stdout)
    # The model pool is read from the bundled providers: an empty pool means the
    # installed copy did not find its prompts/ data.
    assert payload["ok"] is True, payload
    assert payload["models"], payload
    assert {m["provider"] for m in payload["models"]} >= {"claude", "codex"}


def test_installed_wizard_starts_away_from_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    # The first prompt needs the profiles, the hosts and the wizard text (prompts/).
    project = tmp_path / "project"
    project.mkdir()
    init = _run(
        [
            str(fresh_venv / "bin" / "okstra"), "wizard", "init",
            "--state", str(tmp_path / "w.json"), "--project-root", str(project),
            "--host", "terminal",
        ],
        tmp_path,
    )  # fmt: skip
    assert init.returncode == 0, init.stdout + init.stderr
    payload = json.loads(init.stdout)
    assert payload["ok"] is True, payload
    assert "task_pick" in init.stdout
