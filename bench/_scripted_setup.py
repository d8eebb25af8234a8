"""(c) A whole scripted setup vs a minimal script writing the same files.

Subject: `okstra wizard init --answers FILE` (the whole wizard replayed through the
submit path) followed by `okstra prepare --state F --launch none` — two processes.
Baseline: two runs of `_replay.py`, which write the very bytes okstra wrote, to the
same paths, with the same number of fsyncs (recorded by `_record.py` in a first,
untimed pass). The ratio is okstra's overhead over the disk work it must do anyway.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from ._drive import walk_protocol
from ._fixtures import Machine, make_machine
from ._harness import Figure, NotAvailable, interleaved, okstra_argv, run, time_process

HERE = Path(__file__).resolve().parent


def _reset(machine: Machine) -> None:
    shutil.rmtree(machine.home, ignore_errors=True)
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


def _timed(machine: Machine, commands: list[list[str]]) -> Callable[[], float]:
    def once() -> float:
        _reset(machine)
        return sum(time_process(argv, env=machine.env, cwd=machine.project) for argv in commands)

    return once


def measure(work: Path, repeat: int) -> list[Figure]:
    name = "(c) scripted setup: `wizard init --answers` + `prepare --launch none`"
    baseline_name = "same bytes, same fsyncs, 2 plain scripts"
    try:
        machine = make_machine(work / "scripted-setup")
        state = machine.state()
        answers = work / "scripted-setup" / "answers.json"
        count = _answers_file(machine, state, answers)
        okstra = okstra_argv()
        init_args = [
            "wizard",
            "init",
            "--state",
            str(state),
            "--project-root",
            str(machine.project),
            "--host",
            "terminal",
            "--answers",
            str(answers),
        ]
        prepare_args = ["prepare", "--state", str(state), "--launch", "none"]

        # Untimed recording pass: what lands on disk, and how many fsyncs.
        _reset(machine)
        events = []
        for label, args in (("init", init_args), ("prepare", prepare_args)):
            log = work / "scripted-setup" / f"events-{label}.json"
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

        subject, baseline = interleaved(
            _timed(machine, [[*okstra, *init_args], [*okstra, *prepare_args]]),
            _timed(machine, [[sys.executable, str(HERE / "_replay.py"), str(p)] for p in events]),
            repeat=repeat,
        )
    except NotAvailable as exc:
        return [Figure(name, baseline_name=baseline_name, missing=str(exc))]
    return [
        Figure(
            name,
            subject,
            baseline,
            baseline_name,
            note=f"{count} answers; {len(files)} files, {fsyncs} fsyncs",
        )
    ]
