"""`okstra mcp <run>`: the run's team as tools of the lead's own host (MCP, stdio).

Each tool adapts one `okstra_core.life.actions` function for the one run served. Only
`okstra mcp` imports the module that loads the MCP SDK (`tools`).
"""
