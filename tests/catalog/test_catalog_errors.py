"""Every malformed profile, provider, host or config file gives one clear DataFileError."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core.catalog import (
    load_global_config,
    load_host,
    load_profile,
    load_project_config,
    load_provider,
)
from okstra_core.errors import DataFileError

PROFILE = """+++
task_type = "error-analysis"

[[roles]]
role = "analyser"
duty = "root-cause-analysis"
min = 1
max = 3
recommended = 2

[[roles]]
role = "critic"
duty = "critic"
min = 0
max = 1
exclude_models_of = ["analyser"]

[[roles]]
role = "fixer"
duty = "fix-cycle"
dynamic = true
+++
# Error analysis
Body.
"""

PROVIDER = """id = "acme"
display_label = "Acme"
cli = "acme"
roles = ["leader", "analyser", "critic"]

[launch]
version = ["{cli}", "--version"]
new = ["{cli}", "--session-id", "{session_id}", "--model", "{model}", "--prompt-file",
       "{prompt_file}", "--", "{kickoff}"]
resume = ["{cli}", "--resume", "{session_id}", "--model", "{model}"]
session_id = "uuid4"

[[models]]
id = "one"
display = "Acme One"
execution = "acme-one"
aliases = ["first"]
default_for = ["analyser"]

[[models]]
id = "two"
display = "Acme Two"
execution = "acme-two"
roles = ["critic"]
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def profile_error(
    tmp_path: Path, text: str | bytes, name: str = "error-analysis.md"
) -> DataFileError:
    path = write(tmp_path, name, text)
    with pytest.raises(DataFileError) as info:
        load_profile(path)
    assert info.value.path == str(path)
    return info.value


def provider_error(tmp_path: Path, text: str | bytes, name: str = "acme.toml") -> DataFileError:
    path = write(tmp_path, name, text)
    with pytest.raises(DataFileError) as info:
        load_provider(path, bundled=False)
    assert info.value.path == str(path)
    return info.value


def test_valid_fixtures_load(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "error-analysis.md", PROFILE))
    assert [r.role for r in profile.roles] == ["analyser", "critic", "fixer"]
    assert profile.body == "# Error analysis\nBody.\n"
    provider = load_provider(write(tmp_path, "acme.toml", PROVIDER), bundled=False)
    assert provider.bundled is False and [m.id for m in provider.models] == ["one", "two"]


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("max = 3", 'max = "3"', "roles[0].max", "expected an integer, got a string ('3')"),
        ("max = 3", "max = true", "roles[0].max", "booleans are not integers"),
        ("min = 0", "min = 1.5", "roles[1].min", "expected an integer"),
        ("max = 3", "max = 3\nrecommended = 4", "roles[0]", None),  # duplicate key: TOML
        ("recommended = 2", "recommended = 5", "roles[0].recommended", "outside [min, max]"),
        ("min = 1\nmax = 3", "min = 3\nmax = 1", "roles[0].min", "greater than max"),
        ('role = "critic"', 'role = "analyser"', "roles[1].role", "duplicate role 'analyser'"),
        ('role = "critic"', 'role = "leader"', "roles[1].role", "leader role is implicit"),
        (
            "recommended = 2",
            'recommended = 2\ndistinct = "team"',
            "roles[0].distinct",
            "expected 'model' or 'provider'",
        ),
        (
            "recommended = 2",
            "recommended = 2\ncolour = 1",
            "roles[0].colour",
            "unknown key 'colour': expected one of role, duty, min, max",
        ),
        (
            'exclude_models_of = ["analyser"]',
            'exclude_models_of = ["planner"]',
            "roles[1].exclude_models_of[0]",
            "unknown role 'planner'",
        ),
        (
            'exclude_models_of = ["analyser"]',
            'exclude_models_of = ["fixer"]',
            "roles[1].exclude_models_of[0]",
            "dynamic role",
        ),
        (
            'exclude_models_of = ["analyser"]',
            'exclude_models_of = "analyser"',
            "roles[1].exclude_models_of",
            "expected an array",
        ),
        ("dynamic = true", 'dynamic = "yes"', "roles[2].dynamic", "expected a boolean"),
        (
            'task_type = "error-analysis"',
            'task_type = "implementation"',
            "task_type",
            "expected 'error-analysis' (the file name)",
        ),
        ('duty = "critic"', 'duty = "Scope Critic"', "roles[1].duty", "expected an id"),
        ('duty = "critic"\n', "", "roles[1].duty", "required field is missing"),
        ("min = 0\nmax = 1", "min = 0\nmax = 0", "roles[1].max", "expected max >= 1"),
        ("min = 0", "min = -1", "roles[1].min", "expected a number >= 0"),
    ],
)
def test_profile_field_errors(
    tmp_path: Path, old: str, new: str, field: str, message: str | None
) -> None:
    assert old in PROFILE
    error = profile_error(tmp_path, PROFILE.replace(old, new, 1))
    if message is None:  # a TOML syntax error: no field, but a line number
        assert "invalid TOML" in error.message and "line 10" in error.message
        return
    assert error.field == field
    assert message in error.message
    assert error.render().startswith(f"{error.path}: {field}: ")


def test_profile_invalid_toml_reports_the_file_line(tmp_path: Path) -> None:
    error = profile_error(tmp_path, PROFILE.replace("min = 1\n", "min = = 1\n", 1))
    # Front matter line 6 is line 7 of the file (after the opening '+++').
    assert "invalid TOML" in error.message and "line 7" in error.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no front matter\n", "missing TOML front matter"),
        ("", "missing TOML front matter"),
        ("+++\ntask_type = 'error-analysis'\nroles = []\n# body\n", "not closed"),
        (b'+++\ntask_type = "error-analysis"\n\xff\xfe\n+++\n', "not valid UTF-8 (line 3"),
        ("+++\nroles = []\n+++\n", "required field is missing"),
        ("+++\ntask_type = 'error-analysis'\nroles = []\nbody = 'x'\n+++\n", "unknown key"),
    ],
)
def test_profile_file_errors(tmp_path: Path, text: str | bytes, message: str) -> None:
    assert message in profile_error(tmp_path, text).message


def test_profile_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="file not found"):
        load_profile(tmp_path / "nope.md")
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(DataFileError, match="directory"):
        load_profile(tmp_path / "dir.md")


def test_profile_edit_is_seen_despite_the_cache(tmp_path: Path) -> None:
    path = write(tmp_path, "error-analysis.md", PROFILE)
    assert load_profile(path).roles[0].max == 3
    path.write_text(PROFILE.replace("max = 3", "max = 2"), encoding="utf-8")
    assert load_profile(path).roles[0].max == 2


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ('id = "acme"', 'id = "other"', "id", "expected 'acme' (the file name)"),
        ('id = "two"', 'id = "one"', "models[1].id", "duplicate model id 'one'"),
        (
            'execution = "acme-two"',
            'execution = "acme-two"\naliases = ["FIRST"]',
            "models[1].aliases[0]",
            "collides",
        ),
        ('aliases = ["first"]', 'aliases = ["Two"]', "models[1].id", "collides"),
        (
            '"--prompt-file"',
            '"--prompt-file={bogus}"',
            "launch.new[5]",
            "unknown placeholder {bogus}",
        ),
        ('"{model}"]', '"{model:>3}"]', "launch.resume[4]", "unknown placeholder"),
        ('"--version"]', '"--version", "{oops"]', "launch.version[2]", "unbalanced braces"),
        (
            'roles = ["critic"]',
            'roles = ["implementer"]',
            "models[1].roles[0]",
            "not one of the provider's roles",
        ),
        (
            'default_for = ["analyser"]',
            'default_for = ["report-writer"]',
            "models[0].default_for[0]",
            "not a role of this model",
        ),
        (
            'execution = "acme-two"',
            'execution = "acme-two"\ndefault_for = ["analyser"]',
            "models[1].default_for[0]",
            "not a role of this model",
        ),
        (
            'session_id = "uuid4"',
            'session_id = "discover"',
            "launch.discover",
            "expected a [launch.discover] table",
        ),
        (
            'session_id = "uuid4"',
            'session_id = "random"',
            "launch.session_id",
            "expected 'uuid4', 'token' or 'discover'",
        ),
        ('"--session-id", "{session_id}", ', "", "launch.new", "expected {session_id}"),
        ('"--prompt-file",\n       "{prompt_file}", ', "", "launch.new", "lead prompt"),
        (
            'version = ["{cli}", "--version"]',
            'version = ["acme", "--version"]',
            "launch.version[0]",
            "{cli}",
        ),
        ('version = ["{cli}", "--version"]', "version = []", "launch.version", "non-empty"),
        ('cli = "acme"', "cli = 7", "cli", "expected a string, got an integer (7)"),
        (
            'execution = "acme-one"',
            'execution = "--yolo"',
            "models[0].execution",
            "expected a model name",
        ),
        (
            'session_id = "uuid4"',
            'session_id = "uuid4"\nenv = { "A B" = "{prompt_file}" }',
            "launch.env.A B",
            "environment variable name",
        ),
        (
            'display = "Acme One"',
            'display = "Acme One"\nversion = "latest"',
            "models[0].version",
            "expected 'pinned' or 'channel'",
        ),
        (
            'display = "Acme One"',
            'display = "Acme One"\ncost = 3',
            "models[0].cost",
            "unknown key 'cost': expected one of id, display, execution",
        ),
        (
            'session_id = "uuid4"',
            'session_id = "uuid4"\nenv = { X = "{prompt_file}/{nope}" }',
            "launch.env.X",
            "unknown placeholder {nope}",
        ),
        (
            'session_id = "uuid4"',
            'session_id = "uuid4"\nrequired_flags = ["model"]',
            "launch.required_flags[0]",
            "expected a flag",
        ),
        (
            'roles = ["leader", "analyser", "critic"]',
            'roles = ["leader", "leader"]',
            "roles[1]",
            "duplicate role",
        ),
        ('roles = ["leader", "analyser", "critic"]\n', "", "roles", "required field is missing"),
    ],
)
def test_provider_field_errors(
    tmp_path: Path, old: str, new: str, field: str, message: str
) -> None:
    assert old in PROVIDER
    error = provider_error(tmp_path, PROVIDER.replace(old, new, 1))
    assert error.field == field, error.render()
    assert message in error.message, error.render()


DISCOVER = """
[launch.discover]
glob = "{env.ACME_HOME}/sessions/**/*.jsonl"
id_pattern = '([0-9a-f-]+)\\.jsonl$'
"""


def discover_provider(**edits: str) -> str:
    text = PROVIDER.replace('session_id = "uuid4"', 'session_id = "discover"' + DISCOVER)
    text = text.replace('"--session-id", "{session_id}", ', "")
    for old, new in edits.items():
        text = text.replace(old, new)
    return text


def test_discover_provider_loads(tmp_path: Path) -> None:
    spec = load_provider(write(tmp_path, "acme.toml", discover_provider()), bundled=True)
    assert spec.launch.discover is not None
    assert spec.launch.discover.glob.startswith("{env.ACME_HOME}")


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("{env.ACME_HOME}", "{project_root}", "launch.discover.glob", "may only use {env.NAME}"),
        ("'([0-9a-f-]+)", "'[0-9a-f-]+", "launch.discover.id_pattern", "capturing"),
        ("'([0-9a-f-]+)", "'([0-9a-f-]+", "launch.discover.id_pattern", "invalid regular"),
        (
            '"--model", "{model}", "--prompt-file"',
            '"--id", "{session_id}", "--prompt-file"',
            "launch.new",
            "the CLI mints the id",
        ),
    ],
)
def test_discover_errors(tmp_path: Path, old: str, new: str, field: str, message: str) -> None:
    error = provider_error(tmp_path, discover_provider(**{old: new}))
    assert error.field == field, error.render()
    assert message in error.message


def test_discover_table_refused_without_discover(tmp_path: Path) -> None:
    text = PROVIDER.replace('session_id = "uuid4"', 'session_id = "uuid4"' + DISCOVER)
    error = provider_error(tmp_path, text)
    assert error.field == "launch.discover" and "only used when" in error.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'id = "acme"\n\x80\x81', "not valid UTF-8 (line 2"),
        ('id = "acme"\n[launch\n', "invalid TOML"),
        ('id = "acme"\nid = "acme"\n', "invalid TOML"),
        ("", "required field is missing"),
    ],
)
def test_provider_file_errors(tmp_path: Path, text: str | bytes, message: str) -> None:
    assert message in provider_error(tmp_path, text).message


def test_invalid_toml_names_its_line(tmp_path: Path) -> None:
    error = provider_error(tmp_path, PROVIDER.replace('cli = "acme"', "cli = acme"))
    assert "line 3" in error.message


def test_one_error_mentions_the_others(tmp_path: Path) -> None:
    text = PROVIDER.replace('cli = "acme"', "cli = 1").replace(
        'display = "Acme Two"', "display = 2"
    )
    error = provider_error(tmp_path, text)
    assert error.field == "cli" and "also wrong: models[1].display" in error.message


HOST = """id = "box"
display_label = "Box"
native_provider = "claude"
entry_modes = ["spawn-process", "current-session"]
native_sessions = true
detect_env = ["IN_BOX"]
"""


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ('id = "box"', 'id = "crate"', "id", "the file name"),
        ('"current-session"]', '"elsewhere"]', "entry_modes[1]", "expected 'spawn-process'"),
        ("native_sessions = true", "native_sessions = 1", "native_sessions", "expected a boolean"),
        ('native_provider = "claude"\n', "", "entry_modes", "needs a native_provider"),
        ('"spawn-process", "current-session"', "", "entry_modes", "at least one"),
        ('detect_env = ["IN_BOX"]', 'detect_env = "IN_BOX"', "detect_env", "expected an array"),
    ],
)
def test_host_errors(tmp_path: Path, old: str, new: str, field: str, message: str) -> None:
    assert load_host(write(tmp_path, "box.toml", HOST)).native_provider == "claude"
    path = write(tmp_path, "box.toml", HOST.replace(old, new, 1))
    with pytest.raises(DataFileError) as info:
        load_host(path)
    assert info.value.field == field, info.value.render()
    assert message in info.value.message


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        (b"{", None, "invalid JSON at line 1"),
        (b"\xff{}", None, "not valid UTF-8"),
        (b"[]", None, "expected a JSON object, got an array"),
        (b'{"colour": "red"}', "colour", "unknown key 'colour': expected one of modelDefaults"),
        (b'{"modelDefaults": []}', "modelDefaults", "expected an object"),
        (b'{"modelDefaults": {"analyser": []}}', "modelDefaults.analyser", "non-empty array"),
        (
            b'{"modelDefaults": {"analyser": "claude/opus-4.6"}}',
            "modelDefaults.analyser",
            "non-empty array",
        ),
        (
            b'{"modelDefaults": {"analyser": ["opus"]}}',
            "modelDefaults.analyser[0]",
            "expected a model ref 'provider/model', got a string ('opus')",
        ),
        (b'{"modelDefaults": {"analyser": [true]}}', "modelDefaults.analyser[0]", "a boolean"),
        (b'{"disabledProviders": "kimi"}', "disabledProviders", "expected an array"),
        (b'{"disabledProviders": [1]}', "disabledProviders[0]", "expected a provider id"),
        (b'{"language": 3}', "language", "expected a non-empty string or null"),
        (b'{"theme": false}', "theme", "a boolean (false)"),
    ],
)
def test_global_config_errors(
    tmp_path: Path, content: bytes, field: str | None, message: str
) -> None:
    path = write(tmp_path, "config.json", content)
    with pytest.raises(DataFileError) as info:
        load_global_config(path)
    assert info.value.path == str(path)
    assert info.value.field == field
    assert message in info.value.message


def test_global_config_values(tmp_path: Path) -> None:
    assert load_global_config(tmp_path / "absent.json").model_defaults.by_role == {}
    path = write(
        tmp_path,
        "config.json",
        b'{"modelDefaults": {"analyser": ["codex/gpt-5.6", "claude/opus"]},'
        b' "disabledProviders": ["kimi"], "language": "ko", "theme": null}',
    )
    config = load_global_config(path)
    assert config.model_defaults.by_role == {"analyser": ("codex/gpt-5.6", "claude/opus")}
    assert config.model_defaults.source == str(path)
    assert config.disabled_providers == ("kimi",)
    assert (config.language, config.theme) == ("ko", None)


def test_project_config(tmp_path: Path) -> None:
    empty = load_project_config(tmp_path)
    assert empty.project_id is None and empty.raw == {} and empty.model_defaults.by_role == {}
    (tmp_path / ".okstra").mkdir()
    path = tmp_path / ".okstra" / "project.json"
    path.write_bytes(
        b'{"projectId": "p-1", "modelDefaults": {"critic": ["grok/grok-4"]}, "tasks": [1]}'
    )
    config = load_project_config(tmp_path)
    assert config.project_id == "p-1"
    assert config.model_defaults.by_role == {"critic": ("grok/grok-4",)}
    assert config.raw["tasks"] == [1]  # unknown keys are kept for the upsert
    path.write_bytes(b'{"projectId": 5}')
    with pytest.raises(DataFileError) as info:
        load_project_config(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "projectId")
    path.write_bytes(b'{"modelDefaults": {"critic": [""]}}')
    with pytest.raises(DataFileError, match=r"modelDefaults\.critic\[0\]"):
        load_project_config(tmp_path)
