"""A server written with the official MCP Python SDK (``mcp``), run over stdio by the gateway.

    python examples/multiplexed/sdk_server.py

(``gateway.json`` runs it; on its own it speaks MCP on stdin and stdout.)
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-tools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def countdown(start: int, ctx: Context) -> str:
    """Count down, reporting progress."""
    for i in range(1, start + 1):
        await ctx.report_progress(i, start, f"step {i}")
    return "liftoff"


if __name__ == "__main__":
    server.run("stdio")
