"""role-model:<role>:<n>: which model runs one role instance.

A table of model ref, display name and provider; models the resolver rules out stay
listed, dimmed, with the reason. The prompt's default is highlighted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from textual.app import ComposeResult

from okstra_core.wizard import Option
from okstra_core.wizard.text import WizardText

from ..resources import stylesheet, ui_text
from ..widgets import OptionTable, Plain, Row
from ..widgets.provenance import provenance_words
from .base import ChoiceScreen
from .stale import part


def model_row(option: Option, text: WizardText | None = None) -> Row:
    """One model option as (model ref, display name, provider) and why it is the default."""
    meta = option.meta
    provenance = meta.get("provenance") or None
    return Row(
        value=option.value,
        cells=(
            option.value,
            meta.get("display") or option.label,
            meta.get("provider") or option.value.split("/", 1)[0],
        ),
        disabled_reason=option.disabled_reason,
        note=provenance_words(provenance, text) if text and provenance else provenance,
    )


def model_rows(options: Sequence[Option], text: WizardText | None = None) -> list[Row]:
    """The model table's rows; only the default Enter takes (the first ranked default that
    can be chosen) is marked as the default."""
    rows: list[Row] = []
    marked = False
    for option in options:
        row = model_row(option, text)
        provenance = str(option.meta.get("provenance") or "")
        if provenance.startswith("default:"):
            if marked or option.disabled_reason is not None:
                row = dataclasses.replace(row, note=None)
            else:
                marked = True
        rows.append(row)
    return rows


class RoleModelScreen(ChoiceScreen):
    """Pick the model of one role instance from the pool."""

    CSS_PATH = stylesheet("role_model")
    HELP = "role_model"

    def compose_body(self) -> ComposeResult:
        description = self.prompt.meta.get("description")
        if description:
            yield Plain(str(description), id="role")
        yield from super().compose_body()

    def on_mount(self) -> None:
        super().on_mount()
        options = part(self, "#options", OptionTable)
        if options is not None:
            options.border_title = ui_text(self).get("app.role_model.columns")

    def rows(self) -> list[Row]:
        return model_rows(self.prompt.options, ui_text(self))
