"""The quarantine of fixes for the pinned Textual (`okstra_tui/_textual_fixes.py`).

Each reproduction written in `docs/textual-fixes.md` runs in a fresh interpreter against
the installed Textual: without the fixes it still ends with the exception the page
names (else Textual fixed the bug, and okstra's fix is to go), with them it passes.
The fixes are installed by `make_app` only, never at import, and only on the pinned
version.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core.errors import OkstraError
from okstra_tui import _textual_fixes

DOC = Path(__file__).resolve().parents[2] / "docs" / "textual-fixes.md"
SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)
SCRIPT = re.compile(r"```python\n(.*?)```\n\nRaises: `(\w+)`", re.DOTALL)


def _reproductions() -> list[tuple[str, str, str]]:
    """(section, script, the exception it ends with) for each report of the page."""
    text = DOC.read_text(encoding="utf-8")
    starts = [m.start() for m in SECTION.finditer(text)] + [len(text)]
    found = []
    for start, end in itertools.pairwise(starts):
        section = text[start:end]
        match = SCRIPT.search(section)
        assert match, f"no reproduction and 'Raises:' line in {section.splitlines()[0]!r}"
        found.append((section.splitlines()[0], match.group(1), match.group(2)))
    return found


REPRODUCTIONS = _reproductions()


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _replaced_methods() -> list[str]:
    """`Class.method` of each method `apply()` replaces (read from the module's code)."""
    tree = ast.parse(Path(_textual_fixes.__file__).read_text(encoding="utf-8"))
    apply = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "apply")
    return [
        f"{target.value.id}.{target.attr}"
        for node in ast.walk(apply)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
    ]


def test_the_page_has_a_report_for_each_fix() -> None:
    # Nine methods: the palette's two watchers and its search worker share report 3.
    assert len(REPRODUCTIONS) == 7
    replaced = _replaced_methods()
    text = DOC.read_text(encoding="utf-8")
    # Every replaced method is named in a report (some reports cover two methods).
    named = [m for m in replaced if re.search(rf"(?<!\w){m.split('.')[1]}(?!\w)", text)]
    assert named == replaced and len(replaced) == 9


@pytest.mark.parametrize(
    ("title", "script", "error"), REPRODUCTIONS, ids=[r[0][3:30] for r in REPRODUCTIONS]
)
def test_each_reproduction_fails_without_the_fixes_and_passes_with_them(
    tmp_path: Path, title: str, script: str, error: str
) -> None:
    bare = _run(script, tmp_path)
    assert bare.returncode != 0, f"{title}: no longer fails on this Textual"
    last = bare.stderr.strip().splitlines()[-1]
    assert re.search(rf"\b{error}\b", last), (title, last)
    fixed = _run("from okstra_tui._textual_fixes import apply\napply()\n" + script, tmp_path)
    assert fixed.returncode == 0, (title, fixed.stderr[-2000:])


IMPORT_ONLY = """
from textual.widgets import OptionList
before = OptionList._move_page
import okstra_tui.app
assert OptionList._move_page is before, "patched at import"
from okstra_tui.app import make_app
make_app(project_root=".")
assert OptionList._move_page is not before, "not installed by make_app"
"""


def test_importing_the_app_patches_nothing_and_make_app_installs_the_fixes(
    tmp_path: Path,
) -> None:
    proc = _run(IMPORT_ONLY, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_another_textual_version_is_refused_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_tui.app import make_app

    assert _textual_fixes.installed_version() == _textual_fixes.PINNED
    monkeypatch.setattr(_textual_fixes, "_applied", False)
    monkeypatch.setattr(_textual_fixes, "installed_version", lambda: "99.0.0")
    with pytest.raises(OkstraError) as caught:
        make_app(project_root=".")
    message = caught.value.render()
    assert "99.0.0" in message and _textual_fixes.PINNED in message
    assert "docs/textual-fixes.md" in message


def test_the_pin_in_pyproject_is_the_version_the_fixes_were_written_for() -> None:
    pyproject = (DOC.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"textual=={_textual_fixes.PINNED}"' in pyproject
