"""The MCP server of one run, on stdin/stdout (the SDK's `MCPServer`).

Input schemas are the SDK's from the tools' signatures, made exact (no undeclared
argument); output schemas are the action records' JSON Schemas. Stdout carries only
the protocol; the log (warnings) goes to stderr. It ends when the client closes stdin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from .. import __version__
from ..environment import Environment
from ..records import json_schema
from .tools import Team

INSTRUCTIONS = (
    "okstra's team of one run. Start workers (worker_start) with their whole task as "
    "the prompt, wait for them (worker_wait: one call waits a slice and answers with "
    "the members still running; call it again), read each one's output "
    "(worker_result), send an ended one a follow-up (worker_send), see the whole team "
    "(team_status), stop one (worker_stop), "
    "review and merge a writer's worktree (worker_diff, worker_merge, worker_discard), "
    "and write the run's execution roles onto the final report (report_finalize). A "
    "refusal is a tool error that says what to change."
)


def _strict(tool: Tool) -> Tool:
    """`tool` refusing any argument it does not declare, and saying so in its schema."""
    base = tool.fn_metadata.arg_model
    strict: type[BaseModel] = type(
        base.__name__,
        (base,),
        {"model_config": ConfigDict(**{**base.model_config, "extra": "forbid"})},
    )
    schema = strict.model_json_schema(by_alias=True)
    schema.pop("title", None)
    metadata = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(update={"fn_metadata": metadata, "parameters": schema})


def build_server(
    run_dir: Path, environment: Environment, *, slice_seconds: float
) -> MCPServer[Any]:
    """The server of the run at `run_dir` (already located and checked)."""
    team = Team(run_dir, environment, slice_seconds=slice_seconds)
    tools = []
    for fn, record, reads in team.tools():
        tool = _strict(
            Tool.from_function(
                fn,
                annotations=ToolAnnotations(
                    read_only_hint=reads,
                    destructive_hint=fn.__name__ in ("worker_stop", "worker_discard"),
                    open_world_hint=False,
                ),
            )
        )
        schema = json_schema(record, mode="serialization")
        metadata = tool.fn_metadata.model_copy(update={"output_schema": schema})
        tools.append(tool.model_copy(update={"fn_metadata": metadata}))
    return MCPServer(
        "okstra",
        title=f"okstra — run {run_dir.name}",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        log_level="WARNING",
    )


def serve(run_dir: Path, environment: Environment, *, slice_seconds: float) -> None:
    """Serve the run on stdin/stdout until the client closes stdin."""
    build_server(run_dir, environment, slice_seconds=slice_seconds).run("stdio")
