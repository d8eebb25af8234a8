"""The run request's rules: one set, whether the request is built in Python or read.

A request built in Python (the wizard's outcome, argv) runs its rules in
`__post_init__` without pydantic; a request read from outside (`run-inputs.json`, a
host session context given as JSON) is validated by `records.validate`, which adds the
types. Both must agree: the same values give an equal request or the same first error
(place in camelCase, message).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core.documents.host import older_spellings
from okstra_core.records import RecordError, camel, validate
from okstra_core.request import MAX_ROLE_COUNT, CurrentModel, HostSessionContext, RunRequest

GOOD = {
    "project_root": Path("/srv/project"),
    "task_group": "billing",
    "task_id": "checkout-speed",
    "task_type": "requirements-discovery",
    "brief": "brief.md",
}

# Values a host or a hand-edited file might give: good ones and each kind of bad one.
SEGMENT = st.sampled_from(
    ["billing", "a.b_c-1", "", "Billing", "a b", "..", "a/b", "x" * 200, "x" * 201]
)
TASK_TYPE = st.sampled_from(
    ["requirements-discovery", "final-verification", "Bad", "-x", "a" * 64, "a" * 65]
)
TEXT = st.sampled_from(["", "brief.md", "x" * 4096, "x" * 4097])
RELATED = st.lists(st.sampled_from(["a/b", "a.b/c-d", "a", "a/b/c", "A/b", "/b"]), max_size=3)
ROLE = st.sampled_from(["analyser", "report-writer", "leader", "Analyser", "1x", "r" * 65])
COUNT = st.sampled_from([0, 1, 5, MAX_ROLE_COUNT, MAX_ROLE_COUNT + 1, -1])
REF = st.sampled_from(["claude/opus-4.6", "codex/gpt-5", "opus", "a/b c", "/x", "p/" + "m" * 199])
ROOT = st.sampled_from([Path("/srv/project"), Path("relative/dir")])


@st.composite
def request_values(draw: st.DrawFn) -> dict[str, Any]:
    """A request's values as Python builds them: good ones and each kind of bad one."""
    return {
        "project_root": draw(ROOT),
        "task_group": draw(SEGMENT),
        "task_id": draw(SEGMENT),
        "task_type": draw(TASK_TYPE),
        "brief": draw(TEXT),
        "directive": draw(TEXT),
        "related_tasks": tuple(draw(RELATED)),
        "role_counts": draw(st.dictionaries(ROLE, COUNT, max_size=3)),
        "role_models": draw(st.dictionaries(ROLE, st.lists(REF, max_size=3), max_size=3)),
    }


def _first(exc: RecordError) -> tuple[tuple[Any, ...], str]:
    problem = exc.errors()[0]
    return tuple(problem["loc"]), str(problem["msg"])


@settings(max_examples=300, deadline=None)
@given(values=request_values())
def test_built_and_validated_requests_agree(values: dict[str, Any]) -> None:
    built: RunRequest | RecordError
    try:
        built = RunRequest(**values)
    except RecordError as exc:
        built = exc
    data = {camel(k): (str(v) if isinstance(v, Path) else v) for k, v in values.items()}
    try:
        read: RunRequest | RecordError = validate(RunRequest, data)
    except RecordError as exc:
        read = exc
    if isinstance(built, RecordError) or isinstance(read, RecordError):
        assert isinstance(built, RecordError) and isinstance(read, RecordError), (built, read)
        assert _first(built) == _first(read)
        assert _first(built)[0][0] in data  # the place is the field's name in files
    else:
        assert built == read


@pytest.mark.parametrize(
    ("change", "place", "words"),
    [
        ({"project_root": Path("rel")}, ("projectRoot",), "absolute path"),
        ({"task_group": "Billing Team"}, ("taskGroup",), "try 'billing-team'"),
        ({"task_id": ".."}, ("taskId",), "escape"),
        ({"task_type": "Bad Type"}, ("taskType",), "lower-case slug"),
        ({"brief": ""}, ("brief",), "1 to 4096 characters"),
        ({"related_tasks": ("a/b", "nokey")}, ("relatedTasks",), "'group/id'"),
        ({"role_counts": {"analyser": 65}}, ("roleCounts", "analyser"), "from 0 to 64"),
        ({"role_models": {"analyser": ["opus"]}}, ("roleModels", "analyser"), "provider/model"),
        ({"role_models": {"Bad Role": ["a/b"]}}, ("roleModels", "Bad Role"), "role name"),
    ],
)
def test_each_rule_names_its_field(
    change: dict[str, Any], place: tuple[Any, ...], words: str
) -> None:
    with pytest.raises(RecordError) as caught:
        RunRequest(**{**GOOD, **change})
    loc, message = _first(caught.value)
    assert loc == place and words in message


def test_host_context_rules_and_older_spellings() -> None:
    with pytest.raises(RecordError) as caught:
        HostSessionContext(host_id="")
    assert _first(caught.value)[0] == ("hostId",)
    with pytest.raises(RecordError) as caught:
        validate(HostSessionContext, {"currentModel": {"modelRef": ""}})
    assert _first(caught.value)[0] == ("currentModel", "modelRef")
    older = older_spellings({"currentModelRef": "claude/opus-4.6"})
    assert validate(HostSessionContext, older).current_model == CurrentModel(
        model_ref="claude/opus-4.6"
    )


def test_building_a_request_and_its_views_needs_no_pydantic(tmp_path: Path) -> None:
    code = """
import sys
from pathlib import Path
from okstra_core.request import RunRequest, HostSessionContext, CurrentModel
r = RunRequest(project_root=Path('/srv/p'), task_group='g', task_id='t',
               task_type='requirements-discovery', brief='b.md',
               host=HostSessionContext(host_id='claude-code', entry_mode='current-session',
                                       current_model=CurrentModel(model_ref='claude/opus-4.6')),
               role_counts={'analyser': 2}, role_models={'analyser': ['claude/opus-4.6']})
r.render_argv(); r.dump(); r.host.to_json_text()
try:
    RunRequest(project_root=Path('rel'), task_group='g', task_id='t',
               task_type='requirements-discovery', brief='b.md')
except ValueError:
    pass
print(sorted(m for m in ('pydantic', 'pydantic_core') if m in sys.modules))
"""
    env = {**os.environ, "OKSTRA_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("context", "words"),
    [
        ('{"hostId": ""}', "hostId: expected 1 to 64 characters"),
        ('{"currentModel": 5}', "currentModel: "),
        ('{"currentModel": {"modelRef": ""}}', "currentModel.modelRef: "),
        ('{"entryMode": "sideways"}', "entryMode: "),
    ],
)
def test_a_bad_host_context_names_its_flag_and_the_place_inside(context: str, words: str) -> None:
    from okstra_core.cli.roleargs import host_context
    from okstra_core.environment import Environment
    from okstra_core.errors import UsageError

    with pytest.raises(UsageError) as caught:
        host_context(Environment(env={}), None, context_json=context)
    assert caught.value.field == "--host-session-context-json"
    assert words in caught.value.message


def _schema_refuses(schema: dict[str, Any], value: Any) -> bool:
    """The keywords the request's schema uses, evaluated (a small JSON Schema subset)."""
    import re

    for branch in schema.get("anyOf", ()):
        if not _schema_refuses(branch, value):
            return False
    if "anyOf" in schema:
        return True
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 1e9):
            return True
        # JSON Schema patterns are ECMA-262: `$` is the end of the text, not a final
        # newline's place (Python's `$`), so it is read as `\Z`.
        pattern = re.sub(r"\$$", r"\\Z", schema.get("pattern", ""))
        return "pattern" in schema and re.search(pattern, value) is None
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not schema.get("minimum", -1e9) <= value <= schema.get("maximum", 1e9)
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", 1e9):
            return True
        return any(_schema_refuses(schema.get("items", {}), item) for item in value)
    if isinstance(value, dict):
        names = schema.get("propertyNames", {})
        values = schema.get("additionalProperties", {})
        props = schema.get("properties", {})
        for key, item in value.items():
            if _schema_refuses(names, key):
                return True
            if _schema_refuses(props.get(key, values if isinstance(values, dict) else {}), item):
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(values=request_values())
def test_the_published_schema_never_refuses_a_request_okstra_accepts(
    values: dict[str, Any],
) -> None:
    from okstra_core.records import json_schema

    schema = json_schema(RunRequest, mode="serialization")
    # Vary what the schema publishes; keep the rest good, so that enough are accepted.
    values = {**values, "project_root": GOOD["project_root"], "task_id": GOOD["task_id"]}
    values["directive"] = ""
    try:
        request = RunRequest(**values)
    except RecordError:
        return  # refused by okstra: the schema may or may not say so (it is looser)
    assert not _schema_refuses(schema, request.dump()), request.dump()
    # And the rules are published, not only checked.
    for key in ("taskGroup", "brief", "directive"):
        assert "maxLength" in schema["properties"][key]
    assert schema["properties"]["taskType"]["pattern"]


@pytest.mark.parametrize(
    "change",
    [
        {"task_type": "requirements-discovery\n"},
        {"related_tasks": ("a/b\n",)},
        {"role_counts": {"analyser\n": 1}},
        {"role_models": {"analyser": ["claude/opus-4.6\n"]}},
    ],
)
def test_a_value_ending_in_a_newline_is_refused_as_the_schema_refuses_it(
    change: dict[str, Any],
) -> None:
    from okstra_core.records import json_schema

    with pytest.raises(RecordError):
        RunRequest(**{**GOOD, **change})
    data = {camel(k): (str(v) if isinstance(v, Path) else v) for k, v in {**GOOD, **change}.items()}
    data["relatedTasks"] = list(data.get("relatedTasks", ()))
    assert _schema_refuses(json_schema(RunRequest, mode="serialization"), data)


def test_each_field_rule_is_the_one_the_schema_publishes() -> None:
    """The rules live in the fields' metadata, once: the schema is written from them."""
    import dataclasses

    from okstra_core.records import json_schema
    from okstra_core.request import Rule

    schema = json_schema(RunRequest, mode="serialization")["properties"]
    ruled = {
        camel(f.name): f.metadata["okstra_rule"]
        for f in dataclasses.fields(RunRequest)
        if "okstra_rule" in f.metadata
    }
    assert set(ruled) >= {"taskGroup", "taskType", "brief", "relatedTasks", "roleModels"}
    for key, rule in ruled.items():
        assert isinstance(rule, Rule)
        prop = schema[key]
        if rule.length is not None:
            assert prop["maxLength"] == rule.length[1], key
        if rule.pattern is not None:
            assert prop["pattern"] == rule.pattern.pattern, key
    assert schema["roleCounts"]["additionalProperties"]["maximum"] == MAX_ROLE_COUNT
    assert schema["roleModels"]["propertyNames"]["maxLength"] == 64
