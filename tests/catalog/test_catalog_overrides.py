"""Workspace overrides, user providers, global config and host detection."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from okstra_core.catalog import BUNDLED_PROVIDER_ORDER, detect_host, load_catalog
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.paths import bundled_prompts_root

BUNDLED = bundled_prompts_root()


def user_provider(provider_id: str, model: str = "m1", *, leader: bool = False) -> str:
    roles = '["leader", "analyser"]' if leader else '["analyser"]'
    return f"""id = "{provider_id}"
display_label = "{provider_id.title()}"
cli = "{provider_id}-cli"
roles = {roles}

[launch]
version = ["{{cli}}", "--version"]
new = ["{{cli}}", "--id", "{{session_id}}", "-m", "{{model}}", "--", "{{prompt}}"]
resume = ["{{cli}}", "--id", "{{session_id}}"]
session_id = "token"

[[models]]
id = "{model}"
display = "{model.upper()}"
execution = "{model}-exec"
default_for = ["analyser"]
"""


@pytest.fixture
def home(okstra_home: Path) -> Path:
    return okstra_home


def env_for(home: Path, workspace: Path | None = None, **extra: str) -> Environment:
    env = {"OKSTRA_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    if workspace is not None:
        env["OKSTRA_WORKSPACE"] = str(workspace)
    env.update(extra)
    return Environment(env=env)


def test_user_providers_follow_bundled_sorted_and_replace_in_place(home: Path) -> None:
    providers = home / "config" / "providers"
    providers.mkdir(parents=True)
    (providers / "zeta.toml").write_text(user_provider("zeta"), encoding="utf-8")
    (providers / "alpha.toml").write_text(user_provider("alpha"), encoding="utf-8")
    (providers / "codex.toml").write_text(user_provider("codex", "mine"), encoding="utf-8")
    (providers / "notes.txt").write_text("ignored", encoding="utf-8")
    catalog = load_catalog(env_for(home))
    ids = [p.id for p in catalog.providers]
    # The demo provider stays last, after every other provider.
    assert ids == [*BUNDLED_PROVIDER_ORDER[:-1], "alpha", "zeta", "demo"]
    codex = catalog.provider("codex")
    assert [m.id for m in codex.models] == ["mine"] and codex.bundled is False
    assert catalog.provider("alpha").bundled is False
    assert catalog.provider("claude").bundled is True


def test_malformed_user_provider_names_the_file(home: Path) -> None:
    providers = home / "config" / "providers"
    providers.mkdir(parents=True)
    bad = providers / "acme.toml"
    bad.write_text(user_provider("acme").replace('cli = "acme-cli"', "cli = true"), "utf-8")
    with pytest.raises(DataFileError) as info:
        load_catalog(env_for(home))
    assert (info.value.path, info.value.field) == (str(bad), "cli")


def test_workspace_file_overrides_and_the_rest_falls_back(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "profiles").mkdir(parents=True)
    text = (BUNDLED / "profiles" / "implementation.md").read_text(encoding="utf-8")
    custom = text.replace("# Implementation\n", "# Implementation, our way\n", 1)
    (workspace / "profiles" / "implementation.md").write_text(custom, encoding="utf-8")
    # A task type of the team's own needs no Python change.
    extra = text.replace('task_type = "implementation"', 'task_type = "spike"', 1)
    # Without an `order` it is listed after the bundled ones.
    extra = extra.replace("order = 40\n", "", 1)
    (workspace / "profiles" / "spike.md").write_text(extra, encoding="utf-8")
    (workspace / "providers").mkdir()
    (workspace / "providers" / "acme.toml").write_text(user_provider("acme"), "utf-8")
    catalog = load_catalog(env_for(home, workspace))
    assert catalog.profile("implementation").body.startswith("# Implementation, our way")
    assert catalog.profile("implementation").source == str(
        workspace / "profiles" / "implementation.md"
    )
    assert catalog.profile("error-analysis").source == str(BUNDLED / "profiles/error-analysis.md")
    assert list(catalog.profiles)[-1] == "spike"
    # Workspace providers are shipped data: after the bundled order, before user ones.
    assert [p.id for p in catalog.providers][-2:] == ["acme", "demo"]
    assert catalog.provider("acme").bundled is True
    assert list(catalog.hosts) == ["claude-code", "codex", "terminal"]  # no hosts/ dir


def test_workspace_provider_replaces_bundled_in_order(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "providers").mkdir(parents=True)
    shutil.copy(BUNDLED / "providers" / "codex.toml", workspace / "providers" / "codex.toml")
    path = workspace / "providers" / "codex.toml"
    path.write_text(
        path.read_text("utf-8").replace('display_label = "Codex"', 'display_label = "Ours"'),
        "utf-8",
    )
    catalog = load_catalog(env_for(home, workspace))
    assert [p.id for p in catalog.providers] == list(BUNDLED_PROVIDER_ORDER)
    assert catalog.provider("codex").display_label == "Ours"


def test_malformed_workspace_profile_names_the_file(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "profiles").mkdir(parents=True)
    bad = workspace / "profiles" / "release-handoff.md"
    bad.write_bytes(b'+++\ntask_type = "release-handoff"\n\xc3\x28\n+++\n')
    with pytest.raises(DataFileError) as info:
        load_catalog(env_for(home, workspace))
    assert info.value.path == str(bad) and "UTF-8" in info.value.message


def test_global_config_is_loaded_and_checked(home: Path) -> None:
    (home / "config").mkdir(parents=True)
    config_file = home / "config" / "config.json"
    config_file.write_text('{"disabledProviders": ["grok"], "language": "ko"}', "utf-8")
    catalog = load_catalog(env_for(home))
    assert catalog.config.disabled_providers == ("grok",)
    assert catalog.config.language == "ko"
    config_file.write_text('{"disabledProviders": ["grok", "gork"]}', "utf-8")
    with pytest.raises(DataFileError) as info:
        load_catalog(env_for(home))
    assert info.value.field == "disabledProviders[1]" and "unknown provider 'gork'" in str(
        info.value
    )


def test_host_with_unknown_native_provider(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "hosts").mkdir(parents=True)
    host = workspace / "hosts" / "box.toml"
    host.write_text('id = "box"\ndisplay_label = "Box"\nnative_provider = "nobody"\n', "utf-8")
    with pytest.raises(DataFileError) as info:
        load_catalog(env_for(home, workspace))
    assert (info.value.path, info.value.field) == (str(host), "native_provider")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "terminal"),
        ({"CLAUDECODE": "1"}, "claude-code"),
        ({"CODEX_THREAD_ID": "0199a213"}, "codex"),
        ({"CODEX_SANDBOX": "seatbelt"}, "codex"),
        ({"CLAUDECODE": ""}, "terminal"),  # set but empty is not set
    ],
)
def test_detect_host(home: Path, env: dict[str, str], expected: str) -> None:
    environment = env_for(home, **env)
    assert detect_host(environment, load_catalog(environment)).id == expected


def test_unchanged_files_are_not_parsed_again(home: Path) -> None:
    environment = env_for(home)
    first, second = load_catalog(environment), load_catalog(environment)
    # Same validated objects: loading runs on every wizard step.
    assert first.profile("implementation") is second.profile("implementation")
    assert first.providers[0] is second.providers[0]
