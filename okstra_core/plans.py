"""Approved plans and briefs: validation that needs no catalog (prepare and the wizard).

The plan's forms are in docs/decisions.md; all malformed stages are reported at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from .catalog.frontmatter import parse_front_matter
from .errors import DataFileError, OkstraError, PrepareError
from .records import dataclass
from .store import decode_utf8, read_bytes, read_json
from .tasks import resolve_inside

REQUIREMENTS = ("db", "io", "http", "external")
TESTS_FORM = (
    "Conformance tests: stage-<N> — <task_root>/qa/scripts/stage-<N>.<ext> "
    "(requires=[db|io|http|external,...])"
)
EXEMPTION_FORM = "Conformance exemption: <reason>"

_STAGE_HEADING = re.compile(r"^(#{1,6})\s+stage\s+(\d+)\b", re.IGNORECASE)
_ANY_HEADING = re.compile(r"^(#{1,6})\s")
_DECLARATION = re.compile(r"^conformance\s+(tests?|exemptions?)\b", re.IGNORECASE)
# The form's separator is an em dash; an en dash, `--` or `-` is read the same.
_SEPARATOR = r"(?:—|–|--|-)"
_TESTS = re.compile(
    r"^Conformance tests:\s*stage-(?P<n>\d+)\s+" + _SEPARATOR + r"\s+(?P<path>\S+)"
    r"\s+\(requires=\[(?P<req>[^\]]*)\]\)$"
)
_DECLARED_STAGE = re.compile(r"^Conformance tests:\s*stage-(?P<n>\d+)\b")
_EXEMPTION = re.compile(r"^Conformance exemption:\s*(?P<reason>\S.*)$")


@dataclass(frozen=True)
class StageConformance:
    """One stage's well-formed conformance declaration."""

    stage: int
    kind: Literal["tests", "exemption"]
    script: str | None
    requires: tuple[str, ...]
    reason: str | None


@dataclass(frozen=True)
class ApprovedPlan:
    """An approved plan that passed every check."""

    path: Path
    front_matter: dict[str, Any]
    stages: tuple[StageConformance, ...]
    sha256: str
    data_json: Path | None
    undeclared: tuple[int, ...] = ()


def check_brief(project_root: Path, brief: str) -> Path:
    """The brief's absolute path: a file inside the project (`PrepareError` otherwise)."""
    path = resolve_inside(
        project_root, brief, what="the brief", field="--brief", error=PrepareError
    )
    if not path.exists():
        raise PrepareError(f"brief file not found: {path}", field="--brief")
    if not path.is_file():
        raise PrepareError(f"the brief must be a file, got a directory: {path}", field="--brief")
    return path


def _clean(line: str) -> str:
    """Strip list markers, quote markers, bold and code fences around a line."""
    s = line.strip()
    while s[:2] in ("- ", "* ", "+ ", "> "):
        s = s[2:].lstrip()
    for mark in ("**", "`"):
        if len(s) > 2 * len(mark) and s.startswith(mark) and s.endswith(mark):
            s = s[len(mark) : -len(mark)].strip()
    return s


def task_root_forms(project_root: Path, task_root: Path) -> tuple[str, ...]:
    """The spellings of `<task_root>` a declaration may use."""
    forms = ["<task_root>", str(task_root)]
    if task_root.is_relative_to(project_root):
        forms.append(task_root.relative_to(project_root).as_posix())
    return tuple(forms)


def check_declaration(
    stage: int, line: str, roots: Sequence[str]
) -> tuple[StageConformance | None, str | None]:
    """Check one declaration line of stage `stage`: (declaration, None) or (None, problem)."""
    s = _clean(line)
    m = _EXEMPTION.match(s)
    if m:
        return StageConformance(stage, "exemption", None, (), m.group("reason").strip()), None
    m = _TESTS.match(s)
    if not m:
        return None, f"not in the expected form: {s!r}"
    if int(m.group("n")) != stage:
        return None, f"declares stage-{m.group('n')} inside stage {stage}: {s!r}"
    script = m.group("path")
    pattern = re.compile(
        "^(?:"
        + "|".join(re.escape(r) for r in roots)
        + rf")/qa/scripts/stage-{stage}\.[A-Za-z0-9]+$"
    )
    if not pattern.match(script):
        return None, (
            f"script path {script!r} is not <task_root>/qa/scripts/stage-{stage}.<ext> "
            f"(task root: {roots[-1]})"
        )
    reqs = tuple(r.strip() for r in m.group("req").split(",") if r.strip())
    unknown = [r for r in reqs if r not in REQUIREMENTS]
    if unknown:
        return None, (
            f"unknown requirement(s) {', '.join(unknown)}: expected any of {'|'.join(REQUIREMENTS)}"
        )
    if len(set(reqs)) != len(reqs):
        return None, f"duplicate requirement in requires=[{m.group('req')}]"
    return StageConformance(stage, "tests", script, reqs, None), None


def split_stages(body: str) -> list[tuple[int, list[str]]]:
    """The `Stage <N>` sections of a plan body, each with its lines, in file order."""
    stages: list[tuple[int, list[str]]] = []
    level = 0
    current: list[str] | None = None
    in_fence = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _ANY_HEADING.match(line)
        if heading:
            stage = _STAGE_HEADING.match(line)
            if stage:
                level = len(stage.group(1))
                current = []
                stages.append((int(stage.group(2)), current))
                continue
            if current is not None and len(heading.group(1)) <= level:
                current = None
        if current is not None:
            current.append(line)
    return stages


def check_stage_declarations(
    sections: Sequence[tuple[int, Sequence[str]]],
    roots: Sequence[str],
    undeclared: list[int] | None = None,
) -> tuple[list[StageConformance], list[tuple[int, str]]]:
    """Check every stage: (good declarations, [(stage, problem), …]); see `undeclared`."""
    good: list[StageConformance] = []
    bad: list[tuple[int, str]] = []
    seen: set[int] = set()
    for number, lines in sections:
        if number in seen:
            bad.append((number, f"stage {number} appears more than once"))
            continue
        seen.add(number)
        declarations = [ln for ln in lines if _DECLARATION.match(_clean(ln))]
        if not declarations:
            if undeclared is not None:
                undeclared.append(number)
            continue
        if len(declarations) > 1:
            bad.append(
                (number, f"{len(declarations)} conformance declarations (expected exactly one)")
            )
            continue
        decl, problem = check_declaration(number, declarations[0], roots)
        if decl is None:
            bad.append((number, problem or "malformed"))
        else:
            good.append(decl)
    return good, bad


def _malformed_error(
    path: Path, bad: Sequence[tuple[str, str]], roots: Sequence[str], field: str | None = None
) -> PrepareError:
    names = ", ".join(label for label, _ in bad)
    what = "approved plan data.json" if field is not None else "approved plan"
    lines = [f"{what} has malformed conformance declarations ({names}):"]
    lines += [f"  {label}: {problem}" for label, problem in bad]
    lines += [
        "a stage that declares its conformance needs exactly one line of the form",
        f"  {TESTS_FORM}",
        "or",
        f"  {EXEMPTION_FORM}",
        f"(<task_root> may be written as `<task_root>` or {roots[-1]!r};"
        " the dash after stage-<N> may also be `–`, `--` or `-`)",
    ]
    return PrepareError("\n".join(lines), path=path, field=field)


def _read_approved(plan: str, project_root: Path) -> tuple[Path, bytes, dict[str, Any], str]:
    """Read an approved plan: (path, bytes, front matter, body); refused unless approved."""
    if not plan:
        raise PrepareError("this task type needs an approved plan", field="--approved-plan")
    path = resolve_inside(
        project_root, plan, what="the approved plan", field="--approved-plan", error=PrepareError
    )
    if not path.is_file():
        raise PrepareError(f"approved plan not found: {path}", field="--approved-plan")
    try:
        data = read_bytes(path, what="approved plan")
        text = decode_utf8(data, path)
    except OkstraError as exc:
        raise PrepareError(exc.message, path=path) from None
    front, body = parse_front_matter(text, path)
    if front.get("approved") is not True:
        got = front.get("approved")
        # Said as the front matter spells it (`false`, `"yes"`), not as Python does.
        shown = "missing" if "approved" not in front else json.dumps(got, default=str)
        raise PrepareError(
            f"the plan is not approved: front matter `approved` is {shown}, expected true",
            path=path,
            field="approved",
        )
    _check_approval_gate(path, body)
    return path, data, front, body


# The approval gate: the plan's "Clarification Items" table (docs/compatibility.md).
_CLARIFICATION_HEADING = re.compile(
    r"^#{1,6}\s*(?:§?\s*\d+[.)]?\s*)?clarification\s+items?\b", re.IGNORECASE
)
# Rows still open: not resolved yet (an answer still has to be accepted).
_OPEN_STATUSES = frozenset({"open", "answered"})


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _clarification_rows(body: str) -> list[dict[str, str]]:
    """The rows (lower-cased column -> cell) of the first `Clarification Items` table."""
    lines = body.splitlines()
    start = next((i for i, ln in enumerate(lines) if _CLARIFICATION_HEADING.match(ln)), None)
    if start is None:
        return []
    table: list[str] = []
    for line in lines[start + 1 :]:
        if _ANY_HEADING.match(line):
            break
        if line.lstrip().startswith("|"):
            table.append(line)
        elif table:
            break
    if len(table) < 2:
        return []
    header = [c.lower() for c in _cells(table[0])]
    rows = [_cells(line) for line in table[1:]]
    if rows and all(re.fullmatch(r":?-{3,}:?", c) for c in rows[0] if c):
        rows = rows[1:]  # the separator row
    return [dict(zip(header, row, strict=False)) for row in rows]


def _check_approval_gate(path: Path, body: str) -> None:
    """Refuse a plan whose clarification table has an open row blocking approval."""
    for number, row in enumerate(_clarification_rows(body), start=1):
        blocks = {b.strip().lower() for b in row.get("blocks", "").split(",")}
        status = row.get("status", "").strip().lower()
        if "approval" in blocks and status in _OPEN_STATUSES:
            name = row.get("id") or f"row {number}"
            raise PrepareError(
                f"the plan is not approved yet: clarification item {name} "
                f"(row {number} of Clarification Items) blocks approval and is {status}: "
                "resolve it (Status `resolved`) before the plan is used",
                path=path,
                field=f"Clarification Items[{number}]",
            )


def check_plan_approval(plan: str, *, project_root: Path) -> Path:
    """The approval part of `check_approved_plan`: the plan's resolved path."""
    path, _data, _front, _body = _read_approved(plan, project_root)
    data_json = _sibling_data_json(path, project_root)
    if data_json is not None:
        _data_json_object(data_json)
    return path


def _sibling_data_json(plan: Path, project_root: Path) -> Path | None:
    """The plan's `data.json`, if any; refused, like the plan, outside the project."""
    sibling = plan.with_name("data.json")
    if not sibling.is_file():
        return None
    return resolve_inside(
        project_root,
        sibling,
        what="the approved plan's data.json",
        field="--approved-plan",
        error=PrepareError,
    )


def plan_stage_numbers(plan: str, *, project_root: Path) -> tuple[int, ...]:
    """The `Stage <N>` numbers of an approved plan, each once, in plan order."""
    _path, _data, _front, body = _read_approved(plan, project_root)
    return tuple(dict.fromkeys(number for number, _lines in split_stages(body)))


def _data_json_object(path: Path) -> dict[str, Any]:
    """data.json as an object whose `approved` key, when present, is true."""
    data = read_json(path, what="plan data.json")
    if not isinstance(data, dict):
        raise DataFileError("expected a JSON object", path=path)
    if "approved" in data and data["approved"] is not True:
        raise PrepareError(
            f"data.json disagrees with the plan: `approved` is {data['approved']!r}, "
            "expected true (the plan's front matter says approved: true)",
            path=path,
            field="approved",
        )
    return data


def check_approved_plan(plan: str, *, project_root: Path, task_root: Path) -> ApprovedPlan:
    """Validate an approved plan and its sibling `data.json` (`PrepareError`, `DataFileError`)."""
    path, data, front, body = _read_approved(plan, project_root)
    roots = task_root_forms(project_root, task_root)
    sections = split_stages(body)
    if not sections:
        raise PrepareError(
            "the approved plan declares no stages: expected `## Stage <N>: <title>` headings",
            path=path,
        )
    undeclared: list[int] = []
    good, bad = check_stage_declarations(sections, roots, undeclared)
    problems = [(f"stage {n}", p) for n, p in bad]
    data_json = _sibling_data_json(path, project_root)
    data_problems: list[tuple[str, str]] = []
    if data_json is not None:
        data_problems = _check_data_json(data_json, [n for n, _ in sections], roots)
    if problems:
        raise _malformed_error(path, problems + data_problems, roots)
    if data_problems:
        # Only data.json is malformed: name that file, and the first bad field.
        raise _malformed_error(data_json or path, data_problems, roots, data_problems[0][0])
    return ApprovedPlan(
        path=path,
        front_matter=front,
        stages=tuple(good),
        sha256=hashlib.sha256(data).hexdigest(),
        data_json=data_json,
        undeclared=tuple(undeclared),
    )


def _check_data_json(
    path: Path, stage_numbers: Sequence[int], roots: Sequence[str]
) -> list[tuple[str, str]]:
    """Agreement of `data.json` with the plan; conformance problems returned."""
    data = _data_json_object(path)
    stages = data.get("stages")
    if stages is None:
        return _check_top_level_tests(path, data, stage_numbers, roots)
    if not isinstance(stages, list) or not all(
        isinstance(s, dict) and type(s.get("stage")) is int for s in stages
    ):
        raise DataFileError(
            'expected a list of objects like {"stage": 1, "conformance": "…"}',
            path=path,
            field="stages",
        )
    numbers = [s["stage"] for s in stages]
    if sorted(numbers) != sorted(stage_numbers):
        raise PrepareError(
            f"data.json disagrees with the plan: stages {sorted(numbers)} vs the plan's "
            f"{sorted(stage_numbers)}",
            path=path,
            field="stages",
        )
    problems: list[tuple[str, str]] = []
    for index, entry in enumerate(stages):
        for key in ("conformance", "conformanceTests"):
            declaration = entry.get(key)
            if declaration is None:
                continue
            where = f"stages[{index}].{key}"
            if not isinstance(declaration, str):
                problems.append((where, f"expected a declaration string, got {_kind(declaration)}"))
                continue
            _, problem = check_declaration(entry["stage"], declaration, roots)
            if problem:
                problems.append((where, f"stage {entry['stage']}: {problem}"))
    return problems + _check_top_level_tests(path, data, stage_numbers, roots)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_top_level_tests(
    path: Path, data: dict[str, Any], stage_numbers: Sequence[int], roots: Sequence[str]
) -> list[tuple[str, str]]:
    """The top-level `conformanceTests` array: objects `{stage, declaration}` or strings."""
    tests = data.get("conformanceTests")
    if tests is None:
        return []
    if not isinstance(tests, list):
        raise DataFileError(
            'expected an array of {"stage": N, "declaration": "Conformance tests: stage-N — …"} '
            f"objects or declaration strings, got {_kind(tests)}",
            path=path,
            field="conformanceTests",
        )
    problems: list[tuple[str, str]] = []
    for index, item in enumerate(tests):
        where = f"conformanceTests[{index}]"
        if isinstance(item, str):
            declaration = item
            found = _DECLARED_STAGE.match(_clean(item))
            if found is None:
                problems.append((where, f"a declaration string must name its stage-<N>: {item!r}"))
                continue
            stage = int(found.group("n"))
        elif isinstance(item, dict):
            raw_stage, raw_declaration = item.get("stage"), item.get("declaration")
            if type(raw_stage) is not int:
                got = _kind(raw_stage)
                problems.append((f"{where}.stage", f"expected a stage number, got {got}"))
                continue
            if not isinstance(raw_declaration, str):
                got = _kind(raw_declaration)
                problems.append((f"{where}.declaration", f"expected a string, got {got}"))
                continue
            stage, declaration = raw_stage, raw_declaration
        else:
            problems.append((where, f"expected an object or a string, got {_kind(item)}"))
            continue
        if stage not in stage_numbers:
            problems.append((where, f"stage {stage} is not a stage of the plan"))
            continue
        _, problem = check_declaration(stage, declaration, roots)
        if problem:
            problems.append((where, f"stage {stage}: {problem}"))
    return problems
