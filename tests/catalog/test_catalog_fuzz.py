"""Property tests: any bytes, any mutated value → a loaded file or one DataFileError."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.catalog import load_global_config, load_host, load_profile, load_provider
from okstra_core.errors import DataFileError
from okstra_core.paths import bundled_prompts_root

BUNDLED = bundled_prompts_root()
SOURCES = {
    "profile": BUNDLED / "profiles" / "implementation.md",
    "provider": BUNDLED / "providers" / "codex.toml",
    "host": BUNDLED / "hosts" / "claude-code.toml",
}
VALUES = st.sampled_from(
    [
        "true", "false", "0", "-1", "1", "3", "1.5", "nan", "inf", '""', '"x"', '"{bogus}"',
        '"{cli}"', '"leader"', '"analyser"', "[]", '["x", 1]', '["analyser", "analyser"]',
        "{}", '{ a = 1 }', "1979-05-27", "99999999999999999999", '"a/b"', '"discover"',
        '"provider"', '"current-session"', "[[1]]", '"\\u0000"',
    ]
)  # fmt: skip
ASSIGNMENT = re.compile(r"^(\s*[A-Za-z_]+\s*=\s*)(.+)$", re.MULTILINE)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def load(kind: str, path: Path) -> None:
    if kind == "profile":
        load_profile(path)
    elif kind == "provider":
        load_provider(path, bundled=True)
    elif kind == "host":
        load_host(path)
    else:
        load_global_config(path)


def check(kind: str, name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        before = path.read_bytes()
        try:
            load(kind, path)
        except DataFileError as exc:
            assert exc.path == str(path)
            assert exc.message
        assert path.read_bytes() == before  # loading never writes


@SETTINGS
@given(kind=st.sampled_from([*SOURCES, "config"]), data=st.binary(max_size=400))
def test_random_bytes(kind: str, data: bytes) -> None:
    name = {"config": "config.json"}.get(kind, SOURCES.get(kind, Path("x")).name)
    check(kind, name, data)


@SETTINGS
@given(
    kind=st.sampled_from(list(SOURCES)),
    edits=st.lists(st.tuples(st.integers(min_value=0), VALUES), min_size=1, max_size=3),
)
def test_mutated_values(kind: str, edits: list[tuple[int, str]]) -> None:
    source = SOURCES[kind]
    text = source.read_text(encoding="utf-8")
    for index, value in edits:
        matches = list(ASSIGNMENT.finditer(text))
        match = matches[index % len(matches)]
        text = text[: match.start(2)] + value + text[match.end(2) :]
    check(kind, source.name, text.encode("utf-8"))


@SETTINGS
@given(
    kind=st.sampled_from(list(SOURCES)),
    cut=st.integers(min_value=0, max_value=4000),
    junk=st.text(max_size=20),
)
def test_truncated_and_spliced(kind: str, cut: int, junk: str) -> None:
    data = SOURCES[kind].read_bytes()
    cut %= len(data) + 1
    check(kind, SOURCES[kind].name, data[:cut] + junk.encode("utf-8") + data[cut + len(junk) :])


def test_deeply_nested_toml(tmp_path: Path) -> None:
    path = tmp_path / "acme.toml"
    path.write_text("a = " + "[" * 3000 + "]" * 3000, encoding="utf-8")
    try:
        load_provider(path, bundled=False)
    except DataFileError as exc:
        assert "nested too deeply" in exc.message
    else:
        raise AssertionError("a deeply nested file loaded")
