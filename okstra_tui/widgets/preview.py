"""The launch preview of the confirm screen: what Launch will run and write.

Built from the dry-run prepare (the plan `okstra prepare --dry-run` prints): the exact
lead command, the launch backend, the tmux session and window, every file written.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from okstra_core.wizard.text import WizardText

if TYPE_CHECKING:
    from okstra_core.prepare import PrepareResult


def shown_path(path: Path, root: Path) -> str:
    """A path relative to the project when it is inside it (shorter, same meaning)."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def argv_text(argv: Sequence[str], which: Callable[[str], str | None] | None = None) -> str:
    """An argv as the shell line a person would type; with `which`, a program that PATH
    finds anyway is shown by its bare name."""
    words = [str(a) for a in argv]
    if which is not None and words and which(Path(words[0]).name) == words[0]:
        words[0] = Path(words[0]).name
    return shlex.join(words)


def _flag(command: Sequence[str], flag: str) -> str | None:
    """The value after `flag` in a tmux command (None when absent)."""
    words = list(command)
    for index, word in enumerate(words[:-1]):
        if word == flag:
            return words[index + 1]
    return None


def tmux_target(plan: PrepareResult) -> tuple[str | None, str | None]:
    """(new session name or None for the current session, window name) of a tmux launch."""
    if not plan.tmux_commands:
        return None, None
    command = plan.tmux_commands[0]
    session = _flag(command, "-s") if "new-session" in command else None
    return session, _flag(command, "-n")


def preview_title(plan: PrepareResult | None, catalog: WizardText) -> str:
    """The one line shown while the panel is collapsed: backend, window and file count."""
    if plan is None:
        return catalog.get("app.preview.title_pending")
    return catalog.get(
        "app.preview.title", backend=short_backend(plan, catalog), files=len(plan.files)
    )


def short_backend(plan: PrepareResult, catalog: WizardText) -> str:
    """The backend in a few words, for the collapsed panel's title."""
    if plan.entry_mode == "current-session" or plan.lead_argv is None:
        return catalog.get("app.preview.short_current_session")
    if plan.backend == "tmux":
        return catalog.get("app.preview.short_tmux", window=tmux_target(plan)[1])
    return catalog.get(f"app.preview.short_{plan.backend}")


def backend_words(plan: PrepareResult, catalog: WizardText) -> str:
    """How the lead starts, in words (tmux window, this terminal, or not at all)."""
    if plan.entry_mode == "current-session" or plan.lead_argv is None:
        return catalog.get("app.preview.backend_current_session")
    if plan.backend == "tmux":
        session, window = tmux_target(plan)
        if session is not None:
            return catalog.get("app.preview.backend_tmux_session", session=session, window=window)
        return catalog.get("app.preview.backend_tmux_window", window=window)
    if plan.backend == "exec":
        return catalog.get("app.preview.backend_exec")
    return catalog.get("app.preview.backend_none")


def preview_text(
    plan: PrepareResult | None,
    root: Path,
    catalog: WizardText,
    error: str | None = None,
    which: Callable[[str], str | None] | None = None,
) -> Text:
    """The panel's body: lead command, backend, run directory, the files written."""
    text = Text()
    if plan is None:
        text.append(error or catalog.get("app.preview.pending"), style="italic")
        return text

    def heading(key: str, **values: object) -> None:
        if text:
            text.append("\n")
        text.append(catalog.get(f"app.preview.{key}", **values), style="bold")
        text.append("\n")

    heading("command")
    if plan.lead_argv is not None:
        text.append(f"  cd {shlex.quote(str(root))} && {argv_text(plan.lead_argv, which)}\n")
        if plan.lead_session_id:
            text.append("  " + catalog.get("app.preview.fresh_session_id") + "\n", style="dim")
        meaning = catalog.get(f"app.preview.lead_access_meaning.{plan.lead_access}")
        access = catalog.get("app.preview.lead_access", access=plan.lead_access, meaning=meaning)
        text.append(f"  {access}\n")
    else:
        text.append(
            "  "
            + catalog.get("app.preview.no_command", prompt=shown_path(plan.lead_prompt_path, root))
            + "\n"
        )
    heading("backend")
    text.append(f"  {backend_words(plan, catalog)}\n")
    if plan.base_ref and plan.base_commit:
        base = catalog.get("app.preview.base", ref=plan.base_ref, commit=plan.base_commit[:12])
        text.append(f"  {base}\n")
    heading("files", run_id=plan.run_id, count=len(plan.files))
    for planned in plan.files:
        text.append(f"  {shown_path(planned.path, root)}")
        if planned.action == "append":
            text.append("  " + catalog.get("app.preview.appended"), style="dim")
        text.append("\n")
    text.rstrip()
    return text
