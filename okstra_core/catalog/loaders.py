"""Load the data okstra ships and reads: profiles, providers, hosts, configs; the catalog.

Every loader reads the bytes itself (non-UTF-8 and invalid TOML/JSON are reported with
the file and line) and checks them against their record (`okstra_core.catalog.validate`:
ONE `DataFileError` naming the file, the field path and what was expected), then the
catalog's cross-field rules. Parsed files are kept per process, keyed by their bytes;
whole catalogs also in the user cache (`okstra_core.derived`, kind `CATALOG`). Bundled
data comes through `okstra_core.paths.resource()`: a workspace (`OKSTRA_WORKSPACE`) file
replaces the bundled file of the same name.
"""

from __future__ import annotations

import _thread
import os
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .. import derived
from ..environment import Environment
from ..errors import DataFileError, UsageError
from ..paths import bundled_prompts_root, prompts_root, resource, user_dirs
from ..records import dataclass, field
from ..store import parse_json_object, read_bytes
from ..vocabulary import CURRENT_SESSION
from .models import GlobalConfig, HostSpec, ModelDefaults, Profile, ProviderSpec
from .rules import DataProblem
from .validate import (
    CONFIG_KEYS,
    bad_value,
    check_launch,
    decode,
    model_defaults,
    parse_global_config,
    parse_toml,
    validate_record,
)

# The registry order of the bundled providers; others follow, sorted by id; demo
# providers (`demo = true`) come last.
BUNDLED_PROVIDER_ORDER: tuple[str, ...] = ("claude", "antigravity", "codex", "grok", "kimi", "demo")


_T = TypeVar("_T")


def _known(table: Mapping[str, _T], key: str, what: str) -> _T:
    """`table[key]`, or a `UsageError` naming the `what` and every known key."""
    try:
        return table[key]
    except KeyError:
        known = ", ".join(table)
        raise UsageError(f"unknown {what} {key!r}: expected one of {known}") from None


# eq=False: identity hashing, so a catalog can key a cache (its mappings are unhashable).
@dataclass(frozen=True, eq=False)
class Catalog:
    """Everything `prompts/` and the user's config declare, validated.

    `profiles` by task type, in their `order`, then by name; `providers` in registry
    order (`BUNDLED_PROVIDER_ORDER`, other workspace providers, user providers by id — a
    user file with a known id replaces that provider in place); `hosts` by id (file-name
    order); `config` (`<config dir>/config.json`, defaults if absent).
    """

    profiles: Mapping[str, Profile]
    providers: tuple[ProviderSpec, ...]
    hosts: Mapping[str, HostSpec]
    config: GlobalConfig = field(default_factory=GlobalConfig)

    def __reduce__(self) -> tuple[Any, ...]:
        # Mapping proxies do not pickle: rebuild them from plain dicts.
        return (_catalog, (dict(self.profiles), self.providers, dict(self.hosts), self.config))

    def profile(self, task_type: str) -> Profile:
        """The profile of `task_type`; `UsageError` naming the known ones otherwise."""
        return _known(self.profiles, task_type, "task type")

    def host(self, host_id: str) -> HostSpec:
        """The host runtime `host_id`; `UsageError` naming the known ones otherwise."""
        return _known(self.hosts, host_id, "host")

    def provider(self, provider_id: str) -> ProviderSpec:
        """The provider `provider_id`; `UsageError` naming the known ones otherwise."""
        return _known({p.id: p for p in self.providers}, provider_id, "provider")


def _catalog(
    profiles: dict[str, Profile],
    providers: tuple[ProviderSpec, ...],
    hosts: dict[str, HostSpec],
    config: GlobalConfig,
) -> Catalog:
    return Catalog(
        types.MappingProxyType(profiles), providers, types.MappingProxyType(hosts), config
    )


@dataclass(frozen=True)
class ProjectConfig:
    """`<project_root>/.okstra/project.json`: `raw` is the whole file as read (prepare
    upserts it without losing keys), `data` its exact bytes (None when absent), so
    prepare can tell whether okstra wrote them (`okstra_core.documents.trust`)."""

    project_id: str | None = None
    model_defaults: ModelDefaults = field(default_factory=ModelDefaults)
    raw: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    data: bytes | None = None


def load_catalog(environment: Environment) -> Catalog:
    """Load profiles, providers, hosts and the global config for `environment`.

    Every file is read on every call; a catalog built from the very same bytes is
    reused from this process's memory, else from the user cache (`CATALOG`).

    Raises:
        DataFileError: a data or config file is malformed (names the file and field).
    """
    env = environment.env
    inputs = _catalog_inputs(env)
    key = derived.key(CATALOG, *_key_parts(inputs))
    with _CACHE_LOCK:
        known = _CATALOGS.get(key)
    if known is not None:
        return known
    cache = user_dirs(env).cache
    catalog = derived.recall_value(cache, CATALOG, key, Catalog)
    if catalog is None:
        catalog = _build_catalog(inputs)
        derived.keep_value(cache, CATALOG, key, catalog)
    with _CACHE_LOCK:
        if len(_CATALOGS) >= _CATALOG_LIMIT:
            _CATALOGS.clear()
        _CATALOGS[key] = catalog
    return catalog


# One input of a catalog: (kind, path, bundled, bytes — None for an absent config file).
_Input = tuple[str, Path, bool, bytes | None]

# A validated catalog, derived from the bytes of every file it is built from (an absent
# config file counts as absent). Its value depends on the records' rules here and in
# `models` and on the validating library's version; a catalog read back needs none of
# them (no pydantic import).
CATALOG = derived.Kind(
    "catalog",
    keep=8,
    code=(
        "catalog/models.py",
        "catalog/rules.py",
        "catalog/activity.py",
        "catalog/settings.py",
        "catalog/loaders.py",
        "catalog/validate.py",
        "records.py",
    ),
    libraries=(("pydantic", "version.py"), ("pydantic_core", "__init__.py")),
)


def _key_parts(inputs: Iterable[_Input]) -> list[bytes | str | None]:
    parts: list[bytes | str | None] = []
    for kind, path, bundled, data in inputs:
        parts += [kind, str(path), "bundled" if bundled else "user", data]
    return parts


def _catalog_inputs(env: Mapping[str, str]) -> list[_Input]:
    """Every file a catalog is built from, read now, in the order they are validated."""
    inputs: list[_Input] = [
        ("profile", path, False, _read(path)) for path in _data_files("profiles", ".md", env)
    ]
    inputs += [
        ("provider", path, True, _read(path)) for path in _data_files("providers", ".toml", env)
    ]
    inputs += [("provider", path, False, _read(path)) for path in _user_provider_files(env)]
    inputs += [("host", path, False, _read(path)) for path in _data_files("hosts", ".toml", env)]
    config_file = user_dirs(env).config_file
    inputs.append(
        ("config", config_file, False, _read(config_file) if config_file.exists() else None)
    )
    return inputs


def _build_catalog(inputs: list[_Input]) -> Catalog:
    """Parse and validate a catalog's files (read by `_catalog_inputs`)."""
    profiles: dict[str, Profile] = {}
    bundled_providers: list[ProviderSpec] = []
    user_providers: list[ProviderSpec] = []
    hosts_in: list[tuple[Path, HostSpec]] = []
    config_file: Path | None = None
    config_data: bytes | None = None
    for kind, path, bundled, data in inputs:
        if kind == "config":
            config_file, config_data = path, data
            continue
        assert data is not None  # only the config file may be absent
        if kind == "profile":
            profiles[path.stem] = _cached("profile", path, False, _parse_profile, data)
        elif kind == "provider":
            spec = _cached("provider", path, bundled, _parse_provider, data)
            (bundled_providers if bundled else user_providers).append(spec)
        else:
            hosts_in.append((path, _cached("host", path, False, _parse_host, data)))
    ordered = {t: profiles[t] for t in sorted(profiles, key=lambda t: (profiles[t].order, t))}

    rank = {pid: i for i, pid in enumerate(BUNDLED_PROVIDER_ORDER)}
    bundled_providers.sort(key=lambda p: (rank.get(p.id, len(rank)), p.id))
    # A user provider replaces the bundled one of its id in place; demo providers last.
    registry = {p.id: p for p in bundled_providers} | {p.id: p for p in user_providers}
    providers = sorted(registry.values(), key=lambda p: p.demo)

    provider_ids = [p.id for p in providers]
    hosts: dict[str, HostSpec] = {}
    for path, host in hosts_in:
        if host.native_provider is not None and host.native_provider not in provider_ids:
            raise DataFileError(
                f"unknown provider {host.native_provider!r}: expected one of "
                f"{', '.join(provider_ids)}",
                path=path,
                field="native_provider",
            )
        hosts[path.stem] = host

    assert config_file is not None
    config = (
        GlobalConfig(source=str(config_file))
        if config_data is None
        else parse_global_config(
            parse_json_object(config_data, config_file, error=DataFileError), config_file
        )
    )
    for i, pid in enumerate(config.disabled_providers):
        if pid not in provider_ids:
            raise DataFileError(
                f"unknown provider {pid!r}: expected one of {', '.join(provider_ids)}",
                path=config_file,
                field=f"disabledProviders[{i}]",
            )
    return Catalog(
        profiles=types.MappingProxyType(ordered),
        providers=tuple(providers),
        hosts=types.MappingProxyType(hosts),
        config=config,
    )


def detect_host(environment: Environment, catalog: Catalog) -> HostSpec:
    """The first host (catalog order) with a `detect_env` variable set, else `terminal`."""
    for host in catalog.hosts.values():
        if any(environment.get(var) for var in host.detect_env):
            return host
    return catalog.host("terminal")


def _named_record(
    record: type[_T],
    raw: dict[str, Any],
    own: dict[str, Any],
    path: Path,
    name: str,
    unknown: str = "unknown key",
) -> _T:
    """`raw` with okstra's `own` keys (refused in the file), validated; its `name` field
    must be the file's name."""
    for key in own:
        if key in raw:
            raise DataFileError(unknown, path=path, field=key)
    value = validate_record(record, {**raw, **own}, path)
    named = getattr(value, name)
    if named != path.stem:
        raise DataFileError(
            f"expected {path.stem!r} (the file name), got {named!r}", path=path, field=name
        )
    return value


def load_profile(path: Path) -> Profile:
    """Load `prompts/profiles/<task-type>.md`: TOML front matter between `+++` lines."""
    return _cached("profile", Path(path), False, _parse_profile)


def _parse_profile(path: Path, data: bytes, _bundled: bool) -> Profile:
    from .frontmatter import split_front_matter  # a catalog from the cache parses nothing

    split = split_front_matter(
        decode(data, path),
        path,
        fences=("+++",),
        missing="missing TOML front matter: expected the file to start with a '+++' line",
        unclosed="front matter is not closed: expected a second '+++' line after the roles",
    )
    front = parse_toml(split.block, path, line_offset=1)
    body = split.body.strip()
    own = {"body": body + "\n" if body else "", "source": str(path)}
    unknown = "unknown key: the body is the Markdown after the front matter"
    return _named_record(Profile, front, own, path, "task_type", unknown)


def load_provider(path: Path, *, bundled: bool) -> ProviderSpec:
    """Load a provider file `<id>.toml` (`bundled`: shipped or the workspace's, not the
    user's)."""
    return _cached("provider", Path(path), bundled, _parse_provider)


def _parse_provider(path: Path, data: bytes, bundled: bool) -> ProviderSpec:
    raw = parse_toml(decode(data, path), path)
    own = {"source": str(path), "bundled": bundled}
    spec = _named_record(ProviderSpec, raw, own, path, "id")
    try:
        check_launch(spec)
    except DataProblem as exc:
        raise DataFileError(exc.message, path=path, field=exc.field) from None
    return spec


def load_host(path: Path) -> HostSpec:
    """Load `prompts/hosts/<id>.toml`."""
    return _cached("host", Path(path), False, _parse_host)


def _parse_host(path: Path, data: bytes, _bundled: bool) -> HostSpec:
    raw = parse_toml(decode(data, path), path)
    host = _named_record(HostSpec, raw, {"source": str(path)}, path, "id")
    if not host.entry_modes:
        raise DataFileError("expected at least one entry mode", path=path, field="entry_modes")
    if CURRENT_SESSION in host.entry_modes and host.native_provider is None:
        raise DataFileError(
            "current-session needs a native_provider (the host session is the lead)",
            path=path,
            field="entry_modes",
        )
    if host.native_sessions and host.native_provider is None:
        raise DataFileError(
            "native_sessions needs a native_provider", path=path, field="native_sessions"
        )
    return host


def load_global_config(path: Path) -> GlobalConfig:
    """Load `<config dir>/config.json` (`parse_global_config`); absent: the defaults."""
    path = Path(path)
    if not path.exists():
        return GlobalConfig(source=str(path))
    return parse_global_config(parse_json_object(_read(path), path, error=DataFileError), path)


def load_project_config(project_root: Path) -> ProjectConfig:
    """Load `<project_root>/.okstra/project.json` (absent: an empty config); only
    `projectId` and `modelDefaults` are read, every other key is kept in `raw`."""
    path = Path(project_root) / ".okstra" / "project.json"
    if not os.path.lexists(path):
        return ProjectConfig(model_defaults=ModelDefaults(source=str(path)), path=path)
    # okstra's own file: a symbolic link (to /dev/zero, to a secret) is refused.
    data = read_bytes(path, error=DataFileError, follow=False)
    raw = parse_json_object(data, path, error=DataFileError)
    # `project_id` is the earlier okstra's spelling of the key.
    key = "projectId" if "projectId" in raw or "project_id" not in raw else "project_id"
    project_id = raw.get(key)
    if project_id is not None and (not isinstance(project_id, str) or not project_id):
        raise bad_value("a non-empty string", project_id, path, key)
    return ProjectConfig(
        project_id=project_id,
        model_defaults=model_defaults(
            raw.get(CONFIG_KEYS["model_defaults"], {}), path, earlier=True
        ),
        raw=raw,
        path=path,
        data=data,
    )


def _data_files(subdir: str, suffix: str, env: Mapping[str, str]) -> list[Path]:
    """Every data file of `subdir` in the bundled directory or the workspace's, by name,
    each resolved through `resource()` (the workspace's file wins)."""
    names: set[str] = set()
    roots = [bundled_prompts_root() / subdir, prompts_root(env) / subdir]
    for directory in dict.fromkeys(roots):
        if directory.is_dir():
            names.update(
                p.stem
                for p in directory.iterdir()
                if p.suffix == suffix and not p.name.startswith(".") and p.is_file()
            )
    return [resource(f"{subdir}/{name}{suffix}", env) for name in sorted(names)]


def _user_provider_files(env: Mapping[str, str]) -> list[Path]:
    directory = user_dirs(env).user_providers
    if not directory.is_dir():
        return []
    return sorted(
        (p for p in directory.iterdir() if p.suffix == ".toml" and not p.name.startswith(".")),
        key=lambda p: p.stem,
    )


# Parsed files keyed by (kind, path, bundled, content): loading runs on every wizard
# step and in the TUI on every screen; the bytes (not the mtime, whose granularity is
# a clock tick) decide whether a cached result is still valid.
_CACHE: dict[tuple[str, str, bool, bytes], Any] = {}
_CACHE_LOCK = _thread.allocate_lock()
_CACHE_LIMIT = 256
# Whole catalogs by the digest of their inputs (the same object while nothing changed,
# so pools built on it share their model lists).
_CATALOGS: dict[str, Catalog] = {}
_CATALOG_LIMIT = 16


def _cached(
    kind: str,
    path: Path,
    bundled: bool,
    parse: Callable[[Path, bytes, bool], _T],
    data: bytes | None = None,
) -> _T:
    if data is None:
        data = _read(path)
    key = (kind, str(path), bundled, data)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        result: _T = hit
        return result
    result = parse(path, data, bundled)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = result
    return result


def _read(path: Path) -> bytes:
    return read_bytes(path, error=DataFileError)
