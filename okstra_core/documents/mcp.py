"""`mcp.json` of a run: okstra's MCP server as claude's `--mcp-config` (and Gemini's
`mcpServers`, where `trust: true` spares a confirmation per call) read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..records import config, dataclass
from .base import Document

if TYPE_CHECKING:
    from pydantic import StrictBool, StrictStr


@dataclass(frozen=True, kw_only=True)
class McpServerEntry(Document):
    """One stdio server: its program and arguments (never a shell string)."""

    __pydantic_config__ = config(camel_case=True, by_name=True, omit_none=("trust",))
    WHAT: ClassVar[str] = "MCP server entry"

    command: StrictStr
    args: tuple[StrictStr, ...]
    trust: StrictBool | None = None


@dataclass(frozen=True, kw_only=True)
class McpConfig(Document):
    """`mcp.json`: the servers by name (okstra writes one, `okstra`)."""

    WHAT: ClassVar[str] = "MCP config"

    mcp_servers: dict[StrictStr, McpServerEntry]
