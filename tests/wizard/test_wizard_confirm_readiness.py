"""The confirmation names each member whose CLI prepare's preflight would refuse.

A setup confirmed while the Gemini CLI was logged in, then shown again after its login
went away: the confirmation carries a line naming the member (role#n), its model and
the reason preflight gives (the one readiness verdict); the other members get none.
"""

from __future__ import annotations

import os
from pathlib import Path

from wizard_helpers import run_through

from okstra_core.environment import Environment
from okstra_core.readiness import cli_readiness
from okstra_core.session import Wizard
from okstra_core.wizard.base import StepContext
from okstra_core.wizard.confirm import confirmation

GEMINI = "antigravity/gemini-3-pro"


def test_the_confirmation_names_a_member_preflight_would_refuse_and_why(
    tmp_path: Path, env: Environment, project: Path
) -> None:
    # Logged in (the Gemini CLI home with a cached login the test session provides).
    env = Environment(env={**env.env, "GEMINI_CLI_HOME": os.environ["GEMINI_CLI_HOME"]})
    wizard = Wizard.init(
        tmp_path / "w.json", project, host="terminal", task_type="error-analysis", environment=env
    )
    end = run_through(wizard, {"role-model:analyser:2": GEMINI}, stop="confirm")
    assert end.id == "confirm"
    assert "will not pass preflight" not in end.meta["confirmation"]

    logged_out = tmp_path / "no-login"
    logged_out.mkdir()
    later = Environment(env={**env.env, "GEMINI_CLI_HOME": str(logged_out)})
    block = confirmation(StepContext(later, project), wizard.state)

    refused = [line for line in block.lines if line.key.startswith("not-ready:")]
    assert [line.key for line in refused] == ["not-ready:analyser#2"]
    line = refused[0].text
    assert "analyser#2" in line and GEMINI in line
    # The same reason preflight gives for that member (the one readiness verdict).
    ctx = StepContext(later, project)
    gemini = next(p for p in ctx.catalog.providers if p.cli == "gemini")
    reason = cli_readiness(gemini, later).why_not(lead=False)
    assert reason is not None and reason[0] == "`gemini` is not logged in"
    assert f"{reason[0]} — {reason[1]}" in line
    assert line in block.text
