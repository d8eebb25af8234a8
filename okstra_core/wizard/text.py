"""The wizard's text catalog: `prompts/wizard.toml` (English) and `wizard.<lang>.toml`.

Every string the wizard shows comes from here, keyed by step kind with
`{placeholders}`. The language is `OKSTRA_LANG`, else the config's `language`, else
English; a key missing from a translation falls back to English.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import derived
from ..environment import Environment
from ..errors import DataFileError
from ..paths import resource, user_dirs
from ..records import dataclass
from ..store import decode_utf8, read_bytes

DEFAULT_LANGUAGE = "en"
_FORMATTER = string.Formatter()


def _flatten(prefix: str, table: Mapping[str, Any], out: dict[str, str], path: Path) -> None:
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            _flatten(dotted, value, out, path)
        elif isinstance(value, str):
            out[dotted] = value
        else:
            raise DataFileError(
                f"expected a string or a table, found {type(value).__name__}",
                path=path,
                field=dotted,
            )


# Parsed catalogs by (path, mtime, size): an edited file is picked up as its stamp
# changes. Across processes, a parsed table is derived data keyed by path and bytes.
_TABLES: dict[tuple[str, int, int], dict[str, str]] = {}
TEXT = derived.Kind("text", keep=8, code=("wizard/text.py",))


def _load_table(path: Path, cache: Path | None = None) -> dict[str, str]:
    try:
        stat = path.stat()
    except OSError:
        return _read_table(path, None)
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _TABLES:
        _TABLES[key] = _read_table(path, cache)
    return dict(_TABLES[key])


def _read_table(path: Path, cache: Path | None) -> dict[str, str]:
    """The table of `path` from the cache directory (if any), else parsed (and cached)."""
    data = read_bytes(path, what="wizard text catalog")
    if cache is None:
        return _parse_bytes(data, path)
    key = derived.key(TEXT, str(path), data)
    table = derived.recall_value(cache, TEXT, key, dict)
    if table is not None and all(type(k) is str and type(v) is str for k, v in table.items()):
        return table
    table = _parse_bytes(data, path)
    derived.keep_value(cache, TEXT, key, table)
    return table


def _parse_bytes(data: bytes, path: Path) -> dict[str, str]:
    text = decode_utf8(data, path)
    import tomllib  # imported here: a table from the cache parses no TOML

    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"invalid TOML ({exc})", path=path) from None
    flat: dict[str, str] = {}
    _flatten("", table, flat, path)
    for key, template in flat.items():
        try:
            list(_FORMATTER.parse(template))
        except ValueError as exc:
            raise DataFileError(f"malformed template ({exc})", path=path, field=key) from None
    return flat


@dataclass(frozen=True)
class WizardText:
    """A loaded catalog: the language in use, and per dotted key its template (the
    translation over English) and the file it came from (for error messages)."""

    language: str
    entries: Mapping[str, str]
    sources: Mapping[str, Path]

    def has(self, key: str) -> bool:
        return key in self.entries

    def raw(self, key: str) -> str:
        """The template itself, unformatted (used for prompts' `echoTemplate`)."""
        try:
            return self.entries[key]
        except KeyError:
            raise DataFileError(
                "missing text key (every wizard string comes from the catalog)",
                path=resource("wizard.toml"),
                field=key,
            ) from None

    def get(self, key: str, /, **values: object) -> str:
        """Format the template `key` with `values` (`DataFileError`: a missing key or
        placeholder). A count of one takes the singular `<key>_one` of the same file, if
        any ("1 run"; English's never stands in for a plural-less translation's)."""
        one = f"{key}_one"
        same_file = one in self.entries and self.sources.get(one) == self.sources.get(key)
        if values.get("count") == 1 and same_file:
            key = one
        template = self.raw(key)
        try:
            return template.format_map(values)
        except (KeyError, IndexError, ValueError) as exc:
            raise DataFileError(
                f"template uses an unknown placeholder {exc}; "
                f"available: {', '.join(sorted(values)) or '(none)'}",
                path=self.sources.get(key),
                field=key,
            ) from None

    def optional(self, key: str, /, **values: object) -> str:
        """Like `get`, but an absent key is the empty string (help texts)."""
        return self.get(key, **values) if key in self.entries else ""


def choose_language(env: Mapping[str, str], configured: str | None) -> str:
    """`OKSTRA_LANG` wins over the config's `language`; default English."""
    for candidate in (env.get("OKSTRA_LANG"), configured):
        if candidate and candidate.strip():
            # "ko_KR.UTF-8" and "ko-KR" both mean the Korean catalog.
            return candidate.strip().split(".")[0].replace("_", "-").split("-")[0].lower()
    return DEFAULT_LANGUAGE


def load_text(
    env: Mapping[str, str], language: str | None = None, *, cache: Path | None = None
) -> WizardText:
    """Load the catalog for `language` over the English base (`cache`: the user cache
    directory keeping parsed tables between processes; None: once per process)."""
    lang = language or DEFAULT_LANGUAGE
    base_path = resource("wizard.toml", env)
    entries = _load_table(base_path, cache)
    sources: dict[str, Path] = dict.fromkeys(entries, base_path)
    if lang != DEFAULT_LANGUAGE:
        translated = resource(f"wizard.{lang}.toml", env)
        if translated.is_file():
            overlay = _load_table(translated, cache)
            entries.update(overlay)
            sources.update(dict.fromkeys(overlay, translated))
        else:
            # An unknown language is not an error: English is always there.
            lang = DEFAULT_LANGUAGE
    return WizardText(language=lang, entries=entries, sources=sources)


def text_for(environment: Environment) -> WizardText:
    """The catalog in the person's language, for callers without a wizard step.

    The global config is read only when `OKSTRA_LANG` is unset; a broken one means
    English here (whoever reads its other keys reports it). Raises `DataFileError`
    when a text catalog itself is broken.
    """
    configured: str | None = None
    if not (environment.env.get("OKSTRA_LANG") or "").strip():
        from ..catalog import load_global_config

        try:
            configured = load_global_config(user_dirs(environment.env).config_file).language
        except DataFileError:
            configured = None
    env = environment.env
    return load_text(env, choose_language(env, configured), cache=user_dirs(env).cache)
