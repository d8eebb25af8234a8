"""(c) The copier anchor: copier doing the same scripted setup, for comparison.

copier is the model of a questionnaire with a non-interactive path: answers in, files
out. The anchor gives it the same job as `okstra prepare --answers` (one process):
a template with one question per answer of the scripted setup, answered from a data
file (`copier copy --defaults --data-file`), which renders the very files okstra wrote
(the recording of `_record.py`, each file's text a template). The ratio is okstra's
time over copier's: the bar is at most 0.5×.

copier is not a dependency of okstra: the row is measured when a `copier` command is
found next to this interpreter or on PATH (`pip install copier`), and says so when not.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._fixtures import Machine
from ._harness import Figure, NotAvailable, interleaved, time_process

NAME = "(c) scripted setup vs copier doing the same: okstra `prepare --answers` / `copier copy`"
BASELINE = "copier copy --defaults --data-file (same answers, same files)"


def find_copier() -> str | None:
    """The `copier` command: next to this interpreter, else on PATH."""
    here = Path(sys.executable).parent / "copier"
    if here.exists():
        return str(here)
    return shutil.which("copier", path=os.environ.get("PATH"))


def _files(events: Path, machine: Machine) -> dict[str, str]:
    """The files one okstra process wrote (cache entries aside), by path under the root."""
    out: dict[str, str] = {}
    for event in json.loads(events.read_text(encoding="utf-8")):
        if event[0] not in ("replace", "append"):
            continue
        relative = os.path.relpath(event[1], machine.root)
        text = base64.b64decode(event[2]).decode("utf-8", "replace")
        out[relative] = out.get(relative, "") + text if event[0] == "append" else text
    return out


def _answer(entry: Any) -> str:
    """An answer of `okstra wizard answers` (a string, or an object holding one)."""
    if isinstance(entry, dict):
        return str(entry.get("answer", ""))
    return str(entry)


def write_template(work: Path, events: Path, machine: Machine, answers: list[str]) -> Path:
    """A copier template with a question per answer that renders okstra's files."""
    template = work / "copier-template"
    shutil.rmtree(template, ignore_errors=True)
    template.mkdir(parents=True)
    questions = [f"answer_{n:02d}:\n  type: str\n  default: ''\n" for n in range(len(answers))]
    (template / "copier.yml").write_text("".join(questions), encoding="utf-8")
    names = " ".join(f"{{{{ answer_{n:02d} }}}}" for n in range(len(answers)))
    for relative, text in _files(events, machine).items():
        path = template / f"{relative}.jinja"
        path.parent.mkdir(parents=True, exist_ok=True)
        # Each file is rendered (as copier renders every template), quoting the answers.
        path.write_text(f"{{% raw %}}{text}{{% endraw %}}\n<!-- {names} -->\n", encoding="utf-8")
    data = work / "copier-answers.json"  # JSON is YAML
    data.write_text(
        json.dumps({f"answer_{n:02d}": a for n, a in enumerate(answers)}), encoding="utf-8"
    )
    return template


def measure(
    work: Path,
    machine: Machine,
    subject: Callable[[], float],
    events: Path,
    answers_file: Path,
    repeat: int,
) -> Figure:
    """okstra's one-process scripted setup (`subject`, one timed sample per call)
    against copier rendering the same files from the same answers."""
    copier = find_copier()
    if copier is None:
        return Figure(NAME, baseline_name=BASELINE, missing="copier not installed")
    answers = [_answer(a) for a in json.loads(answers_file.read_text(encoding="utf-8"))]
    try:
        template = write_template(work, events, machine, answers)
        target = work / "copier-out"
        argv = [copier, "copy", "--quiet", "--overwrite", "--defaults"]
        argv += ["--data-file", str(work / "copier-answers.json"), str(template), str(target)]
        env = {**machine.env, "PATH": f"{Path(copier).parent}:{machine.env.get('PATH', '')}"}

        def copier_once() -> float:
            shutil.rmtree(target, ignore_errors=True)
            return time_process(argv, env=env, cwd=work)

        copier_once()
        if not any(target.rglob("*")):
            raise NotAvailable("copier wrote nothing")
        okstra, baseline = interleaved(subject, copier_once, repeat=repeat)
    except NotAvailable as exc:
        return Figure(NAME, baseline_name=BASELINE, missing=str(exc))
    note = f"{len(answers)} answers; {len(_files(events, machine))} files; bar ≤ 0.5×"
    return Figure(NAME, okstra, baseline, BASELINE, note=note)
