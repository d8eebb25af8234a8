"""Completion of file paths relative to the project, for the brief and approved plan.

`docs/br` shows the rest of the first match in grey (`docs/brief.md`). Several matches
complete as far as they agree; a directory with its `/`; hidden entries only after a dot.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester

# A directory with more entries than this is not listed for completion.
MAX_ENTRIES = 2000


class ProjectPathSuggester(Suggester):
    """Suggest the rest of a path typed relative to `root` (or absolute, or `~/…`)."""

    def __init__(self, root: Path) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.root = Path(root)

    def _directory(self, typed: str) -> Path:
        head = os.path.dirname(typed)
        base = Path(os.path.expanduser(head)) if head else Path()
        return base if base.is_absolute() else self.root / base

    async def get_suggestion(self, value: str) -> str | None:
        if not value or value.endswith(os.sep + os.sep):
            return None
        directory = self._directory(value)
        stem = os.path.basename(value)
        try:
            with os.scandir(directory) as entries:
                matches: list[tuple[str, bool]] = []
                for index, entry in enumerate(entries):
                    if index >= MAX_ENTRIES:
                        return None
                    if not entry.name.startswith(stem):
                        continue
                    if entry.name.startswith(".") and not stem.startswith("."):
                        continue
                    matches.append((entry.name, entry.is_dir()))
        except OSError:
            return None
        if not matches:
            return None
        matches.sort()
        names = [n for n, _ in matches]
        # Character by character: these are names, not paths.
        completed = os.path.commonprefix(names) if len(names) > 1 else ""  # noqa: RUF071
        if len(completed) <= len(stem):
            # One match, or no agreement beyond what is typed: the first match whole.
            name, is_dir = matches[0]
            completed = name + (os.sep if is_dir else "")
        suggestion = value[: len(value) - len(stem)] + completed
        return suggestion if suggestion != value else None
