"""`okstra doctor`'s report: its JSON shape (from the records, `records.to_data`) and the
Node.js check (the npm-installed agent CLIs need Node 22 or newer), with a fake `node`
on PATH — the installed `okstra` command, run as a person would.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from life_support import base_env, make_fake_clis, okstra, okstra_json

CHECK_KEYS = [
    "name",
    "kind",
    "ok",
    "cli",
    "path",
    "resolvedPath",
    "pathEntry",
    "warning",
    "version",
    "canLead",
    "launchFlagsOk",
    "ready",
    "loggedIn",
    "login",
    "loginFix",
    "problem",
    "fix",
    "install",
    "disabled",
    "demo",
]


def _node(bin_dir: Path, answer: str) -> None:
    node = bin_dir / "node"
    node.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "{answer}"\n', encoding="utf-8")
    node.chmod(node.stat().st_mode | stat.S_IXUSR)


def _doctor(tmp_path: Path, path: str) -> tuple[int, dict[str, Any], str]:
    env = base_env(tmp_path / "bin", tmp_path)
    env["PATH"] = path
    code, doc = okstra_json(["doctor", "--json"], cwd=tmp_path, env=env)
    human = okstra(["doctor"], cwd=tmp_path, env=env).stdout.decode()
    return code, doc, human


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return make_fake_clis(tmp_path / "bin")


def test_the_report_keeps_its_protocol_shape(tmp_path: Path, bin_dir: Path) -> None:
    _node(bin_dir, "v22.11.0")
    code, doc, _ = _doctor(tmp_path, f"{bin_dir}:/usr/bin:/bin")
    assert list(doc) == ["ok", "summary", "checks", "projectTrust", "configFiles"], doc
    assert code == (0 if doc["ok"] else 1)
    for check in doc["checks"]:
        assert list(check) == CHECK_KEYS, check
    names = [c["name"] for c in doc["checks"]]
    assert names[-2:] == ["tmux", "node"]
    assert "agent CLIs ready" in doc["summary"]


def test_an_old_node_is_named_with_the_fix(tmp_path: Path, bin_dir: Path) -> None:
    _node(bin_dir, "v20.11.1")
    _code, doc, human = _doctor(tmp_path, f"{bin_dir}:/usr/bin:/bin")
    node = next(c for c in doc["checks"] if c["name"] == "node")
    assert node["ok"] is False and node["version"] == "v20.11.1"
    assert node["path"] == str(bin_dir / "node")
    assert "older than 22" in node["problem"]
    assert "install Node.js 22 or newer" in node["fix"]
    assert "!! node" in human and "older than 22" in human


def test_a_current_node_is_ok(tmp_path: Path, bin_dir: Path) -> None:
    _node(bin_dir, "v24.1.0")
    _code, doc, human = _doctor(tmp_path, f"{bin_dir}:/usr/bin:/bin")
    node = next(c for c in doc["checks"] if c["name"] == "node")
    assert node["ok"] is True and node["problem"] is None
    assert "ok node" in human


def test_no_node_says_which_version_to_install(tmp_path: Path, bin_dir: Path) -> None:
    _code, doc, human = _doctor(tmp_path, str(bin_dir))  # nothing else on PATH
    node = next(c for c in doc["checks"] if c["name"] == "node")
    assert node["ok"] is False and node["path"] is None
    assert "node is not on PATH" in node["problem"] and "22 or newer" in node["problem"]
    assert "nvm install 22" in node["fix"]
    assert "!! node" in human


def test_the_guide_says_node_first_and_counts_no_demo_agent() -> None:
    from okstra_core.life.doctor import Check, Report, setup_guide

    claude = Check(
        name="claude", kind="provider", ok=False, cli="claude", can_lead=True,
        install="npm install -g @anthropic-ai/claude-code@latest",
        problem="cli 'claude' not found on PATH",
    )  # fmt: skip
    demo = Check(
        name="demo", kind="provider", ok=True, cli="okstra-demo-agent", path="/v/bin/x",
        version="0.2.0", can_lead=True, demo=True,
    )  # fmt: skip
    old_node = Check(
        name="node", kind="tool", ok=False, cli="node", path="/usr/bin/node",
        version="v20.11.1", problem="Node.js v20.11.1 is older than 22",
    )  # fmt: skip
    report = Report(checks=(claude, demo, old_node))
    # The ready demo agent is no agent CLI: nothing can lead a real run yet.
    assert not report.ok and report.ready_count() == (0, 1)
    assert report.summary().startswith("0 of 1 agent CLIs ready")
    (entry,) = setup_guide(report)
    assert entry.cli == "claude"
    assert entry.todo == (
        "npm install -g @anthropic-ai/claude-code@latest  "
        "(needs Node.js 22 or newer, this one is v20.11.1: `nvm install 22` first)"
    )
    current = Check(name="node", kind="tool", ok=True, cli="node", version="v22.1.0")
    (entry,) = setup_guide(Report(checks=(claude, demo, current)))
    assert entry.todo == "npm install -g @anthropic-ai/claude-code@latest"
