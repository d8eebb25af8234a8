"""(a) A headless `okstra wizard step`, whole process, vs the bare interpreter.

The baseline is `python -c "import pydantic, orjson"`: the floor of any process that
validates and emits JSON the way okstra does. The subject computes the
prompt of a role-model step (the most expensive kind) without submitting, so every
repeat does the same work on the same state file. The run also checks (with
`-X importtime`) that the step imported neither textual nor jinja2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ._drive import answer_for, step_kind
from ._fixtures import make_machine
from ._harness import Figure, NotAvailable, interleaved, okstra_argv, peak_rss, run, time_process

BASELINE = [sys.executable, "-c", "import pydantic, orjson"]


def measure(work: Path, repeat: int) -> list[Figure]:
    name = "(a) `okstra wizard step`, whole process"
    baseline_name = "python -c 'import pydantic, orjson'"
    try:
        machine = make_machine(work / "wizard-step")
        state = machine.state()
        okstra = okstra_argv()
        run(
            [
                *okstra,
                "wizard",
                "init",
                "--state",
                str(state),
                "--project-root",
                str(machine.project),
                "--host",
                "terminal",
            ],
            env=machine.env,
            cwd=machine.project,
            what="okstra wizard init",
        )
        peek = [*okstra, "wizard", "step", "--state", str(state), "--no-submit"]
        # Answer up to the first role-model prompt.
        reached = ""
        for _ in range(30):
            prompt = json.loads(
                run(
                    peek,
                    env=machine.env,
                    cwd=machine.project,
                    what="okstra wizard step --no-submit",
                ).stdout
            )["next"]
            reached = step_kind(prompt)
            if reached in ("role_model", "done"):
                break
            answer = answer_for(prompt, machine, largest_counts=False)
            run(
                [*okstra, "wizard", "step", "--state", str(state), "--answer", answer],
                env=machine.env,
                cwd=machine.project,
                what="okstra wizard step",
            )
        imported = run(
            peek,
            env={**machine.env, "PYTHONPROFILEIMPORTTIME": "1"},
            cwd=machine.project,
            what="okstra wizard step (importtime)",
        ).stderr
        tops = {
            line.rsplit("|", 1)[-1].strip().split(".")[0]
            for line in imported.splitlines()
            if line.startswith("import time:")
        }
        textual = "textual" in tops
        jinja2 = "jinja2" in tops
        subject, baseline = interleaved(
            lambda: time_process(peek, env=machine.env, cwd=machine.project),
            lambda: time_process(BASELINE, env=machine.env, cwd=machine.project),
            repeat=repeat,
        )
        memory, memory_baseline = interleaved(
            lambda: peak_rss(peek, env=machine.env, cwd=machine.project),
            lambda: peak_rss(BASELINE, env=machine.env, cwd=machine.project),
            repeat=max(3, repeat // 3),
        )
        pydantic = "pydantic" in tops
    except NotAvailable as exc:
        return [Figure(name, baseline_name=baseline_name, missing=str(exc))]
    return [
        Figure(
            name,
            subject,
            baseline,
            baseline_name,
            note=f"at a {reached} prompt; imported textual: {'YES' if textual else 'no'}, "
            f"jinja2: {'YES' if jinja2 else 'no'}, pydantic: {'yes' if pydantic else 'no'}",
        ),
        Figure(
            "(a) `okstra wizard step`, peak RSS",
            memory,
            memory_baseline,
            baseline_name,
            unit="MiB",
            note="the process's own peak resident memory (rusage)",
        ),
    ]
