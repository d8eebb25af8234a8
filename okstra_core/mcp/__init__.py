"""`okstra mcp <run>`: the run's team as tools of the lead's own host (MCP, stdio).

A front end beside the CLI: each tool is a thin adapter over one function of
`okstra_core.life.actions` (the same arguments, the same refusals), answering with a
structured result (the record's JSON, as `--json` prints it) and a short text. The
server serves the one run it was started for; nothing it takes names another.

Only `okstra mcp` imports this package's modules that import the MCP SDK (`server`,
`tools`): every other command stays as fast as it was.
"""
