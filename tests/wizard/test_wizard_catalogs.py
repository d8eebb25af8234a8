"""Every translated wizard catalog has every key of the English one."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path
from typing import Any

import pytest

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
ENGLISH = PROMPTS / "wizard.toml"
TRANSLATIONS = sorted(PROMPTS.glob("wizard.*.toml"))


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _load(path: Path) -> dict[str, str]:
    with path.open("rb") as fh:
        return _flat(tomllib.load(fh))


def test_there_is_a_translation() -> None:
    assert TRANSLATIONS, "no wizard.<lang>.toml found"


@pytest.mark.parametrize("path", TRANSLATIONS, ids=lambda p: p.name)
def test_every_english_key_is_translated(path: Path) -> None:
    english = _load(ENGLISH)
    translated = _load(path)
    missing = sorted(set(english) - set(translated))
    assert not missing, f"{path.name} lacks {len(missing)} keys: {missing}"
    extra = sorted(set(translated) - set(english))
    assert not extra, f"{path.name} has keys English does not: {extra}"
    for key, template in translated.items():
        unknown = _fields(template) - _fields(english[key])
        assert not unknown, f"{path.name}: {key} uses placeholders {unknown} English lacks"
