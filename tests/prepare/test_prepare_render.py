"""Templates render from compiled code kept between processes, and stay sandboxed.

The compiled code of a template is derived data under `<cache>/templates/`
(`okstra_core.prepare.template_bounds`, `okstra_core.derived`). These tests render real
template files from a real workspace, look at the entries on disk and plant entries of
their own: an entry okstra did not write (another owner, writable by others, a link, a
broken checksum) is never run; an edited template is compiled again; the sandbox and the
error messages are the same with and without cached code.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import pytest

from okstra_core import derived
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.paths import resource
from okstra_core.prepare import prepare
from okstra_core.prepare import template_bounds as template_env
from okstra_core.prepare.lead_prompt import render_template
from tests.prepare.prepare_support import request_of

TEMPLATE = "lead.md.j2"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "templates").mkdir(parents=True)
    return root


@pytest.fixture
def env(workspace: Path, okstra_home: Path) -> dict[str, str]:
    return {"OKSTRA_WORKSPACE": str(workspace), "OKSTRA_HOME": str(okstra_home)}


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates jinja2 compiled (rather than loaded from the cache)."""
    seen: list[str] = []
    original = template_env.ENVIRONMENT.compile

    def counted(self: Any, source: Any, name: str | None = None, *args: Any, **kw: Any) -> Any:
        seen.append(str(name))
        return original(self, source, name, *args, **kw)

    monkeypatch.setattr(template_env.ENVIRONMENT, "compile", counted)
    return seen


def write_template(workspace: Path, text: str, name: str = TEMPLATE) -> Path:
    path = workspace / "templates" / name
    path.write_text(text, encoding="utf-8")
    return path


def entries(okstra_home: Path) -> list[Path]:
    directory = okstra_home / "cache" / "templates"
    return sorted(directory.iterdir()) if directory.is_dir() else []


CONTEXT = {"run": {"id": "run-7"}, "team": ["a", "b"]}
TEXT = "# {{ run.id }}\n{% for m in team %}\n- {{ m }}\n{% endfor %}\n"
RENDERED = "# run-7\n- a\n- b\n"


def test_a_warm_render_loads_the_code_and_gives_the_same_text(
    workspace: Path, env: dict[str, str], okstra_home: Path, compiles: list[str]
) -> None:
    write_template(workspace, TEXT)
    cold = render_template(TEMPLATE, CONTEXT, env)
    assert cold == RENDERED and compiles == [TEMPLATE]
    (entry,) = entries(okstra_home)
    assert entry.stat().st_mode & 0o777 == 0o600
    assert entry.parent.stat().st_mode & 0o777 == 0o700

    warm = render_template(TEMPLATE, CONTEXT, env)
    assert warm == cold
    assert compiles == [TEMPLATE]  # nothing compiled the second time
    assert entries(okstra_home) == [entry]


def test_the_bundled_templates_give_the_same_prompt_cold_and_warm(
    tmp_path: Path, okstra_home: Path, fake_path: Path, compiles: list[str]
) -> None:
    """The lead prompt and the task index of a prepare, from compiled and cached code."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("# Brief\n", encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k != "OKSTRA_WORKSPACE"}
    ids = iter(range(1, 100))
    environment = Environment(
        env=environ,
        now=lambda: datetime(2026, 1, 15, 9, 30, tzinfo=UTC),
        new_uuid=lambda: uuid.UUID(int=next(ids)),
    )

    def rendered() -> dict[str, bytes]:
        result = prepare(request_of(project), launch="none", dry_run=True, environment=environment)
        names = ("lead-prompt.md", "task-index.md")
        return {f.path.name: f.content for f in result.files if f.path.name in names}

    cold = rendered()
    assert sorted(compiles) == ["lead.md.j2", "task-index.md.j2"]
    assert len(entries(okstra_home)) == 2
    stamps = [p.stat().st_mtime_ns for p in entries(okstra_home)]
    ids = iter(range(1, 100))
    warm = rendered()
    assert len(compiles) == 2  # nothing compiled the second time
    assert warm == cold and len(cold) == 2 and b"requirements-discovery" in cold["lead-prompt.md"]
    assert [p.stat().st_mtime_ns for p in entries(okstra_home)] == stamps  # not rewritten


def test_an_edited_template_renders_its_new_text(
    workspace: Path, env: dict[str, str], okstra_home: Path, compiles: list[str]
) -> None:
    path = write_template(workspace, TEXT)
    assert render_template(TEMPLATE, CONTEXT, env) == RENDERED
    path.write_text("edited {{ run.id }}\n", encoding="utf-8")
    assert render_template(TEMPLATE, CONTEXT, env) == "edited run-7\n"
    assert compiles == [TEMPLATE, TEMPLATE]
    assert len(entries(okstra_home)) == 1  # the entry was replaced
    assert render_template(TEMPLATE, CONTEXT, env) == "edited run-7\n"
    assert len(compiles) == 2


def test_other_options_or_another_jinja2_never_reuse_code(
    workspace: Path,
    env: dict[str, str],
    okstra_home: Path,
    compiles: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_template(workspace, TEXT)
    render_template(TEMPLATE, CONTEXT, env)
    monkeypatch.setattr(template_env, "STAMP", template_env.STAMP + b"\0jinja2 99")
    assert render_template(TEMPLATE, CONTEXT, env) == RENDERED
    assert compiles == [TEMPLATE, TEMPLATE]
    assert len(entries(okstra_home)) == 2


def _planted(env: dict[str, str], source: str, code_source: str) -> bytes:
    """An entry payload jinja2 accepts for `source`, holding the code of `code_source`."""
    environment = template_env.ENVIRONMENT(**template_env.OPTIONS)
    cache = template_env.CodeCache(Path("unused"))
    path = resource(f"templates/{TEMPLATE}", env)
    bucket = jinja2.bccache.Bucket(
        environment,
        cache.get_cache_key(TEMPLATE, str(path)),
        cache.get_source_checksum(source),
    )
    bucket.code = environment.compile(code_source, TEMPLATE, str(path))
    return bucket.bytecode_to_string()


def _make_foreign(entry: Path, how: str, payload: bytes) -> None:
    if how == "writable by others":
        entry.chmod(0o622)
    elif how == "another owner":
        os.chown(entry, 4242, 4242)
    elif how == "a link":
        target = entry.with_name("elsewhere")
        entry.rename(target)
        entry.symlink_to(target)
    elif how == "a broken checksum":
        entry.write_bytes(entry.read_bytes().replace(b"PWNED", b"OWNED"))
        entry.chmod(0o600)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how", ["writable by others", "another owner", "a link", "a broken checksum"]
)
def test_an_entry_okstra_would_not_write_is_never_run(
    workspace: Path, env: dict[str, str], okstra_home: Path, compiles: list[str], how: str
) -> None:
    if how == "another owner" and os.getuid() != 0:
        pytest.skip("changing a file's owner needs root")
    write_template(workspace, TEXT)
    render_template(TEMPLATE, CONTEXT, env)
    (entry,) = entries(okstra_home)
    payload = _planted(env, TEXT, "PWNED {{ run.id }}\n")
    # Control: a trusted entry holding that code is run (so the refusals below are real).
    derived.keep(okstra_home / "cache", template_env.TEMPLATES, entry.stem, payload)
    assert render_template(TEMPLATE, CONTEXT, env) == "PWNED run-7\n"

    _make_foreign(entry, how, payload)
    compiles.clear()
    assert render_template(TEMPLATE, CONTEXT, env) == RENDERED
    assert compiles == [TEMPLATE]


def test_without_a_writable_cache_templates_still_render(
    workspace: Path, env: dict[str, str], okstra_home: Path, compiles: list[str]
) -> None:
    write_template(workspace, TEXT)
    okstra_home.mkdir(parents=True, exist_ok=True)
    (okstra_home / "cache").write_text("not a directory\n", encoding="utf-8")
    assert render_template(TEMPLATE, CONTEXT, env) == RENDERED
    assert render_template(TEMPLATE, CONTEXT, env) == RENDERED
    assert compiles == [TEMPLATE, TEMPLATE]
    assert (okstra_home / "cache").read_text(encoding="utf-8") == "not a directory\n"


@pytest.mark.parametrize(
    "payload",
    [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}",
        "{{ run.__class__ }}",
    ],
)
def test_the_sandbox_refuses_cold_and_warm(
    workspace: Path,
    env: dict[str, str],
    okstra_home: Path,
    compiles: list[str],
    payload: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_template(workspace, "# {{ run.id }}\n" + payload + "\n")
    messages = []
    for _ in range(2):
        with pytest.raises(DataFileError) as caught:
            render_template(TEMPLATE, CONTEXT, env)
        assert caught.value.path == str(path)
        messages.append(caught.value.render())
    assert compiles == [TEMPLATE]  # the second refusal ran the cached code
    assert len(entries(okstra_home)) == 1
    assert messages[0] == messages[1]
    assert "sandbox" in messages[0] or "undefined" in messages[0], messages[0]
    assert TEMPLATE in messages[0]
    assert not list(tmp_path.rglob("PWNED*"))


def test_errors_name_the_template_cold_and_warm(
    workspace: Path, env: dict[str, str], okstra_home: Path
) -> None:
    path = write_template(workspace, "line one\n{% for x in %}\n")
    for _ in range(2):
        with pytest.raises(DataFileError) as caught:
            render_template(TEMPLATE, CONTEXT, env)
        assert caught.value.path == str(path) and caught.value.field == "line 2"
        assert "template syntax error" in caught.value.render()
    assert entries(okstra_home) == []  # nothing compiled, nothing kept

    write_template(workspace, "{{ missing.value }}\n")
    for _ in range(2):
        with pytest.raises(DataFileError) as caught:
            render_template(TEMPLATE, CONTEXT, env)
        assert caught.value.path == str(path)
        assert "undefined value" in caught.value.render() and "missing" in caught.value.render()
    assert len(entries(okstra_home)) == 1
