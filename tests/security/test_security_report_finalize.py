"""`report finalize --data` writes only a report (trust audit, second round, 4).

Repros: given the run's own `run-manifest.json` it damaged the run; given the user's
`config.json`, `okstra models` failed from then on; integers over 2^64 and precise
decimals became floats; nesting 254–1023 deep ended in exit 70.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core.paths import user_dirs
from tests.life.worker_support import World

RUN = "perf/widget/requirements-discovery-001"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    w = World(tmp_path_factory.mktemp("finalize"))
    w.prepare()
    return w


def _finalize(world: World, target: Path | str) -> tuple[int, str]:
    proc = world.okstra("report", "finalize", RUN, "--data", str(target), timeout=60)
    said = (proc.stdout + proc.stderr).decode()
    assert "Traceback" not in said
    return proc.returncode, said


def test_it_refuses_okstra_s_own_files(world: World) -> None:
    config = user_dirs(world.env).config / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("{}\n", encoding="utf-8")
    home_file = Path(world.env["OKSTRA_HOME"]) / "x.json"
    home_file.write_text("{}\n", encoding="utf-8")
    inside = world.project / ".okstra" / "elsewhere.json"
    inside.write_text("{}\n", encoding="utf-8")
    # A report-named file is allowed in the run's own directory only: not in another
    # directory of .okstra, not in a worker's directory below the run.
    elsewhere_report = world.project / ".okstra" / "final-report.json"
    elsewhere_report.write_text("{}\n", encoding="utf-8")
    below = world.run_dir / "workers" / "final-report.json"
    below.parent.mkdir(exist_ok=True)
    below.write_text("{}\n", encoding="utf-8")
    targets = (
        world.run_dir / "run-manifest.json", world.run_dir / "run-inputs.json",
        config, home_file, inside, elsewhere_report, below,
    )  # fmt: skip
    for target in targets:
        before = target.read_bytes()
        code, said = _finalize(world, target)
        assert code == 2, (target, said)
        assert target.read_bytes() == before, target
    code, said = _finalize(world, world.run_dir / "run-manifest.json")
    assert ".okstra" in said
    assert world.okstra("models", "--json").returncode == 0


def test_a_report_beside_its_run_is_finalized(world: World) -> None:
    # The lead may keep its report in the run's directory (the demo does).
    report = world.run_dir / "final-report.json"
    report.write_text('{"summary": "x"}\n', encoding="utf-8")
    code, said = _finalize(world, report)
    assert code == 0, said
    assert '"executionIdentityVersion": 2' in report.read_text(encoding="utf-8")


def test_it_keeps_every_other_value_byte_for_byte(world: World) -> None:
    report = world.project / "report.json"
    text = (
        '{"big": 123456789012345678901234567890, "neg": -18446744073709551617,\n'
        ' "dec": 0.1000000000000000055511151231257827, "exp": 1.0E+400, "tiny": 5e-400,\n'
        ' "esc": "\\u00e9\\ud83d\\ude00 \\/", "deep": ' + "[" * 300 + "]" * 300 + ",\n"
        ' "executionRoles": "old", "z": {"k": [1.50, 2]}}\n'
    )
    report.write_text(text, encoding="utf-8")
    code, said = _finalize(world, report)
    assert code == 0, said
    after = report.read_text(encoding="utf-8")
    for kept in (
        '"big": 123456789012345678901234567890',
        '"neg": -18446744073709551617',
        '"dec": 0.1000000000000000055511151231257827',
        '"exp": 1.0E+400',
        '"tiny": 5e-400',
        '"esc": "\\u00e9\\ud83d\\ude00 \\/"',
        '"deep": ' + "[" * 300 + "]" * 300,
        '"z": {"k": [1.50, 2]}',
    ):
        assert kept in after, kept
    assert '"executionRoles": "old"' not in after and '"executionIdentityVersion": 2' in after


def test_deep_nesting_is_exit_2_never_70(world: World) -> None:
    report = world.project / "deep.json"
    for depth in (254, 1023, 5000):
        report.write_text('{"x": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
        code, said = _finalize(world, report)
        assert code in (0, 2) and code != 70, (depth, said)
    report.write_text("[1, 2]", encoding="utf-8")
    code, said = _finalize(world, report)
    assert code == 2 and "JSON object" in said
