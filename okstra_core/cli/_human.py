"""Tables for people (`models`, `team`, `report roles`, `runs`, `worker status`), and the
replies of `okstra models` and `okstra team` they are drawn from (also their `--json`).

Rich is imported only when a table is printed: the JSON commands never load it.
"""

from __future__ import annotations

import errno
import io
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..records import config, dataclass
from . import say


@dataclass(frozen=True, kw_only=True)
class ModelRow:
    """One model of `okstra models`: what it is, and whether it can run (and why not)."""

    __pydantic_config__ = config(camel_case=True)

    model_ref: str
    provider: str
    display: str
    execution: str
    aliases: tuple[str, ...]
    roles: tuple[str, ...]
    available_for: tuple[str, ...]
    available: bool
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class ModelsReply:
    """`okstra models`: the pool, for one role or for any role."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    host: str
    entry_mode: str
    role: str | None
    availability_for: str
    models: tuple[ModelRow, ...]


@dataclass(frozen=True, kw_only=True)
class TeamRow:
    """One role instance of `okstra team`, bound to its model."""

    __pydantic_config__ = config(camel_case=True)

    role: str
    ordinal: int
    duty: str
    provider: str
    model_ref: str | None
    model_id: str | None
    display: str
    execution: str
    runner: str
    host_model_value: str | None
    provenance: str


@dataclass(frozen=True, kw_only=True)
class DynamicRow:
    """A role the lead spawns at run time."""

    __pydantic_config__ = config()

    role: str
    duty: str
    description: str


@dataclass(frozen=True, kw_only=True)
class TeamReply:
    """`okstra team`: the resolved team."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    task_type: str
    host: str
    entry_mode: str
    team: tuple[TeamRow, ...]
    dynamic_roles: tuple[DynamicRow, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TeamRefused:
    """`okstra team` when no team exists: the error (every failing candidate and
    constraint), then the host and entry mode it was resolved for."""

    __pydantic_config__ = config(camel_case=True, spread="error")

    error: Mapping[str, object]
    host: str
    entry_mode: str


def _console() -> Any:
    from rich.console import Console

    # Pipes get plain text at a usable width (Rich would assume 80 columns).
    console = Console(width=None if sys.stdout.isatty() else 120, highlight=False)
    # Rich exits 1 when the reader goes away; the CLI's own handling stops quietly
    # with 141 for every command alike.
    console.on_broken_pipe = _reader_gone  # type: ignore[method-assign]
    return console


def _reader_gone() -> None:
    raise BrokenPipeError(errno.EPIPE, "the reader of stdout went away")


def _table(*columns: str) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def text_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, fold: Sequence[str] = ()
) -> str:
    """A table of inert data cells (`runs`, `worker status`): the first column whole, the
    `fold` columns wrapped, the others cut with an ellipsis to a terminal's width."""
    from rich.console import Console
    from rich.text import Text

    from ..display import inert

    tty = sys.stdout.isatty()
    # A pipe is read by programs and `grep`: a row is one line, nothing cut (the
    # table is as wide as its cells). A terminal gets its width: the cut columns are
    # capped so that the folded ones keep their room.
    width = shutil.get_terminal_size((120, 24)).columns if tty else 100_000
    cells = [[Text(inert(value)) for value in row] for row in rows]
    first = max([Text(headers[0]).cell_len, *(row[0].cell_len for row in cells)])
    table = _table()
    for index, header in enumerate(headers):
        if index == 0:
            table.add_column(header, no_wrap=True, min_width=first)
        elif header in fold:
            table.add_column(header, overflow="fold", min_width=12)
        else:
            cap = max(8, width // 8)
            table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=cap)
    for row in cells:
        table.add_row(*row)
    buffer = io.StringIO()
    Console(
        file=buffer, width=width, no_color=not tty, highlight=False, markup=False, emoji=False
    ).print(table)
    return buffer.getvalue()


def render_models(reply: ModelsReply) -> None:
    """The model pool: one row per model, available or with why not."""
    console = _console()
    role = reply.role
    console.print(
        f"Models · host {reply.host} · {reply.entry_mode} · "
        f"availability for {reply.availability_for}",
        style="bold",
    )
    table = _table(
        "Model ref", "Name", "Provider", "Available", "Roles, or why not" if not role else "Why not"
    )
    for model in reply.models:
        if model.available:
            mark = "[green]yes[/]"
            note = ", ".join(model.available_for) if not role else ""
        else:
            mark = "[red]no[/]"
            note = str(model.reason or "")
        table.add_row(
            str(model.model_ref), str(model.display or ""), str(model.provider), mark, note
        )
    console.print(table)


def render_team(reply: TeamReply | TeamRefused) -> None:
    """A resolved team (role instance → model), or why no team exists."""
    console = _console()
    if isinstance(reply, TeamRefused):
        refused = reply.error
        console.print(f"No team: {refused.get('error')}", style="bold red", markup=False)
        for key, heading in (("candidates", "Candidates"), ("constraints", "Constraints")):
            items = refused.get(key) or []
            if isinstance(items, list | tuple) and items:
                console.print(f"{heading}:", style="bold")
                for item in items:
                    console.print(f"  {_describe(item)}", markup=False)
        return
    console.print(
        f"Team for {reply.task_type} · host {reply.host} · {reply.entry_mode}", style="bold"
    )
    table = _table("Role", "#", "Duty", "Model ref", "Provider", "Runner", "Why")
    for m in reply.team:
        cells = (m.role, m.ordinal, m.duty or "", m.model_ref, m.provider, m.runner)
        table.add_row(*map(str, cells), str(m.provenance or ""))
    console.print(table)
    for dynamic in reply.dynamic_roles:
        console.print(f"  {dynamic.role}: spawned at run time", markup=False)


def _describe(item: Any) -> str:
    if isinstance(item, Mapping):
        return " · ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "", []))
    return str(item)


def render_report_roles(payload: Mapping[str, Any]) -> None:
    """A run's execution roles (the set a final report must list): data cells are inert
    text, never markup."""
    from rich.text import Text

    from ..display import inert
    from ..life.report import branch_cell, usage_cell
    from ..life.workers.usage import RunUsage, usage_shown
    from ..records import aliases_of

    console = _console()
    console.print(
        f"Execution roles · {inert(payload.get('runManifest'))}", style="bold", markup=False
    )
    rows = payload.get("executionRoles", [])
    # A writer's branch, and whether it was merged: a column only when a row has one.
    branches = any(isinstance(row.get("branch"), str) for row in rows)
    # What the CLIs reported they used: a column once one did (the totals follow).
    used = any(isinstance(row.get("usage"), Mapping) for row in rows)
    heads = ("Role execution", "Role", "#", "Model", "Label", "Outcome")
    table = _table(*heads, *(("Branch",) if branches else ()), *(("Usage",) if used else ()))
    table.columns[0].no_wrap = True  # a ref is read (and copied) whole
    keys = ("roleExecutionRef", "role", "ordinal", "modelRef", "executionLabel", "outcome")
    for row in rows:
        cells = [inert(row.get(k) if row.get(k) is not None else "") for k in keys]
        if branches:
            cells.append(inert(branch_cell(row) or ""))
        if used:
            cells.append(usage_cell(row))
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)
    usage = payload.get("usage")
    if isinstance(usage, Mapping):
        console.print("Usage by role (as each CLI reported it):", markup=False)
        for each in usage.get(aliases_of(RunUsage).get("by_role", "by_role")) or ():
            role = inert(each.get("role"))
            console.print(f"  {role}: {usage_shown(each.get('usage'))}", markup=False)
        console.print(f"Run total: {usage_shown(usage.get('run'))}", markup=False)
    if payload.get("reportChecked"):
        console.print(
            f"The report {inert(payload['reportChecked'])} lists exactly these.", markup=False
        )


def render_markdown(payload: Mapping[str, Any]) -> None:
    """The markdown form of a table (`report roles --markdown`), as is."""
    say(str(payload.get("markdown", "")))
