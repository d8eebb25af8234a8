"""(c) A whole scripted setup vs a minimal script writing the same files.

Two subjects, each against its own floor:

* one process: `okstra prepare --answers FILE --launch none` (the whole wizard
  replayed through the submit path, saved and prepared in one process);
* two processes: `okstra wizard init --answers FILE` followed by
  `okstra prepare --state F --launch none`.

A third subject is the common case after the first setup: another run of the same task,
`okstra prepare --state F --again --launch none`, which extends the task manifest and
project.json the first one wrote (each sample adds one more run), against the replay
of one such run.

Another row times the same one-process setup against copier doing the same job
(`_copier`: a template with the same answers rendering the same files): the copier
anchor, whose bar is at most 0.5×.

A last row is an anchor, not a subject: a process that only imports the libraries every
prepare must load (orjson for every document, jinja2's sandbox for every prompt), timed
against the one-process floor. It is the part of the ratio no change to okstra can
remove while those libraries are its own.

Baseline: one run of `_replay.py` per okstra process, writing the very bytes okstra
wrote, to the same paths, with the same number of fsyncs (recorded by `_record.py` in
a first, untimed pass). The ratio is okstra's overhead over the disk work it must do
anyway. Each sample starts without the setup's files but with the catalog cache the
earlier processes left (see `_reset`).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from . import _copier
from ._drive import walk_protocol
from ._fixtures import Machine, make_machine
from ._harness import Figure, NotAvailable, interleaved, okstra_argv, run, time_process

HERE = Path(__file__).resolve().parent


def _reset(machine: Machine) -> None:
    """Remove what a setup wrote; keep the cache (a machine that has run okstra before).

    The validated catalog cache is derived data every process reads; wiping it would
    time a first run on a new machine (a catalog validation and a cache write) in every
    sample, which no repeated scripted setup pays.
    """
    for child in machine.home.iterdir() if machine.home.exists() else ():
        if child.name != "cache":
            shutil.rmtree(child, ignore_errors=True)
    shutil.rmtree(machine.project / ".okstra", ignore_errors=True)


def _answers_file(machine: Machine, state: Path, target: Path) -> int:
    walk_protocol(machine, state)
    proc = run(
        [*okstra_argv(), "wizard", "answers", "--state", str(state)],
        env=machine.env,
        cwd=machine.project,
        what="okstra wizard answers",
    )
    payload = json.loads(proc.stdout)
    answers = payload if isinstance(payload, list) else payload.get("answers")
    if not isinstance(answers, list) or not answers:
        raise NotAvailable(f"`okstra wizard answers` gave no answers: {proc.stdout[:120]}")
    target.write_text(json.dumps(answers, indent=2), encoding="utf-8")
    return len(answers)


def _timed(
    machine: Machine, commands: list[list[str]], *, fresh: bool = True
) -> Callable[[], float]:
    """One sample: `commands` one after another (after `_reset` unless not `fresh`)."""

    def once() -> float:
        if fresh:
            _reset(machine)
        return sum(time_process(argv, env=machine.env, cwd=machine.project) for argv in commands)

    return once


def _record(
    work: Path, machine: Machine, label: str, commands: list[list[str]]
) -> tuple[list[Path], int, int]:
    """Untimed recording pass: the event logs, how many files and fsyncs.

    A first untimed run fills the caches the timed runs find filled (catalog, text,
    model schemas), so the floor replays only what every timed run writes.
    """
    _reset(machine)
    for args in commands:
        run([*okstra_argv(), *args], env=machine.env, cwd=machine.project, what=f"okstra {args[0]}")
    _reset(machine)
    return _recorded(work, machine, label, commands)


def _recorded(
    work: Path, machine: Machine, label: str, commands: list[list[str]]
) -> tuple[list[Path], int, int]:
    """Run `commands` once each under `_record.py`: the event logs, files and fsyncs."""
    events = []
    for index, args in enumerate(commands):
        log = work / f"events-{label}-{index}.json"
        run(
            [sys.executable, str(HERE / "_record.py"), str(log), *args],
            env=machine.env,
            cwd=machine.project,
            what=f"okstra {args[0]} (recorded)",
        )
        events.append(log)
    recorded = [json.loads(p.read_text(encoding="utf-8")) for p in events]
    files = {e[1] for evs in recorded for e in evs if e[0] in ("replace", "append")}
    fsyncs = sum(1 for evs in recorded for e in evs if e[0] == "fsync")
    return events, len(files), fsyncs


def measure(work: Path, repeat: int) -> list[Figure]:
    names = (
        "(c) scripted setup, one process: `prepare --answers --launch none`",
        "(c) scripted setup, two processes: `wizard init --answers` + `prepare --state`",
    )
    anchor_name = "(c) anchor: only `import orjson, jinja2.sandbox` (the libraries a prepare loads)"
    baseline_name = "same bytes, same fsyncs, one plain script per process"
    try:
        here = work / "scripted-setup"
        machine = make_machine(here)
        state = machine.state()
        answers = here / "answers.json"
        count = _answers_file(machine, state, answers)
    except NotAvailable as exc:
        return [Figure(names[0], baseline_name=baseline_name, missing=str(exc))]
    okstra = okstra_argv()
    common = ["--state", str(state), "--project-root", str(machine.project)]
    common += ["--host", "terminal", "--answers", str(answers)]
    subjects = {
        names[0]: [["prepare", *common, "--launch", "none"]],
        names[1]: [
            ["wizard", "init", *common],
            ["prepare", "--state", str(state), "--launch", "none"],
        ],
    }
    figures = []
    for index, (name, commands) in enumerate(subjects.items()):
        # Each subject on its own: an okstra without `prepare --answers` still gets
        # its two-process figure.
        try:
            events, files, fsyncs = _record(here, machine, str(index), commands)
            replays = [[sys.executable, str(HERE / "_replay.py"), str(p)] for p in events]
            subject, baseline = interleaved(
                _timed(machine, [[*okstra, *args] for args in commands]),
                _timed(machine, replays),
                repeat=repeat,
            )
        except NotAvailable as exc:
            figures.append(Figure(name, baseline_name=baseline_name, missing=str(exc)))
            continue
        note = f"{count} answers; {files} files, {fsyncs} fsyncs"
        figures.append(Figure(name, subject, baseline, baseline_name, note=note))
        if index == 0:
            okstra_once = _timed(machine, [[*okstra, *args] for args in commands])
            figures.append(_copier.measure(here, machine, okstra_once, events[0], answers, repeat))
            figures.append(_again(here, machine, state, commands[0], baseline_name, repeat))
            figures.append(_anchor(anchor_name, machine, replays, baseline_name, repeat))
    return figures


def _again(
    work: Path,
    machine: Machine,
    state: Path,
    first: list[str],
    baseline_name: str,
    repeat: int,
) -> Figure:
    """Another run of a task a scripted setup prepared (see the module's docstring)."""
    name = "(c) another run of the same task: `prepare --state F --again --launch none`"
    args = ["prepare", "--state", str(state), "--again", "--launch", "none"]
    try:
        _reset(machine)
        run([*okstra_argv(), *first], env=machine.env, cwd=machine.project, what="okstra prepare")
        # No reset between samples: each one adds a run to the task the first prepared.
        (log,), files, fsyncs = _recorded(work, machine, "again", [args])
        subject, baseline = interleaved(
            _timed(machine, [[*okstra_argv(), *args]], fresh=False),
            _timed(machine, [[sys.executable, str(HERE / "_replay.py"), str(log)]], fresh=False),
            repeat=repeat,
        )
    except NotAvailable as exc:
        return Figure(name, baseline_name=baseline_name, missing=str(exc))
    note = f"{files} files, {fsyncs} fsyncs"
    return Figure(name, subject, baseline, baseline_name, note=note)


def _anchor(
    name: str, machine: Machine, replays: list[list[str]], baseline_name: str, repeat: int
) -> Figure:
    """The libraries alone against the one-process floor (see the module's docstring)."""
    imports = [[sys.executable, "-c", "import orjson, jinja2.sandbox"]]
    try:
        subject, baseline = interleaved(
            _timed(machine, imports), _timed(machine, replays), repeat=repeat
        )
    except NotAvailable as exc:
        return Figure(name, baseline_name=baseline_name, missing=str(exc))
    note = "not okstra: the share of the ratio its libraries take"
    return Figure(name, subject, baseline, baseline_name, note=note)
