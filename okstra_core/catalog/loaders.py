"""Load and validate the data okstra ships and reads: profiles, providers, hosts, configs.

Every loader parses bytes itself (so non-UTF-8 and invalid TOML/JSON are reported
with the file and line) and turns a pydantic `ValidationError` into ONE
`DataFileError` naming the file, the field path (`roles[1].max`) and what was
expected. Beyond the models' type checks, the loaders enforce the cross-field rules of
SPEC §3 (counts, duplicate roles, role references, launch placeholders, aliases).

Bundled data comes through `okstra_core.paths.resource()`: a workspace
(`OKSTRA_WORKSPACE`) file replaces the bundled file of the same name, and whatever the
workspace lacks falls back to the bundled copy.
"""

from __future__ import annotations

import os
import re
import string
import threading
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..environment import Environment
from ..errors import DataFileError, UsageError
from ..paths import bundled_prompts_root, prompts_root, resource, user_dirs
from ..store import decode_utf8, parse_json_object, read_bytes
from .models import (
    LEADER,
    MAX_ROLE_COUNT,
    TASK_TYPES,
    GlobalConfig,
    HostSpec,
    ModelDefaults,
    Profile,
    ProviderSpec,
)

__all__ = [
    "BUNDLED_PROVIDER_ORDER",
    "DISCOVER_PLACEHOLDERS",
    "TEMPLATE_PLACEHOLDERS",
    "Catalog",
    "ProjectConfig",
    "detect_host",
    "load_catalog",
    "load_global_config",
    "load_host",
    "load_profile",
    "load_project_config",
    "load_provider",
    "template_fields",
]

# The registry order of the bundled providers (SPEC §3.2); others follow, sorted by id.
BUNDLED_PROVIDER_ORDER: tuple[str, ...] = ("claude", "antigravity", "codex", "grok", "kimi")

# Placeholders a launch template (argv element or env value) may use (SPEC §9).
TEMPLATE_PLACEHOLDERS: frozenset[str] = frozenset(
    {"cli", "session_id", "model", "prompt", "prompt_file", "kickoff", "project_root"}
)
# A discover glob may only read environment variables: `{env.CODEX_HOME}`.
DISCOVER_PLACEHOLDERS = re.compile(r"env\.[A-Za-z_][A-Za-z0-9_]*")

# Role, duty, provider and model ids end up in step ids (`role-model:<role>:<n>`),
# argv (`--role-model role=provider/model`) and file names: keep them plain.
_ID = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOBAL_CONFIG_KEYS = ("modelDefaults", "disabledProviders", "language", "theme")

_T = TypeVar("_T")


def _known(table: Mapping[str, _T], key: str, what: str) -> _T:
    """`table[key]`, or a `UsageError` naming the `what` and every known key."""
    try:
        return table[key]
    except KeyError:
        known = ", ".join(table)
        raise UsageError(f"unknown {what} {key!r}: expected one of {known}") from None


# --------------------------------------------------------------------------- catalog


# eq=False: identity hashing, so a catalog can key a cache (its mappings are unhashable).
@dataclass(frozen=True, eq=False)
class Catalog:
    """Everything `prompts/` and the user's config declare, validated.

    Attributes:
        profiles: role profiles by task type; the SPEC's task types first, in order,
            then any workspace-only task types sorted by name.
        providers: the provider registry, in registry order (bundled claude,
            antigravity, codex, grok, kimi; other workspace providers; user providers
            sorted by id — a user file with a known id replaces that provider in place).
        hosts: host runtimes by id (file-name order).
        config: the global config (`<config dir>/config.json`; defaults if absent).
    """

    profiles: Mapping[str, Profile]
    providers: tuple[ProviderSpec, ...]
    hosts: Mapping[str, HostSpec]
    config: GlobalConfig = field(default_factory=GlobalConfig)

    def profile(self, task_type: str) -> Profile:
        """The profile of `task_type`; `UsageError` naming the known ones otherwise."""
        return _known(self.profiles, task_type, "task type")

    def host(self, host_id: str) -> HostSpec:
        """The host runtime `host_id`; `UsageError` naming the known ones otherwise."""
        return _known(self.hosts, host_id, "host")

    def provider(self, provider_id: str) -> ProviderSpec:
        """The provider `provider_id`; `UsageError` naming the known ones otherwise."""
        for spec in self.providers:
            if spec.id == provider_id:
                return spec
        known = ", ".join(p.id for p in self.providers)
        raise UsageError(f"unknown provider {provider_id!r}: expected one of {known}")


@dataclass(frozen=True)
class ProjectConfig:
    """`<project_root>/.okstra/project.json`.

    Attributes:
        project_id: the `projectId` key, when present.
        model_defaults: the project scope of the model defaults (`modelDefaults`).
        raw: the whole file as read, so prepare can upsert it without losing keys.
        path: where it was (or would be) read from.
    """

    project_id: str | None = None
    model_defaults: ModelDefaults = field(default_factory=ModelDefaults)
    raw: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


def load_catalog(environment: Environment) -> Catalog:
    """Load profiles, providers, hosts and the global config for `environment`.

    Args:
        environment: whose `OKSTRA_WORKSPACE` / `OKSTRA_HOME` select the data.

    Returns:
        The validated catalog.

    Raises:
        DataFileError: a data or config file is malformed (names the file and field).
    """
    env = environment.env
    profiles: dict[str, Profile] = {}
    for name, path in _data_files("profiles", ".md", env):
        profiles[name] = load_profile(path)
    ordered = {t: profiles[t] for t in TASK_TYPES if t in profiles}
    ordered.update((t, profiles[t]) for t in sorted(profiles) if t not in ordered)

    providers: list[ProviderSpec] = [
        load_provider(path, bundled=True) for _, path in _data_files("providers", ".toml", env)
    ]
    rank = {pid: i for i, pid in enumerate(BUNDLED_PROVIDER_ORDER)}
    providers.sort(key=lambda p: (rank.get(p.id, len(rank)), p.id))
    for path in _user_provider_files(env):
        spec = load_provider(path, bundled=False)
        for i, existing in enumerate(providers):
            if existing.id == spec.id:
                providers[i] = spec
                break
        else:
            providers.append(spec)

    provider_ids = [p.id for p in providers]
    hosts: dict[str, HostSpec] = {}
    for name, path in _data_files("hosts", ".toml", env):
        host = load_host(path)
        if host.native_provider is not None and host.native_provider not in provider_ids:
            raise DataFileError(
                f"unknown provider {host.native_provider!r}: expected one of "
                f"{', '.join(provider_ids)}",
                path=path,
                field="native_provider",
            )
        hosts[name] = host

    config_file = user_dirs(env).config_file
    config = load_global_config(config_file)
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
    """Choose the host runtime okstra runs in from its environment variables.

    The first host (catalog order) with any of its `detect_env` variables set to a
    non-empty value wins; otherwise `terminal`.
    """
    for host in catalog.hosts.values():
        if any(environment.get(var) for var in host.detect_env):
            return host
    return catalog.host("terminal")


# --------------------------------------------------------------------------- profiles


def load_profile(path: Path) -> Profile:
    """Load `prompts/profiles/<task-type>.md`: TOML front matter between `+++` lines.

    Raises:
        DataFileError: unreadable, not UTF-8, missing/unclosed front matter, invalid
            TOML, a type error, or a rule of SPEC §3.1 broken.
    """
    path = Path(path)
    return _cached("profile", path, False, _parse_profile)


def _parse_profile(path: Path, data: bytes, _bundled: bool) -> Profile:
    text = _decode(data, path)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise DataFileError(
            "missing TOML front matter: expected the file to start with a '+++' line",
            path=path,
        )
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "+++"), None)
    if end is None:
        raise DataFileError(
            "front matter is not closed: expected a second '+++' line after the roles",
            path=path,
        )
    front = _parse_toml("".join(lines[1:end]), path, line_offset=1)
    for reserved in ("body", "source"):
        if reserved in front:
            raise DataFileError(
                "unknown key: the body is the Markdown after the front matter",
                path=path,
                field=reserved,
            )
    body = "".join(lines[end + 1 :]).strip()
    profile = _validate(
        Profile, {**front, "body": body + "\n" if body else "", "source": str(path)}, path
    )
    _check_profile(profile, path)
    return profile


def _check_profile(profile: Profile, path: Path) -> None:
    expected = path.stem
    if profile.task_type != expected:
        raise DataFileError(
            f"expected {expected!r} (the file name), got {profile.task_type!r}",
            path=path,
            field="task_type",
        )
    seen: dict[str, int] = {}
    for i, req in enumerate(profile.roles):
        where = f"roles[{i}]"
        if req.role == LEADER:
            raise DataFileError(
                "the leader role is implicit (every run has exactly one); do not declare it",
                path=path,
                field=f"{where}.role",
            )
        _check_id(req.role, path, f"{where}.role")
        _check_id(req.duty, path, f"{where}.duty")
        if req.role in seen:
            raise DataFileError(
                f"duplicate role {req.role!r} (already declared in roles[{seen[req.role]}])",
                path=path,
                field=f"{where}.role",
            )
        seen[req.role] = i
        if req.min > req.max:
            raise DataFileError(
                f"min ({req.min}) is greater than max ({req.max}): expected min <= max",
                path=path,
                field=f"{where}.min",
            )
        if req.max > MAX_ROLE_COUNT:
            raise DataFileError(
                f"max ({req.max}) is above {MAX_ROLE_COUNT}, the most instances of one role "
                "okstra runs",
                path=path,
                field=f"{where}.max",
            )
        if not req.dynamic and req.max == 0:
            raise DataFileError(
                "expected max >= 1 (a role that can never be staffed does not belong here)",
                path=path,
                field=f"{where}.max",
            )
        if req.recommended is not None and not req.min <= req.recommended <= req.max:
            raise DataFileError(
                f"recommended ({req.recommended}) is outside [min, max] = [{req.min}, {req.max}]",
                path=path,
                field=f"{where}.recommended",
            )
    static = {r.role for r in profile.roles if not r.dynamic} | {LEADER}
    for i, req in enumerate(profile.roles):
        for k, other in enumerate(req.exclude_models_of):
            where = f"roles[{i}].exclude_models_of[{k}]"
            if other == req.role:
                raise DataFileError(
                    f'a role cannot exclude itself; use distinct = "model" on {req.role!r}',
                    path=path,
                    field=where,
                )
            if other not in static:
                what = (
                    "a dynamic role (no model is chosen for it)"
                    if other in seen
                    else "unknown role"
                )
                raise DataFileError(
                    f"{what} {other!r}: expected one of {', '.join(sorted(static))}",
                    path=path,
                    field=where,
                )


# --------------------------------------------------------------------------- providers


def load_provider(path: Path, *, bundled: bool) -> ProviderSpec:
    """Load a provider file (`prompts/providers/<id>.toml` or a user provider).

    Args:
        path: the TOML file; its name must be `<id>.toml`.
        bundled: whether it ships with okstra (or the workspace) rather than the user.

    Raises:
        DataFileError: unreadable, not UTF-8, invalid TOML, a type error, or a rule of
            SPEC §3.2 broken (ids, aliases, roles, launch placeholders).
    """
    path = Path(path)
    return _cached("provider", path, bundled, _parse_provider)


def _parse_provider(path: Path, data: bytes, bundled: bool) -> ProviderSpec:
    raw = _parse_toml(_decode(data, path), path)
    for reserved in ("source", "bundled"):
        if reserved in raw:
            raise DataFileError("unknown key", path=path, field=reserved)
    spec = _validate(ProviderSpec, {**raw, "source": str(path), "bundled": bundled}, path)
    _check_provider(spec, path)
    return spec


def _check_provider(spec: ProviderSpec, path: Path) -> None:
    if spec.id != path.stem:
        raise DataFileError(
            f"expected {path.stem!r} (the file name), got {spec.id!r}", path=path, field="id"
        )
    _check_id(spec.id, path, "id")
    roles = set()
    for i, role in enumerate(spec.roles):
        _check_id(role, path, f"roles[{i}]")
        if role in roles:
            raise DataFileError(f"duplicate role {role!r}", path=path, field=f"roles[{i}]")
        roles.add(role)
    if not spec.roles:
        raise DataFileError("expected at least one role", path=path, field="roles")
    if not spec.models:
        raise DataFileError("expected at least one [[models]] entry", path=path, field="models")
    _check_launch(spec, path)

    ids: dict[str, int] = {}
    names: dict[str, str] = {}  # lower-cased id or alias -> where it was declared
    for i, model in enumerate(spec.models):
        where = f"models[{i}]"
        _check_id(model.id, path, f"{where}.id")
        if model.execution.startswith("-") or model.execution != model.execution.strip():
            # It is passed as the value of the CLI's model flag: never let it be a flag.
            raise DataFileError(
                f"expected a model name for the CLI, got {model.execution!r}",
                path=path,
                field=f"{where}.execution",
            )
        if model.id in ids:
            raise DataFileError(
                f"duplicate model id {model.id!r} (already models[{ids[model.id]}])",
                path=path,
                field=f"{where}.id",
            )
        ids[model.id] = i
        for j, value in enumerate((model.id, *model.aliases)):
            field_name = f"{where}.id" if j == 0 else f"{where}.aliases[{j - 1}]"
            if j and not value.strip():
                raise DataFileError("expected a non-empty alias", path=path, field=field_name)
            key = value.lower()
            if key in names and names[key] != where:
                raise DataFileError(
                    f"{value!r} collides with a model id or alias of {names[key]} "
                    "(aliases are case-insensitive)",
                    path=path,
                    field=field_name,
                )
            names[key] = where
        for k, role in enumerate(model.roles):
            if role not in roles:
                raise DataFileError(
                    f"role {role!r} is not one of the provider's roles ({', '.join(spec.roles)})",
                    path=path,
                    field=f"{where}.roles[{k}]",
                )
        effective = set(model.roles) or roles
        for k, role in enumerate(model.default_for):
            if role not in effective:
                raise DataFileError(
                    f"role {role!r} is not a role of this model "
                    f"({', '.join(r for r in spec.roles if r in effective)})",
                    path=path,
                    field=f"{where}.default_for[{k}]",
                )


def _check_launch(spec: ProviderSpec, path: Path) -> None:
    launch = spec.launch
    for name in ("version", "new", "resume", "help"):
        argv: tuple[str, ...] = getattr(launch, name)
        if not argv:
            if name == "help":
                continue
            raise DataFileError(
                "expected a non-empty argv array", path=path, field=f"launch.{name}"
            )
        if argv[0] != "{cli}":
            raise DataFileError(
                'expected the first element to be "{cli}" (the provider\'s cli)',
                path=path,
                field=f"launch.{name}[0]",
            )
        for i, element in enumerate(argv):
            _check_template(element, path, f"launch.{name}[{i}]")
    for key, value in launch.env.items():
        if not _ENV_NAME.fullmatch(key):
            raise DataFileError(
                "expected an environment variable name (letters, digits, '_')",
                path=path,
                field=f"launch.env.{key}",
            )
        _check_template(value, path, f"launch.env.{key}")

    used_new = {f for element in launch.new for f in template_fields(element)}
    used_env = {f for value in launch.env.values() for f in template_fields(value)}
    if not ({"prompt", "prompt_file"} & (used_new | used_env)):
        raise DataFileError(
            "the lead prompt is never passed: expected {prompt} or {prompt_file} in "
            "launch.new or launch.env",
            path=path,
            field="launch.new",
        )
    used_resume = {f for element in launch.resume for f in template_fields(element)}
    if "session_id" not in used_resume:
        raise DataFileError(
            "expected {session_id} (resume must name the session)",
            path=path,
            field="launch.resume",
        )
    if launch.session_id == "discover":
        if launch.discover is None:
            raise DataFileError(
                'expected a [launch.discover] table when session_id = "discover"',
                path=path,
                field="launch.discover",
            )
        if "session_id" in used_new:
            raise DataFileError(
                'the CLI mints the id when session_id = "discover": '
                "{session_id} cannot be passed to launch.new",
                path=path,
                field="launch.new",
            )
        _check_discover_glob(launch.discover.glob, path)
        try:
            pattern = re.compile(launch.discover.id_pattern)
        except re.error as exc:
            raise DataFileError(
                f"invalid regular expression ({exc})",
                path=path,
                field="launch.discover.id_pattern",
            ) from None
        if pattern.groups < 1:
            raise DataFileError(
                "expected a group capturing the session id, e.g. '-([0-9a-f-]+)\\.jsonl$'",
                path=path,
                field="launch.discover.id_pattern",
            )
    else:
        if launch.discover is not None:
            raise DataFileError(
                f'only used when session_id = "discover" (it is {launch.session_id!r})',
                path=path,
                field="launch.discover",
            )
        if "session_id" not in used_new:
            raise DataFileError(
                f"expected {{session_id}}: okstra mints a {launch.session_id} id and the "
                "CLI must be given it, or the resume sheet would name a session that "
                "does not exist",
                path=path,
                field="launch.new",
            )
    for i, flag in enumerate(launch.required_flags):
        if not flag.startswith("-"):
            raise DataFileError(
                f"expected a flag such as '--model', got {flag!r}",
                path=path,
                field=f"launch.required_flags[{i}]",
            )


def template_fields(template: str) -> list[str]:
    """The `{placeholder}` names used by one template string (`{{`/`}}` escape a brace).

    Raises:
        ValueError: unbalanced braces.
    """
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def _check_template(template: str, path: Path, where: str) -> None:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DataFileError(
            f"unbalanced braces in {template!r} ({exc}); write {{{{ or }}}} for a literal brace",
            path=path,
            field=where,
        ) from None
    allowed = ", ".join("{" + p + "}" for p in sorted(TEMPLATE_PLACEHOLDERS))
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_PLACEHOLDERS or spec or conversion:
            shown = (
                "{"
                + name
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            raise DataFileError(
                f"unknown placeholder {shown}: expected one of {allowed}",
                path=path,
                field=where,
            )


def _check_discover_glob(glob: str, path: Path) -> None:
    where = "launch.discover.glob"
    try:
        parsed = list(string.Formatter().parse(glob))
    except ValueError as exc:
        raise DataFileError(f"unbalanced braces ({exc})", path=path, field=where) from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not DISCOVER_PLACEHOLDERS.fullmatch(name) or spec or conversion:
            raise DataFileError(
                f"unknown placeholder {{{name}}}: a discover glob may only use "
                "{env.NAME} (an environment variable)",
                path=path,
                field=where,
            )


# --------------------------------------------------------------------------- hosts


def load_host(path: Path) -> HostSpec:
    """Load `prompts/hosts/<id>.toml`.

    Raises:
        DataFileError: unreadable, invalid TOML, a type error, an id that is not the
            file name, or no entry mode.
    """
    path = Path(path)
    return _cached("host", path, False, _parse_host)


def _parse_host(path: Path, data: bytes, _bundled: bool) -> HostSpec:
    raw = _parse_toml(_decode(data, path), path)
    if "source" in raw:
        raise DataFileError("unknown key", path=path, field="source")
    host = _validate(HostSpec, {**raw, "source": str(path)}, path)
    if host.id != path.stem:
        raise DataFileError(
            f"expected {path.stem!r} (the file name), got {host.id!r}", path=path, field="id"
        )
    if not host.entry_modes:
        raise DataFileError("expected at least one entry mode", path=path, field="entry_modes")
    if "current-session" in host.entry_modes and host.native_provider is None:
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


# --------------------------------------------------------------------------- configs


def load_global_config(path: Path) -> GlobalConfig:
    """Load `<config dir>/config.json`; an absent file gives the defaults.

    Keys: `modelDefaults` (role -> non-empty array of model refs), `disabledProviders`
    (array of provider ids), `language`, `theme` (string or null). Any other key is
    refused by name.

    Raises:
        DataFileError: unreadable, invalid JSON, not an object, an unknown key or a
            value of the wrong type.
    """
    path = Path(path)
    if not path.exists():
        return GlobalConfig(source=str(path))
    return parse_global_config(_read_json_object(path), path)


def parse_global_config(raw: dict[str, Any], path: Path) -> GlobalConfig:
    """Validate the parsed object of `<config dir>/config.json` (see `load_global_config`).

    Also how a change is checked before it is written (`okstra_core.config`).

    Raises:
        DataFileError: an unknown key or a value of the wrong type (`path` named).
    """
    for key in raw:
        if key not in _GLOBAL_CONFIG_KEYS:
            raise DataFileError(
                f"unknown key {key!r}: expected one of {', '.join(_GLOBAL_CONFIG_KEYS)}",
                path=path,
                field=key,
            )
    disabled = raw.get("disabledProviders", [])
    if not isinstance(disabled, list):
        raise DataFileError(
            f"expected an array of provider ids, got {_describe(disabled, json=True)}",
            path=path,
            field="disabledProviders",
        )
    for i, pid in enumerate(disabled):
        if not isinstance(pid, str) or not pid:
            raise DataFileError(
                f"expected a provider id (string), got {_describe(pid, json=True)}",
                path=path,
                field=f"disabledProviders[{i}]",
            )
    optional: dict[str, str | None] = {}
    for key in ("language", "theme"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise DataFileError(
                f"expected a non-empty string or null, got {_describe(value, json=True)}",
                path=path,
                field=key,
            )
        optional[key] = value
    return GlobalConfig(
        model_defaults=_model_defaults(raw.get("modelDefaults", {}), path),
        disabled_providers=tuple(disabled),
        language=optional["language"],
        theme=optional["theme"],
        source=str(path),
    )


def load_project_config(project_root: Path) -> ProjectConfig:
    """Load `<project_root>/.okstra/project.json`; an absent file gives an empty config.

    Only `projectId` (string) and `modelDefaults` are interpreted; every other key is
    kept untouched in `raw`.

    Raises:
        DataFileError: unreadable, invalid JSON, not an object, or a bad
            `projectId`/`modelDefaults`.
    """
    path = Path(project_root) / ".okstra" / "project.json"
    if not os.path.lexists(path):
        return ProjectConfig(model_defaults=ModelDefaults(source=str(path)), path=path)
    # okstra's own file: a symbolic link (to /dev/zero, to a secret) is refused.
    raw = parse_json_object(
        read_bytes(path, error=DataFileError, follow=False), path, error=DataFileError
    )
    project_id = raw.get("projectId")
    if project_id is not None and (not isinstance(project_id, str) or not project_id):
        raise DataFileError(
            f"expected a non-empty string, got {_describe(project_id, json=True)}",
            path=path,
            field="projectId",
        )
    return ProjectConfig(
        project_id=project_id,
        model_defaults=_model_defaults(raw.get("modelDefaults", {}), path),
        raw=raw,
        path=path,
    )


def _model_defaults(value: Any, path: Path) -> ModelDefaults:
    if not isinstance(value, dict):
        raise DataFileError(
            "expected an object mapping a role to an array of model refs, got "
            f"{_describe(value, json=True)}",
            path=path,
            field="modelDefaults",
        )
    by_role: dict[str, tuple[str, ...]] = {}
    for role, refs in value.items():
        where = f"modelDefaults.{role}"
        if not _ID.fullmatch(role):
            raise DataFileError(
                "expected a role id (lower-case letters, digits, '-', '_')",
                path=path,
                field=where,
            )
        if not isinstance(refs, list) or not refs:
            raise DataFileError(
                "expected a non-empty array of model refs ('provider/model'), got "
                f"{_describe(refs, json=True)}",
                path=path,
                field=where,
            )
        for i, ref in enumerate(refs):
            parts = ref.split("/") if isinstance(ref, str) else []
            if len(parts) != 2 or not all(p.strip() for p in parts):
                raise DataFileError(
                    f"expected a model ref 'provider/model', got {_describe(ref, json=True)}",
                    path=path,
                    field=f"{where}[{i}]",
                )
        by_role[role] = tuple(refs)
    return ModelDefaults(by_role=by_role, source=str(path))


def _read_json_object(path: Path) -> dict[str, Any]:
    return parse_json_object(_read(path), path, error=DataFileError)


# --------------------------------------------------------------------------- plumbing


def _data_files(subdir: str, suffix: str, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """(name, path) of every data file of `subdir`, workspace files over bundled ones.

    Names come from both the bundled directory and the workspace's; each path is then
    resolved through `resource()`, so a workspace file replaces the bundled one and
    anything the workspace lacks falls back to the bundled copy.
    """
    names: set[str] = set()
    roots = [bundled_prompts_root() / subdir, prompts_root(env) / subdir]
    for directory in dict.fromkeys(roots):
        if directory.is_dir():
            names.update(
                p.stem
                for p in directory.iterdir()
                if p.suffix == suffix and not p.name.startswith(".") and p.is_file()
            )
    return [(name, resource(f"{subdir}/{name}{suffix}", env)) for name in sorted(names)]


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
_CACHE_LOCK = threading.Lock()
_CACHE_LIMIT = 256


def _cached(kind: str, path: Path, bundled: bool, parse: Callable[[Path, bytes, bool], _T]) -> _T:
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


def _decode(data: bytes, path: Path) -> str:
    # An editor's byte-order mark is not content.
    return decode_utf8(data, path, error=DataFileError).removeprefix("\ufeff")


_TOML_LINE = re.compile(r"at line (\d+)")


def _parse_toml(text: str, path: Path, *, line_offset: int = 0) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        if line_offset:
            message = _TOML_LINE.sub(lambda m: f"at line {int(m.group(1)) + line_offset}", message)
        raise DataFileError(f"invalid TOML: {message}", path=path) from None
    except RecursionError:
        # tomllib recurses per nesting level; a hostile file must not crash okstra.
        raise DataFileError("invalid TOML: arrays or tables nested too deeply", path=path) from None


def _check_id(value: str, path: Path, where: str) -> None:
    if not _ID.fullmatch(value):
        raise DataFileError(
            f"expected an id of lower-case letters, digits, '.', '-', '_', got {value!r}",
            path=path,
            field=where,
        )


_M = TypeVar("_M", bound=BaseModel)


def _validate(model: type[_M], raw: dict[str, Any], path: Path) -> _M:
    """Validate `raw` against `model`; the first error becomes one `DataFileError`."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = _field_path(first["loc"])
        message = _explain(first, model)
        if len(errors) > 1:
            others = ", ".join(_field_path(e["loc"]) or "(top level)" for e in errors[1:4])
            more = "" if len(errors) <= 4 else f" and {len(errors) - 4} more"
            message += f" (also wrong: {others}{more})"
        raise DataFileError(message, path=path, field=where or None) from None


def _field_path(loc: Iterable[int | str]) -> str:
    out = ""
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        elif item == "[key]":
            continue
        else:
            out += f".{item}" if out else str(item)
    return out


def _explain(error: Any, model: type[BaseModel]) -> str:
    kind: str = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    got = f", got {_describe(value)}"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, error["loc"][:-1])
        hint = f": expected one of {', '.join(allowed)}" if allowed else ""
        return f"unknown key {error['loc'][-1]!r}{hint}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return (
            "expected an integer"
            + (" (booleans are not integers)" if isinstance(value, bool) else "")
            + got
        )
    if kind in ("string_type", "string_sub_type"):
        return "expected a string" + got
    if kind in ("bool_type", "bool_parsing"):
        return "expected a boolean (true or false)" + got
    if kind in ("float_type", "float_parsing"):
        return "expected a number" + got
    if kind in ("tuple_type", "list_type", "iterable_type"):
        return "expected an array" + got
    if kind in ("dict_type", "model_type", "model_attributes_type", "mapping_type"):
        return "expected a table" + got
    if kind == "literal_error":
        return f"expected {ctx.get('expected', 'one of the allowed values')}" + got
    if kind == "greater_than_equal":
        return f"expected a number >= {ctx.get('ge')}" + got
    if kind == "greater_than":
        return f"expected a number > {ctx.get('gt')}" + got
    if kind == "finite_number":
        return "expected a finite number" + got
    if kind in ("string_too_short", "too_short"):
        return "must not be empty"
    msg: str = error.get("msg", "invalid value")
    return msg[:1].lower() + msg[1:] + got


def _allowed_keys(model: type[BaseModel], loc: Iterable[int | str]) -> list[str]:
    """The field names of the (nested) model at `loc`, for "unknown key" hints."""
    current: Any = model
    for item in loc:
        if isinstance(item, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        info = current.model_fields.get(str(item))
        if info is None:
            return []
        current = _inner_model(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        hidden = {"source", "bundled", "body"}
        return [name for name in current.model_fields if name not in hidden]
    return []


def _inner_model(annotation: Any) -> Any:
    """The BaseModel inside `tuple[X, ...]`, `X | None`, … (or None)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _describe(value: Any, *, json: bool = False) -> str:
    table = "an object" if json else "a table"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return table
    if value is None:
        return "null"
    return type(value).__name__
