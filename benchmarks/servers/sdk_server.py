"""The official MCP Python SDK benchmark server (``MCPServer``, the SDK's decorator server).

Run it as a stdio server with ``python -m benchmarks.servers.sdk_server`` (from the repository
root) or ``python benchmarks/servers/sdk_server.py``. ``MCPServer.run()`` serves stdio under
``anyio.run`` with its default (asyncio) backend.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    """A server with the single benchmark tool, ``add(a, b) -> a + b``."""
    server: MCPServer = MCPServer("bench")

    # Text content only, as mcptrio returns: without this the SDK infers structured output from
    # `-> int` and also builds and validates `structuredContent`, which costs it a third or so.
    @server.tool(structured_output=False)
    async def add(a: int, b: int) -> int:
        return a + b

    return server


if __name__ == "__main__":
    build_server().run()
