"""okstra's demo agent: a scripted agent CLI, no model, no network.

It is a client of okstra like any agent on a team: as the **lead** it reads the lead
prompt okstra wrote and starts, waits for and reads its workers — through okstra's MCP
server of the run when it is given one (`--mcp-config`, the official SDK's client),
else with the `okstra worker` commands the prompt gives — then writes the final
report's data and finalizes it (`report_finalize`, or `okstra report finalize`); as a
**worker** it does one small, deterministic piece of
work on the project it runs in and writes its result. It never imports `okstra_core`:
everything it knows of okstra comes from the prompt and okstra's public commands
(`tests/core/test_demo_agent.py` checks it).
"""

from __future__ import annotations

__all__ = ["PROGRAM", "__version__"]

PROGRAM = "okstra-demo-agent"
# The okstra release it ships in (a test holds it to the installed distribution's):
# written here, not read from the metadata, which costs `--version` most of its time.
__version__ = "0.2.0"
