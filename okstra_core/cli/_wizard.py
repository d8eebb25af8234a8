"""`okstra wizard init|step|show|outcome|answers|list|schema`: the headless JSON protocol.

A refused answer is `{"ok": false, "error", "current"}` with exit 0; usage errors and bad
files exit 2. The read-only commands never take the lock. `--state NAME` (no `/`) is
`<state dir>/wizards/NAME.json`; anything else is a path.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

from ..environment import Environment
from ..errors import AnswerRefused, OkstraError, UsageError
from ..records import config, dataclass, to_data
from . import add_arguments, add_command

if TYPE_CHECKING:
    import argparse

    from ..session import Wizard
    from ..wizard import Prompt

Payload = tuple[dict[str, Any], int]


# The replies of `init` and `step` (`notes` only when some).
@dataclass(frozen=True, kw_only=True)
class Moved:
    """`init`, `step`: the echo of the answer taken (None when none was given) and the
    next prompt; `init` names its state file, and `applied` counts replayed answers."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[True] = True
    state: str | None = None
    applied: int | None = None
    echo: str | None
    next: Prompt
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Refused:
    """`init --answers`, `step`: the answer was refused (exit 0); the state is unchanged."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[False] = False
    state: str | None = None
    applied: int | None = None
    error: str
    current: Prompt
    notes: tuple[str, ...] = ()


_STATE_HELP = "the wizard state file (a bare name: <state dir>/wizards/NAME.json)"


def register(sub: Any) -> None:
    """Add `okstra wizard …` to the top-level parser."""
    commands = add_command(
        sub, "wizard",
        "guided setup as a JSON protocol (init, step, show, outcome, answers, list, schema)",
        "okstra wizard init --project-root . --state mysetup",
        "okstra wizard step --state mysetup --no-submit     the current prompt",
        "okstra wizard step --state mysetup --answer new",
        "okstra wizard step --state mysetup --back",
        "okstra wizard answers --state mysetup > answers.json",
        "okstra wizard init --project-root . --answers answers.json",
        "okstra wizard outcome --state mysetup",
        description="The wizard's headless JSON protocol. Every command prints one JSON document.",
    ).add_subparsers(dest="wizard_command", metavar="SUBCOMMAND")  # fmt: skip
    _register_init_and_step(commands)
    state = ("--state", dict(required=True, metavar="FILE", help=_STATE_HELP))
    for name, handler, text, *example in (
        ("show", _show, "current prompt, confirmation block, history (read-only)"),
        ("outcome", _outcome, "renderArgs / renderArgv of a confirmed wizard (read-only)",
         "okstra wizard outcome --state mysetup | jq .renderArgv   the flags for prepare"),
        ("answers", _answers, "the answers so far as a replayable file (read-only)",
         "okstra wizard answers --state mysetup > answers.json"),
    ):  # fmt: skip
        add_command(
            commands, name, text,
            f"okstra wizard {name} --state mysetup",
            f"okstra wizard {name} --state ~/setups/checkout.json",
            *example, args=(state,),
        ).set_defaults(handler=handler)  # fmt: skip
    add_command(
        commands, "list", "resumable wizards, newest first",
        "okstra wizard list",
        "okstra wizard list | jq '.wizards[0]'   the newest one",
    ).set_defaults(handler=_list)  # fmt: skip
    add_command(
        commands, "schema", "JSON Schema of prompts, answers, outcome",
        "okstra wizard schema",
        "okstra wizard schema | jq '.schemas.outcome.properties'",
    ).set_defaults(handler=_schema)  # fmt: skip


def _register_init_and_step(commands: Any) -> None:
    """`wizard init` and `wizard step`: the commands that write the state file."""
    init = add_command(
        commands, "init", "create a wizard state file",
        "okstra wizard init --project-root . --state mysetup",
        "okstra wizard init --project-root . --task-type implementation-planning",
        "okstra wizard init --project-root . --answers answers.json   replay a setup",
        args=(
            ("--state", dict(metavar="FILE", help=_STATE_HELP + " (default: a new name)")),
            ("--project-root", dict(required=True, metavar="DIR", help="the project directory")),
            ("--host", dict(help="host runtime: claude-code, codex, terminal (default: detect)")),
            ("--entry-mode", dict(help="spawn-process (default) or current-session")),
            ("--task-type", dict(help="answer the task type up front")),
            ("--answers", dict(help="replay a JSON answers file through the submit path")),
            ("--available-functions", dict(metavar="F,...", help="the host's functions "
                                           "(e.g. AskUserQuestion: grouped prompts)")),
            ("--host-session-context-json", dict(metavar="JSON", help="the host session "
                                                 "context (its availableFunctions are recorded)")),
        ),
    )  # fmt: skip
    init.set_defaults(handler=_init)
    step = add_command(
        commands, "step", "answer the current prompt (or just show it)",
        "okstra wizard step --state mysetup --no-submit        the current prompt",
        "okstra wizard step --state mysetup --answer new",
        "okstra wizard step --state mysetup --answer=-x.md     a value starting with -",
        "okstra wizard step --state mysetup --answer 2 --step role-count:analyser",
        "okstra wizard step --state mysetup --rewind task_type",
        "okstra wizard step --state mysetup --back",
        args=(("--state", dict(required=True, metavar="FILE", help=_STATE_HELP)),),
    )  # fmt: skip
    add_arguments(step.add_mutually_exclusive_group(required=True), (
        ("--answer", dict(help="the option value or text")),
        ("--no-submit", dict(action="store_true", help="only print the current prompt")),
        ("--rewind", dict(metavar="STEP", help="edit & rewind to an answered step")),
        ("--back", dict(action="store_true", help="rewind the last answered step")),
    ))  # fmt: skip
    step.add_argument("--step", dest="step_id", help="refuse unless the wizard asks this step")
    step.set_defaults(handler=_step)


# The per-step commands in their plain spellings — each flag in full, its value as the
# next word — are read without argparse: (value flags, switches, one of which is
# required). Any other spelling (`--state=F`, an abbreviation, help, a value that
# starts with "-", a repeated flag, a missing or conflicting action) goes to the
# parser, which accepts or refuses it with its own message.
_PLAIN: dict[str, tuple[dict[str, str], dict[str, str], tuple[str, ...]]] = {
    "step": (
        {"--state": "state", "--answer": "answer", "--rewind": "rewind", "--step": "step_id"},
        {"--no-submit": "no_submit", "--back": "back"},
        ("answer", "no_submit", "rewind", "back"),
    ),
    "show": ({"--state": "state"}, {}, ()),
    "outcome": ({"--state": "state"}, {}, ()),
    "answers": ({"--state": "state"}, {}, ()),
}


def parse_plain(args: list[str]) -> Any:
    """The namespace argparse would give `args` (`wizard step|show|outcome|answers`
    in their plain spellings), or None: parse them with argparse."""
    if len(args) < 2 or args[0] != "wizard" or args[1] not in _PLAIN:
        return None
    values, switches, one_of = _PLAIN[args[1]]
    ns: dict[str, Any] = dict.fromkeys(values.values())
    ns.update(dict.fromkeys(switches.values(), False))
    seen: set[str] = set()
    rest = args[2:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in seen:
            return None
        seen.add(word)
        if word in values and i + 1 < len(rest) and not rest[i + 1].startswith("-"):
            ns[values[word]] = rest[i + 1]
            i += 2
        elif word in switches:
            ns[switches[word]] = True
            i += 1
        else:
            return None
    if ns["state"] is None:
        return None
    if one_of and sum(ns[d] is not None and ns[d] is not False for d in one_of) != 1:
        return None
    handlers = {"step": _step, "show": _show, "outcome": _outcome, "answers": _answers}
    return SimpleNamespace(
        command="wizard", wizard_command=args[1], handler=handlers[args[1]], **ns
    )


def _open(ns: argparse.Namespace) -> tuple[Wizard, Environment]:
    """The wizard of `--state`, and the environment it was opened in."""
    from ..session import Wizard, resolve_state_path

    env = Environment.real()
    return Wizard.open(resolve_state_path(ns.state, env), environment=env), env


def read_answers(value: str) -> list[Any]:
    """Read an answers file: a JSON array of {step, answer}, or `{"answers": [...]}`."""
    from ..records import RecordError, validate
    from ..store import read_json
    from ..wizard import AnswerEntry

    path = Path(value).expanduser()
    try:
        raw = read_json(path, what="answers file")
    except OkstraError as exc:
        raise UsageError(exc.message, path=path) from None
    if isinstance(raw, dict) and "answers" in raw:
        raw = raw["answers"]
    if not isinstance(raw, list):
        raise UsageError('expected a JSON array of {"step": id, "answer": value}', path=path)
    entries = []
    for index, item in enumerate(raw):
        if _plain_answer(item):  # the usual line: nothing pydantic would say about it
            entries.append(AnswerEntry(step=item["step"], answer=item["answer"]))
            continue
        try:
            entries.append(validate(AnswerEntry, item))
        except RecordError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UsageError(
                f'{first["msg"]}: expected {{"step": id, "answer": string}}',
                path=path,
                field=f"[{index}]" + (f".{where}" if where else ""),
            ) from None
    return entries


def _plain_answer(item: Any) -> bool:
    """`{"step": non-empty string, "answer": string}` and nothing else."""
    return (
        type(item) is dict
        and len(item) == 2
        and type(item.get("step")) is str
        and type(item.get("answer")) is str
        and bool(item["step"])
    )


def _notes(wizard: Any) -> tuple[str, ...]:
    """The wizard's conversion notes, then what reading the model defaults noted."""
    return (*wizard.notes, *wizard.config_notes())


def _host_functions(ns: argparse.Namespace, env: Environment) -> tuple[str, list[str]]:
    """(host id, the host's functions) from `--available-functions` and the context."""
    from .roleargs import context_of

    functions: list[str] = []
    host = ns.host or ""
    if (getattr(ns, "host_session_context_json", None) or "").strip():
        context = context_of(ns, env)
        host = context.host_id or host
        functions.extend(context.available_functions)
    given = (getattr(ns, "available_functions", None) or "").split(",")
    functions += [item.strip() for item in given if item.strip()]
    return host, list(dict.fromkeys(functions))


def _init(ns: argparse.Namespace) -> Payload:
    from ..session import Wizard, resolve_state_path

    env = Environment.real()
    entries = read_answers(ns.answers) if ns.answers else None  # validated before creating
    path = resolve_state_path(ns.state, env) if ns.state else None
    host, functions = _host_functions(ns, env)
    wizard = Wizard.init(
        path,
        ns.project_root,
        host=host or None,
        entry_mode=ns.entry_mode,
        task_type=ns.task_type,
        environment=env,
        available_functions=functions,
    )
    state = str(wizard.path)
    if entries is None:
        moved = Moved(
            state=state, echo="", next=wizard.grouped(wizard.prompt()), notes=_notes(wizard)
        )
        return to_data(moved), 0
    result = wizard.replay(entries)
    if result.error is not None:
        # The replay did not reproduce the setup: exit 2, the state kept where it stopped.
        where = f"answers[{result.index}] ({entries[result.index or 0].step})"
        kept = (
            f"the state {state} is kept at step {result.next.id!r}: continue it with "
            "`okstra wizard step`"
        )
        refused = Refused(
            state=state,
            applied=result.applied,
            error=f"{where}: {result.error}; {kept}",
            current=result.next,
        )
        return to_data(refused), 2
    moved = Moved(
        state=state, applied=result.applied, echo=result.echo, next=wizard.grouped(result.next)
    )
    return to_data(moved), 0


def _step(ns: argparse.Namespace) -> Payload:
    from ..session import Wizard

    if isinstance(ns.answer, list):
        # Python 3.11's argparse drops a `--` value (`--answer=--`), leaving no words.
        ns.answer = "--"
    wizard, env = _open(ns)
    try:
        if ns.no_submit or ns.back or ns.rewind is not None:
            if ns.no_submit:
                prompt = wizard.refresh()
            elif ns.back:
                prompt = wizard.back()
            else:
                prompt = wizard.rewind(ns.rewind)
            return to_data(Moved(echo=None, next=wizard.grouped(prompt), notes=_notes(wizard))), 0
        if _grouped_answer(wizard, ns):
            result = wizard.submit_group(_group_answer(ns.answer))
        else:
            result = wizard.submit(ns.answer, step=ns.step_id)
    except AnswerRefused as exc:
        # The file is unchanged; re-read it so `current` is what is really on disk.
        fresh = Wizard.open(wizard.source, environment=env)
        current = fresh.grouped(fresh.prompt())
        refused = Refused(error=exc.message, current=current, notes=_notes(wizard))
        return to_data(refused), 0
    moved = Moved(echo=result.echo, next=wizard.grouped(result.next), notes=_notes(wizard))
    return to_data(moved), 0


def _grouped_answer(wizard: Any, ns: argparse.Namespace) -> bool:
    """Whether `--answer` is one JSON object for the current `pick_group` prompt."""
    if ns.step_id is not None or not ns.answer.lstrip().startswith("{"):
        return False
    return bool(wizard.grouped(wizard.prompt()).kind == "pick_group")


def _group_answer(answer: str) -> dict[str, object]:
    """A grouped prompt's answer `{step: answer}` (`AnswerRefused` unless a JSON object)."""
    import orjson

    try:
        value = orjson.loads(answer)
    except orjson.JSONDecodeError as exc:
        raise AnswerRefused(f"expected a JSON object {{step: answer}}: {exc}") from None
    if not isinstance(value, dict):
        raise AnswerRefused("expected a JSON object {step: answer}")
    return value


def _show(ns: argparse.Namespace) -> Payload:
    from ..wizard.prompt import Progress
    from ._read_replies import Shown

    wizard, _ = _open(ns)
    view = wizard.view()
    shown = Shown(
        state=str(wizard.path),
        source=str(wizard.source),
        legacy=wizard.legacy,
        revision=wizard.state.revision,
        updated_at=wizard.state.updated_at,
        prompt=wizard.grouped(view.prompt),
        confirmation=view.confirmation,
        history=tuple(view.history),
        progress=Progress(*view.progress),
        notes=_notes(wizard),
    )
    return to_data(shown), 0


def _outcome(ns: argparse.Namespace) -> Payload:
    from ._read_replies import OutcomeReply

    wizard, _ = _open(ns)
    return to_data(OutcomeReply(outcome=wizard.outcome(), notes=_notes(wizard))), 0


def _answers(ns: argparse.Namespace) -> Payload:
    from ._read_replies import AnswersReply

    wizard, _ = _open(ns)
    return to_data(AnswersReply(answers=tuple(wizard.answers()))), 0


def _list(_ns: argparse.Namespace) -> Payload:
    from ..session import list_wizards
    from ._read_replies import WizardsReply

    return to_data(WizardsReply(wizards=tuple(list_wizards(Environment.real())))), 0


def _schema(_ns: argparse.Namespace) -> Payload:
    from pydantic import TypeAdapter

    from ..records import json_schema
    from ..wizard import AnswerEntry, Outcome, Prompt

    return {
        "ok": True,
        "schemas": {
            "prompt": json_schema(Prompt, mode="validation"),
            "answers": TypeAdapter(list[AnswerEntry]).json_schema(by_alias=True),
            "outcome": json_schema(Outcome, mode="serialization"),
        },
    }, 0
