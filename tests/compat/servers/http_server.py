"""A server in the official SDK's style run over Streamable HTTP (``run("streamable-http")``)."""

import os
import sys

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import MCPServer
else:
    from mcptrio.compat.mcpserver import MCPServer

mcp = MCPServer("http-demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), streamable_http_path="/mcp")
