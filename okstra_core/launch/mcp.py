"""How an agent host starts okstra's MCP server for one run (`okstra mcp <run>`).

The server is this okstra's own absolute command. claude reads it from `--mcp-config
<file>` (`.mcp.json`'s form), codex from `-c mcp_servers.okstra.*` keys, gemini from
its settings file (with `trust`). A provider's `[launch] mcp`/`mcp_env` register it,
with `{mcp_config}`, `{mcp_command_toml}`, `{mcp_args_toml}`. No MCP SDK import here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import orjson

from ..catalog.argv import render_argv, render_env
from ..catalog.models import ProviderSpec
from ..catalog.rules import MCP_PLACEHOLDERS
from ..documents.mcp import McpConfig, McpServerEntry
from ..environment import Environment
from ..records import dataclass

SERVER_NAME = "okstra"
# The file the lead's host reads the server from, in the run directory.
MCP_CONFIG = "mcp.json"
Host = Literal["claude", "codex", "gemini"]
HOSTS: tuple[Host, ...] = ("claude", "codex", "gemini")


@dataclass(frozen=True)
class McpServer:
    """The command that serves one run, and where the lead's host reads it from."""

    command: str
    args: tuple[str, ...]
    run_dir: Path

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.command, *self.args)

    @property
    def config_file(self) -> Path:
        return self.run_dir / MCP_CONFIG

    def values(self) -> dict[str, str]:
        """The values of the `[launch] mcp` placeholders."""
        return {
            "mcp_config": str(self.config_file),
            "mcp_command_toml": toml_string(self.command),
            "mcp_args_toml": "[" + ", ".join(toml_string(a) for a in self.args) + "]",
        }


def server_for(run_dir: Path, okstra: str | None) -> McpServer:
    """The command of this okstra's MCP server for `run_dir`."""
    if okstra is not None and Path(okstra).is_absolute():
        return McpServer(command=okstra, args=("mcp", str(run_dir)), run_dir=run_dir)
    return McpServer(
        command=sys.executable, args=("-m", "okstra", "mcp", str(run_dir)), run_dir=run_dir
    )


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (JSON's escapes are TOML's)."""
    return orjson.dumps(text).decode("utf-8")


def config_bytes(server: McpServer, host: Host) -> bytes:
    """The file `{mcp_config}` names, for a claude or gemini lead."""
    entry = McpServerEntry(
        command=server.command, args=server.args, trust=True if host == "gemini" else None
    )
    return McpConfig(mcp_servers={SERVER_NAME: entry}).to_bytes()


def snippet(server: McpServer, host: Host) -> str:
    """What a person adds to `host` by hand to give it this run's server."""
    if host == "codex":
        return (
            f"[mcp_servers.{SERVER_NAME}]\n"
            f"command = {toml_string(server.command)}\n"
            f"args = {server.values()['mcp_args_toml']}\n"
        )
    return config_bytes(server, host).decode("utf-8")


def where(host: Host) -> str:
    """Where `snippet(…, host)` goes (one line, for people)."""
    if host == "codex":
        return (
            "add it to ~/.codex/config.toml (or pass each key with -c "
            f"mcp_servers.{SERVER_NAME}.<key>=<value>)"
        )
    if host == "gemini":
        return (
            "merge its mcpServers into ~/.gemini/settings.json or <project>/.gemini/settings.json"
        )
    return (
        "save it as .mcp.json in the project, or pass the file with "
        f"`claude --mcp-config <file> --allowedTools mcp__{SERVER_NAME}`"
    )


@dataclass(frozen=True)
class Registered:
    """What gives one CLI the server: arguments, environment, and the config file."""

    argv: tuple[str, ...]
    env: dict[str, str]
    config: Path | None
    config_bytes: bytes | None


def register_mcp(
    provider: ProviderSpec, server: McpServer, environment: Environment
) -> Registered | None:
    """`provider`'s `launch.mcp` and `mcp_env` rendered for `server` (None without `mcp`)."""
    launch = provider.launch
    if launch.mcp is None:
        return None
    source = provider.source or f"provider {provider.id}"
    values = server.values()
    known = MCP_PLACEHOLDERS
    argv = (
        render_argv(
            launch.mcp, values, environment.env, source=source, field="launch.mcp", known=known
        )
        if launch.mcp
        else ()  # an empty argv template is refused: no arguments, only the variables
    )
    env = render_env(
        launch.mcp_env, values, environment.env, source=source, field="launch.mcp_env", known=known
    )
    uses_file = any("{mcp_config}" in e for e in (*launch.mcp, *launch.mcp_env.values()))
    # `{mcp_config}`'s JSON form: gemini's settings for the Gemini CLI, else claude's.
    host: Host = "gemini" if provider.cli == "gemini" else "claude"
    return Registered(
        argv=argv,
        env=env,
        config=server.config_file if uses_file else None,
        config_bytes=config_bytes(server, host) if uses_file else None,
    )
