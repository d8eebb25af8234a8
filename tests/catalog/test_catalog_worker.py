"""A provider's one-shot worker launch (`launch.worker`, `[launch.access]`), a role's
`writes`, and the worker argv okstra renders from them."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_catalog_errors import PROFILE, PROVIDER, provider_error, write

from okstra_core.catalog import load_profile, load_provider
from okstra_core.catalog.models import ProviderSpec
from okstra_core.errors import DataFileError
from okstra_core.launch import worker_argv

REPO = Path(__file__).resolve().parents[2]
LEAD = 'session_id = "uuid4"'
WORKER = """session_id = "uuid4"
worker = ["{cli}", "run", "--model", "{model}", "--out", "{result_file}", "{access}", "-"]

[launch.access]
read_only = ["--read-only"]
write = ["--write", "--root={project_root}"]
"""
VALUES = {"session_id": "S", "project_root": "/proj", "result_file": "/run/w/result.md"}


def acme(tmp_path: Path, text: str = WORKER, old: str = LEAD) -> ProviderSpec:
    return load_provider(write(tmp_path, "acme.toml", PROVIDER.replace(old, text, 1)), bundled=True)


def test_worker_loads_and_renders_both_access_modes(tmp_path: Path) -> None:
    spec = acme(tmp_path)
    assert spec.worker_refusal() is None
    assert spec.launch.worker is not None and spec.launch.access.read_only == ("--read-only",)
    read = worker_argv(spec, model="acme-one", writes=False, values=VALUES)
    assert read == (
        "acme", "run", "--model", "acme-one", "--out", "/run/w/result.md", "--read-only", "-"
    )  # fmt: skip
    wrote = worker_argv(spec, model="acme-two", writes=True, values={**VALUES, "cli": "/bin/acme"})
    assert wrote == (
        "/bin/acme", "run", "--model", "acme-two", "--out", "/run/w/result.md",
        "--write", "--root=/proj", "-",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("worker", "expected"),
    [
        # No {access}: before the first `--` …
        ('["{cli}", "--model", "{model}", "--", "go"]', ("acme", "--model", "M", "-r", "--", "go")),
        # … else at the end.
        ('["{cli}", "--model", "{model}"]', ("acme", "--model", "M", "-r")),
        # At the start of the template's arguments.
        ('["{cli}", "{access}", "--model", "{model}"]', ("acme", "-r", "--model", "M")),
    ],
)
def test_where_the_access_arguments_go(
    tmp_path: Path, worker: str, expected: tuple[str, ...]
) -> None:
    text = f'{LEAD}\nworker = {worker}\n\n[launch.access]\nread_only = ["-r"]\n'
    assert worker_argv(acme(tmp_path, text), model="M", writes=False, values={}) == expected


def test_a_provider_without_worker_says_why(tmp_path: Path) -> None:
    spec = load_provider(write(tmp_path, "acme.toml", PROVIDER), bundled=True)
    reason = "provider 'acme' declares no [launch] worker: it cannot run workers"
    assert spec.worker_refusal() == reason
    with pytest.raises(DataFileError) as info:
        worker_argv(spec, model="acme-one", writes=False, values=VALUES)
    assert info.value.field == "launch.worker" and reason in info.value.message


def test_a_missing_value_names_the_element(tmp_path: Path) -> None:
    with pytest.raises(DataFileError) as info:
        worker_argv(acme(tmp_path), model="M", writes=True, values={"result_file": "/r"})
    assert info.value.field == "launch.access.write[1]", info.value.render()
    assert "{project_root} has no value" in info.value.message


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ('"{cli}", "run"', '"acme", "run"', "launch.worker[0]", '"{cli}"'),
        ('worker = ["{cli}"', 'worker = ["{cli}", "{bogus}"', "launch.worker[1]", "{bogus}"),
        ('"--model", "{model}", "--out"', '"--out"', "launch.worker", "expected {model}"),
        ('"{access}", "-"]', '"--a={access}", "-"]', "launch.worker[6]", "element of its own"),
        ('"{access}", "-"]', '"{access}", "{access}"]', "launch.worker", "only once"),
        ('read_only = ["--read-only"]', "read_only = []", "launch.access.read_only", "keep"),
        (
            'read_only = ["--read-only"]',
            'read_only = ["{access}"]',
            "launch.access.read_only[0]",
            "unknown placeholder",
        ),
        (
            'write = ["--write"',
            'write = ["{nope}"',
            "launch.access.write[0]",
            "unknown placeholder {nope}",
        ),
        (
            'read_only = ["--read-only"]',
            'read_only = ["-r"]\nexecute = ["-x"]',
            "launch.access.execute",
            "unknown key",
        ),
        ('"{cli}", "run"', '"{cli}", "run", "--id", "{session_id}"', None, None),
    ],
)
def test_worker_rules(
    tmp_path: Path, old: str, new: str, field: str | None, message: str | None
) -> None:
    assert old in WORKER
    text = WORKER.replace(old, new, 1)
    if field is None:
        assert acme(tmp_path, text).launch.worker is not None  # a minted id may be passed
        return
    error = provider_error(tmp_path, PROVIDER.replace(LEAD, text, 1))
    assert error.field == field, error.render()
    assert message is not None and message in error.message, error.render()


def test_result_file_and_access_only_in_a_worker(tmp_path: Path) -> None:
    text = PROVIDER.replace('"--version"]', '"--version", "{result_file}"]', 1)
    error = provider_error(tmp_path, text)
    assert error.field == "launch.version[2]" and "{result_file}" in error.message
    alone = PROVIDER.replace(LEAD, f'{LEAD}\n\n[launch.access]\nread_only = ["-r"]\n', 1)
    error = provider_error(tmp_path, alone)
    assert error.field == "launch.access" and "only used with launch.worker" in error.message


def test_a_discovering_cli_is_not_given_a_session_id(tmp_path: Path) -> None:
    text = PROVIDER.replace('"--session-id", "{session_id}", ', "").replace(
        LEAD,
        'session_id = "discover"\nworker = ["{cli}", "--model", "{model}", "--id={session_id}"]\n'
        '\n[launch.access]\nread_only = ["-r"]\n'
        '\n[launch.discover]\nglob = "{env.H}/*.jsonl"\nid_pattern = "(x)"\n',
    )
    error = provider_error(tmp_path, text)
    assert error.field == "launch.worker" and "the CLI mints the id" in error.message


def test_bundled_providers_declare_their_workers() -> None:
    def bundled(name: str) -> ProviderSpec:
        return load_provider(REPO / "prompts" / "providers" / f"{name}.toml", bundled=True)

    values = {"session_id": "S", "project_root": "/p", "result_file": "/r", "prompt_file": "/f"}
    claude = bundled("claude")
    assert worker_argv(claude, model="m", writes=False, values=values)[-2:] == (
        "--permission-mode",
        "plan",
    )
    assert worker_argv(claude, model="m", writes=True, values=values)[-4:] == (
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash",
    )
    codex = worker_argv(bundled("codex"), model="m", writes=False, values=values)
    assert codex[1:3] == ("--no-daemon", "exec") and codex[-3:] == ("--sandbox", "read-only", "-")
    assert "--output-last-message" in codex and "/r" in codex
    gemini = worker_argv(bundled("antigravity"), model="m", writes=True, values=values)
    assert gemini[6:8] == ("--approval-mode", "yolo") and "-m" in gemini
    for name in ("grok", "kimi"):
        assert bundled(name).worker_refusal() == (
            f"provider {name!r} declares no [launch] worker: it cannot run workers"
        )


def test_roles_declare_whether_they_write(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "error-analysis.md", PROFILE))
    assert not any(r.writes for r in profile.roles)
    text = PROFILE.replace("dynamic = true", "dynamic = true\nwrites = true")
    fixer = load_profile(write(tmp_path, "error-analysis.md", text)).role("fixer")
    assert fixer is not None and fixer.writes
    bad = PROFILE.replace("dynamic = true", 'dynamic = true\nwrites = "yes"')
    with pytest.raises(DataFileError) as info:
        load_profile(write(tmp_path, "error-analysis.md", bad))
    assert info.value.field == "roles[2].writes", info.value.render()
    writers = {
        (path.stem, r.role)
        for path in sorted((REPO / "prompts" / "profiles").glob("*.md"))
        for r in load_profile(path).roles
        if r.writes
    }
    assert writers == {
        ("implementation", "implementer"),
        ("implementation", "fixer"),
        ("final-verification", "fixer"),
    }


RESUME = 'worker_resume = ["{cli}", "again", "{session_id}", "--model", "{model}", "{access}"]\n'


def test_a_follow_up_template_renders_with_the_session(tmp_path: Path) -> None:
    spec = acme(tmp_path, WORKER.replace("\n[launch.access]", RESUME + "\n[launch.access]", 1))
    argv = worker_argv(spec, model="M", writes=True, values=VALUES, follow_up=True)
    assert argv == ("acme", "again", "S", "--model", "M", "--write", "--root=/proj")
    plain = acme(tmp_path)
    with pytest.raises(DataFileError, match="declares no \\[launch\\] worker_resume"):
        worker_argv(plain, model="M", writes=False, values=VALUES, follow_up=True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('worker_resume = ["{cli}", "again", "--model", "{model}"]\n', "expected {session_id}"),
        ('worker_resume = ["{cli}", "again", "{session_id}"]\n', "expected {model}"),
        ('worker_resume = ["x", "{session_id}", "{model}"]\n', 'first element is "{cli}"'),
        (RESUME + "worker_session_pattern = 'session (\\\\w+) (\\\\w+)'\n", "exactly one group"),
        (RESUME + "worker_session_pattern = 'session ('\n", "not a regex"),
    ],
)
def test_follow_up_rules(tmp_path: Path, line: str, message: str) -> None:
    text = WORKER.replace("\n[launch.access]", line + "\n[launch.access]", 1)
    error = provider_error(tmp_path, PROVIDER.replace(LEAD, text, 1))
    assert error.field is not None and error.field.startswith("launch.worker_"), error.render()
    assert message in error.message, error.render()
