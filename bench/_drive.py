"""Walk a wizard to the end with fixed answers, through the protocol or in process.

The policy answers every prompt from its JSON form, so the same walk
drives the headless `okstra wizard step` and the in-process engine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from okstra_core.records import to_data

from ._fixtures import BENCH_TASK_TYPE, Machine
from ._harness import NotAvailable, okstra_argv, run

Prompt = Mapping[str, Any]


def step_kind(prompt: Prompt) -> str:
    meta = prompt.get("meta") or {}
    return str(meta.get("stepKind") or prompt.get("kind") or "")


def _selectable(prompt: Prompt) -> list[str]:
    return [o["value"] for o in prompt.get("options") or [] if not o.get("disabledReason")]


def answer_for(prompt: Prompt, machine: Machine, *, largest_counts: bool) -> str:
    """The answer the benchmark gives to `prompt`.

    Args:
        prompt: the prompt's JSON form.
        machine: where the project and its brief are.
        largest_counts: staff every role at its maximum (the big-pool walk) instead
            of taking the recommended counts.
    """
    kind = step_kind(prompt)
    options = _selectable(prompt)
    default = prompt.get("default")
    fixed = {
        "task_pick": "new",
        "task_group": "bench",
        "task_id": "run-1",
        "brief": str(machine.brief),
        "directive_pick": "skip",
        "related_tasks_pick": "skip",
        "confirm": "confirm",
        "leader_session": "continue",
    }
    if kind in fixed and (not options or fixed[kind] in options):
        return fixed[kind]
    if kind == "task_type" and BENCH_TASK_TYPE in options:
        return BENCH_TASK_TYPE
    if kind in ("role_count", "role_add") and largest_counts and options:
        return max(options, key=lambda v: int(v) if v.isdigit() else -1)
    if default is not None and (not options or default in options):
        return str(default)
    if options:
        return options[0]
    raise NotAvailable(f"no answer for prompt {prompt.get('id')!r} ({kind})")


def walk_protocol(machine: Machine, state: Path, *, largest_counts: bool = False) -> list[str]:
    """Init a wizard and answer every prompt through `okstra wizard step`; step ids asked."""
    okstra = okstra_argv()
    proc = run(
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
            "--entry-mode",
            "spawn-process",
        ],
        env=machine.env,
        cwd=machine.project,
        what="okstra wizard init",
    )
    prompt = _prompt_of(json.loads(proc.stdout))
    asked: list[str] = []
    for _ in range(200):
        if prompt.get("kind") == "done" or step_kind(prompt) == "done":
            return asked
        asked.append(str(prompt["id"]))
        answer = answer_for(prompt, machine, largest_counts=largest_counts)
        proc = run(
            [*okstra, "wizard", "step", "--state", str(state), "--answer", answer],
            env=machine.env,
            cwd=machine.project,
            what=f"okstra wizard step ({prompt['id']})",
        )
        payload = json.loads(proc.stdout)
        if not payload.get("ok"):
            raise NotAvailable(f"answer {answer!r} to {prompt['id']} refused: {payload}")
        prompt = payload["next"]
    raise NotAvailable("the wizard did not finish in 200 steps")


def _prompt_of(payload: Mapping[str, Any]) -> Prompt:
    for key in ("next", "prompt", "current"):
        if isinstance(payload.get(key), dict):
            return payload[key]  # type: ignore[no-any-return]
    raise NotAvailable(f"no prompt in the init answer: {str(payload)[:120]}")


def walk_in_process(
    wizard: Any,
    machine: Machine,
    *,
    largest_counts: bool,
    on_step: Callable[[Prompt, str], None] | None = None,
) -> int:
    """Answer every prompt of an engine `Wizard`; `on_step(prompt, answer)` before each."""
    prompt = to_data(wizard.prompt())
    steps = 0
    while step_kind(prompt) != "done" and prompt.get("kind") != "done":
        answer = answer_for(prompt, machine, largest_counts=largest_counts)
        if on_step is not None:
            on_step(prompt, answer)
        result = wizard.submit(answer)
        prompt = to_data(result.next)
        steps += 1
        if steps > 500:
            raise NotAvailable("the wizard did not finish in 500 steps")
    return steps
