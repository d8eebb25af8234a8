"""The demo worker's work: small, real and deterministic, on the project it runs in.

Which work follows from the model okstra runs it with (its `--model`):

- `demo-scout` counts the words of the files its task names (default: the brief);
- `demo-tester` runs the project's own tests (`python -m unittest discover tests`);
- `demo-editor` proposes a change to the file its task names: with write access it
  makes it (in the directory okstra runs it in), read-only it shows the diff only;
- `demo-lead` writes a report from the findings its task carries.

Each returns its final message (markdown); nothing here calls a network.
"""

from __future__ import annotations

import collections
import difflib
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["FINDINGS", "MODELS", "files_named", "run_work"]

# The line after which a report writer's task carries the team's findings.
FINDINGS = "Findings of the team so far:"

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_FILE = re.compile(r"`(?P<path>[^`\s]+\.[A-Za-z0-9]+)`")
_TEST_TIMEOUT = 60.0
# The demo project's known bug (its brief): words compared case-sensitively.
_CASE_BUG = ("WORD.findall(text)", "WORD.findall(text.casefold())")


def files_named(task: str, root: Path) -> list[Path]:
    """The files of `root` the task names in backticks (`path.ext`), each once, in order."""
    seen: list[Path] = []
    for found in _FILE.finditer(task):
        path = (root / found["path"]).resolve()
        inside = path == root.resolve() or root.resolve() in path.parents
        if inside and path.is_file() and path not in seen:
            seen.append(path)
    return seen


def _rel(path: Path, root: Path) -> str:
    return str(path.relative_to(root.resolve()))


def count_words(task: str, root: Path, say: Callable[[str], None], writes: bool) -> str:
    files = files_named(task, root) or [p for p in (root / "brief.md",) if p.is_file()]
    if not files:
        return "## Word counts\n\nThe task names no file of the project to count."
    lines = ["## Word counts", ""]
    for path in files:
        say(f"counting the words of {_rel(path, root)}")
        words = [w.casefold() for w in _WORD.findall(path.read_text(encoding="utf-8"))]
        top = collections.Counter(words).most_common(5)
        shown = ", ".join(f"{word} ({count})" for word, count in top) or "none"
        lines.append(f"- `{_rel(path, root)}`: {len(words)} words; most frequent: {shown}")
    return "\n".join(lines)


def run_tests(task: str, root: Path, say: Callable[[str], None], writes: bool) -> str:
    argv = [sys.executable, "-m", "unittest", "discover", "tests"]
    if not (root / "tests").is_dir():
        return "## Tests\n\nThe project has no `tests/` directory: nothing to run."
    say("running: python -m unittest discover tests")
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, text=True, timeout=_TEST_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return f"## Tests\n\n`python -m unittest discover tests` ran over {_TEST_TIMEOUT:.0f} s."
    output = (done.stdout + done.stderr).strip().splitlines()
    verdict = "pass" if done.returncode == 0 else f"fail (exit {done.returncode})"
    failing = [line for line in output if line.startswith(("FAIL:", "ERROR:"))]
    summary = [line for line in output if line.startswith(("Ran ", "OK", "FAILED"))]
    lines = ["## Tests", "", f"`python -m unittest discover tests`: {verdict}."]
    lines += [f"- {line}" for line in summary + failing]
    return "\n".join(lines)


def propose_change(task: str, root: Path, say: Callable[[str], None], writes: bool) -> str:
    files = files_named(task, root) or [p for p in (root / "wordfreq/__init__.py",) if p.is_file()]
    for path in files:
        before = path.read_text(encoding="utf-8")
        if _CASE_BUG[0] not in before:
            continue
        after = before.replace(*_CASE_BUG)
        name = _rel(path, root)
        diff = "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True), name, name
            )
        )
        if writes:
            say(f"editing {name}")
            path.write_text(after, encoding="utf-8")
        done = "Made in the working tree." if writes else "Proposed only (read-only access)."
        reason = "compare words case-insensitively (`casefold`), as the brief asks"
        return f"## Proposed change\n\n{done} To {reason}:\n\n```diff\n{diff}```"
    return "## Proposed change\n\nNo change to propose in the files the task names."


def write_report(task: str, root: Path, say: Callable[[str], None], writes: bool) -> str:
    say("writing the report from the findings in the task")
    _, marker, findings = task.partition(FINDINGS)
    body = findings.strip() if marker else "(the task carried no findings)"
    return f"# Report\n\nFrom the team's findings, as the lead passed them on.\n\n{body}"


MODELS: dict[str, Callable[[str, Path, Callable[[str], None], bool], str]] = {
    "demo-scout": count_words,
    "demo-tester": run_tests,
    "demo-editor": propose_change,
    "demo-lead": write_report,
}


def run_work(model: str, task: str, root: Path, say: Callable[[str], None], writes: bool) -> str:
    """The final message of the work `model` does on `root` for `task`."""
    work = MODELS.get(model)
    if work is None:
        known = ", ".join(MODELS)
        return f"## No work\n\nThe demo agent has no model {model!r} (known: {known})."
    return work(task, root, say, writes)
