"""okstra's MCP server of the run, as the demo lead calls it (the official SDK's client).

The lead is given the server as claude is: `--mcp-config <file>`, a JSON file holding
`{"mcpServers": {"okstra": {"command": …, "args": […]}}}`. It starts that command
over stdio (`mcp.client.stdio.stdio_client`), opens a `ClientSession` and calls the
tools by name, reading each answer's structured content. The session lives on an
event loop of its own (an anyio blocking portal), so the lead's script stays plain
calls.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

__all__ = ["SERVER_NAME", "Answer", "ToolError", "Tools", "open_tools", "server_from"]

SERVER_NAME = "okstra"


class ToolError(Exception):
    """The server could not be read from its config file, or did not answer."""


@dataclass(frozen=True)
class Answer:
    """One tool call's answer: its text, its structured content, and whether it erred."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    error: bool = False


def server_from(config: Path) -> StdioServerParameters:
    """The `okstra` server of an `mcpServers` config file (ToolError if it has none).

    The server inherits the lead's whole environment, as a host's servers do (okstra
    finds its configuration and the run's trust through it).
    """
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
        entry = raw["mcpServers"][SERVER_NAME]
        command, args = entry["command"], entry.get("args", [])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ToolError(f"{config}: no mcpServers.{SERVER_NAME} server ({exc})") from exc
    if not isinstance(command, str) or not all(isinstance(a, str) for a in args):
        raise ToolError(f"{config}: mcpServers.{SERVER_NAME}: expected a command and arguments")
    return StdioServerParameters(command=command, args=list(args), env=dict(os.environ))


class Tools:
    """An open session with the server: `call(name, arguments)` blocks for the answer."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self._portal = portal
        self._session = session

    def call(self, name: str, arguments: dict[str, Any]) -> Answer:
        """Call the tool `name`; its answer (ToolError when the session fails)."""
        call = functools.partial(self._session.call_tool, name, arguments)
        try:
            result = self._portal.call(call)
        except Exception as exc:  # the SDK's transport and protocol errors alike
            raise ToolError(f"{name}: {exc}") from exc
        text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
        data = result.structured_content if isinstance(result.structured_content, dict) else {}
        return Answer(text=text.strip(), data=data, error=bool(result.is_error))


@contextlib.contextmanager
def open_tools(config: Path) -> Iterator[Tools]:
    """Start the server `config` names and open a session with it, until the block ends."""
    params = server_from(config)
    with contextlib.ExitStack() as stack:
        try:
            portal = stack.enter_context(start_blocking_portal())
            transport = portal.wrap_async_context_manager(stdio_client(params))
            read, write = stack.enter_context(transport)
            client = portal.wrap_async_context_manager(ClientSession(read, write))
            session = stack.enter_context(client)
            portal.call(session.initialize)
        except Exception as exc:  # the server did not start or the handshake failed
            raise ToolError(f"okstra's MCP server ({params.command}): {exc}") from exc
        yield Tools(portal, session)
