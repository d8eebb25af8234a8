"""How an agent host starts okstra's MCP server for one run (`okstra mcp <run>`).

The server is this okstra's own command, absolute (the console script this process
runs as, else the one beside this interpreter, else `<python> -m okstra`), with `mcp`
and the run directory. A host learns of it in its own form:

* claude: `--mcp-config <file>` with `{"mcpServers": {"okstra": {command, args}}}`
  (the same file is `.mcp.json`'s form);
* codex: `-c mcp_servers.okstra.command=<TOML string>` and
  `-c mcp_servers.okstra.args=<TOML array>` (its `config.toml` keys);
* gemini: its settings file's `mcpServers` entry (with `trust`, so it does not ask
  before each call), read from the file `GEMINI_CLI_SYSTEM_SETTINGS_PATH` names.

A provider declares the argv that registers the server (`[launch] mcp`, inserted
right after the CLI's program) and any environment it needs (`[launch] mcp_env`),
with the placeholders `{mcp_config}` (the run's host-form file), `{mcp_command_toml}`
and `{mcp_args_toml}`. Nothing here imports the MCP SDK.
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
    """The command of this okstra's MCP server for `run_dir` (an absolute path).

    Args:
        okstra: this okstra's executable (`launch.sheet.find_okstra`), if known.
    """
    if okstra is not None and Path(okstra).is_absolute():
        return McpServer(command=okstra, args=("mcp", str(run_dir)), run_dir=run_dir)
    return McpServer(
        command=sys.executable, args=("-m", "okstra", "mcp", str(run_dir)), run_dir=run_dir
    )


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (JSON's escapes are TOML's)."""
    return orjson.dumps(text).decode("utf-8")


def host_config(server: McpServer, host: Host) -> McpConfig:
    """The server as `host`'s JSON config holds it (claude, gemini; codex: the same
    command and arguments, as its `[mcp_servers.okstra]` table)."""
    entry = McpServerEntry(
        command=server.command, args=server.args, trust=True if host == "gemini" else None
    )
    return McpConfig(mcp_servers={SERVER_NAME: entry})


def config_bytes(server: McpServer, host: Host) -> bytes:
    """The file `{mcp_config}` names, for a claude or gemini lead."""
    return host_config(server, host).to_bytes()


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


def config_host(provider: ProviderSpec) -> Host:
    """The JSON form of `{mcp_config}` for a provider's CLI: gemini's settings for the
    Gemini CLI, else the `mcpServers` file claude reads (`.mcp.json`'s form)."""
    return "gemini" if provider.cli == "gemini" else "claude"


def register_mcp(
    provider: ProviderSpec, server: McpServer, environment: Environment
) -> Registered | None:
    """`provider`'s `launch.mcp` and `launch.mcp_env` rendered for `server` (None when
    the provider declares no `launch.mcp`)."""
    launch = provider.launch
    if launch.mcp is None:
        return None
    source = provider.source or f"provider {provider.id}"
    values = server.values()
    argv = (
        render_argv(
            launch.mcp,
            values,
            environment.env,
            source=source,
            field="launch.mcp",
            known=MCP_PLACEHOLDERS,
        )
        if launch.mcp
        else ()
    )
    env = render_env(
        launch.mcp_env,
        values,
        environment.env,
        source=source,
        field="launch.mcp_env",
        known=MCP_PLACEHOLDERS,
    )
    uses_file = any("{mcp_config}" in e for e in (*launch.mcp, *launch.mcp_env.values()))
    return Registered(
        argv=argv,
        env=env,
        config=server.config_file if uses_file else None,
        config_bytes=config_bytes(server, config_host(provider)) if uses_file else None,
    )
