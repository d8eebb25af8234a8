"""Templates → argv: one element in, one element out, values untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from launch_helpers import NASTY, bundled, fake_env

from okstra_core import records
from okstra_core.catalog.models import LaunchSpec, ModelSpec, ProviderSpec
from okstra_core.errors import DataFileError, LaunchError, OkstraError
from okstra_core.launch import plan_launch, render_argv
from okstra_core.records import to_data

SID = "11111111-2222-4333-8444-555555555555"


def _provider(**launch: object) -> ProviderSpec:
    spec = {"version": ("{cli}", "--version"), "new": ("{cli}",), "resume": ("{cli}",)}
    spec.update(launch)
    return ProviderSpec(
        id="demo",
        display_label="Demo",
        cli="claude",
        roles=("leader",),
        launch=records.validate(LaunchSpec, spec),
        models=(ModelSpec(id="m", display="M", execution="m-1"),),
        source="/x/demo.toml",
    )


def test_render_keeps_each_element_whole_and_values_verbatim() -> None:
    for nasty in NASTY:
        values = {"kickoff": nasty, "cli": "/bin/c"}
        argv = render_argv(
            ("{cli}", "--", "{kickoff}", "--x={kickoff}"),
            values,
            {},
            source="s",
            field="launch.new",
        )
        assert argv == ("/bin/c", "--", nasty, f"--x={nasty}")


def test_render_braces_env_and_errors() -> None:
    out = render_argv(
        ("{{lit}}", "{env.HOME_X}/s"), {}, {"HOME_X": "/h"}, source="s", field="launch.new"
    )
    assert out == ("{lit}", "/h/s")
    with pytest.raises(DataFileError) as bad:
        render_argv(("{cli}", "{modle}"), {"cli": "c"}, {}, source="/p.toml", field="launch.new")
    assert bad.value.path == "/p.toml" and bad.value.field == "launch.new[1]"
    assert "unknown placeholder {modle}" in bad.value.message
    with pytest.raises(DataFileError, match="lone"):
        render_argv(("a{b",), {}, {}, source="s", field="f")
    with pytest.raises(DataFileError, match="NOPE is not set"):
        render_argv(("{env.NOPE}",), {}, {}, source="s", field="f")


def test_plan_claude_from_bundled_file(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("claude"))
    prompt = tmp_path / "lead prompt; $(x).md"
    plan = plan_launch(
        bundled("claude"),
        model="claude-opus-4-6",
        prompt_file=prompt,
        kickoff="Begin; `now`",
        project_root=tmp_path,
        environment=env,
    )
    cli = str(fake_bin("claude") / "claude")
    assert plan.argv == (
        cli,
        "--session-id",
        SID,
        "--model",
        "claude-opus-4-6",
        "--append-system-prompt-file",
        str(prompt),
        "--",
        "Begin; `now`",
    )
    assert plan.session_id == SID and plan.session_id_kind == "uuid4"
    # The model is passed on resume too: claude does not remember it.
    assert plan.resume_argv() == (cli, "--resume", SID, "--model", "claude-opus-4-6")
    assert to_data(plan)["resumeArgv"] == list(plan.resume_argv() or ())


def test_plan_mints_a_fresh_id_per_launch(fake_bin, tmp_path: Path) -> None:
    import uuid

    from okstra_core.environment import Environment

    env = Environment(env={"PATH": str(fake_bin("claude"))}, new_uuid=uuid.uuid4)
    ids = {
        plan_launch(
            bundled("claude"),
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="k",
            project_root=tmp_path,
            environment=env,
        ).session_id
        for _ in range(3)
    }
    assert len(ids) == 3


def test_plan_codex_is_discovered(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("codex"))
    plan = plan_launch(
        bundled("codex"),
        model="gpt-5.6-sol",
        prompt_file=tmp_path / "p.md",
        kickoff="go",
        project_root=tmp_path,
        environment=env,
    )
    assert plan.session_id is None and plan.session_id_kind == "discover"
    assert plan.resume_argv() is None
    assert plan.resume_argv("0199-abc")[-1] == "0199-abc"  # type: ignore[index]
    assert "--no-daemon" in plan.argv and plan.argv[-2:] == ("--", "go")


def test_plan_gemini_env_is_templated(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("gemini"))
    plan = plan_launch(
        bundled("antigravity"),
        model="gemini-3-pro-preview",
        prompt_file=tmp_path / "p.md",
        kickoff="go",
        project_root=tmp_path,
        environment=env,
    )
    assert plan.env == {"GEMINI_SYSTEM_MD": str(tmp_path / "p.md")}
    assert "--prompt-interactive=go" in plan.argv


def test_plan_refuses_missing_cli_and_bad_templates(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("codex"))
    with pytest.raises(LaunchError, match=r"`claude` .* is not on PATH"):
        plan_launch(
            bundled("claude"),
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="k",
            project_root=tmp_path,
            environment=env,
        )
    env = fake_env(fake_bin("claude"))
    bad = _provider(new=("{cli}", "{session_id}"), session_id="discover")
    with pytest.raises(DataFileError, match="discover"):
        plan_launch(
            bad,
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="k",
            project_root=tmp_path,
            environment=env,
        )
    bad = _provider(resume=("{cli}", "{sesion_id}"))
    with pytest.raises(DataFileError) as err:
        plan_launch(
            bad,
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="k",
            project_root=tmp_path,
            environment=env,
        )
    assert err.value.field == "launch.resume[1]"
    with pytest.raises(OkstraError, match="128 KiB"):
        plan_launch(
            _provider(new=("{cli}", "{kickoff}")),
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="x" * 200_000,
            project_root=tmp_path,
            environment=env,
        )
    with pytest.raises(OkstraError, match="NUL"):
        plan_launch(
            _provider(new=("{cli}", "{kickoff}")),
            model="m",
            prompt_file=tmp_path / "p",
            kickoff="a\0b",
            project_root=tmp_path,
            environment=env,
        )


def test_plan_prompt_placeholder_reads_the_file(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("claude"))
    prompt = tmp_path / "p.md"
    prompt.write_text("LEAD $(rm -rf /)", encoding="utf-8")
    plan = plan_launch(
        _provider(new=("{cli}", "-p", "{prompt}"), session_id="token"),
        model="m",
        prompt_file=prompt,
        kickoff="k",
        project_root=tmp_path,
        environment=env,
    )
    assert plan.argv[1:] == ("-p", "LEAD $(rm -rf /)")
    assert plan.session_id == "11111111222243338444555555555555"
    with pytest.raises(LaunchError, match="cannot read the lead prompt"):
        plan_launch(
            _provider(new=("{cli}", "{prompt}")),
            model="m",
            prompt_file=tmp_path / "missing.md",
            kickoff="k",
            project_root=tmp_path,
            environment=env,
        )
