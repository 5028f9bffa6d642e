"""The official MCP Python SDK benchmark server (``MCPServer``, the SDK's decorator server).

Every fixture of ``matrix.FIXTURES``, declared with the SDK's decorators. Run it as a stdio
server with ``python -m benchmarks.servers.sdk_server`` (from the repository root).
``MCPServer.run()`` serves stdio under ``anyio.run`` with its default (asyncio) backend.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .fixtures import (
    BLOB_100K,
    BLOB_MIME_TYPE,
    BLOB_URI,
    SEARCH_TOOL_NAMES,
    SWEEP_BLOBS,
    TEXT_10K,
    blob_reader,
    search_tool,
    search_tool_description,
)


def build_server() -> MCPServer:
    """A server with the benchmark fixtures: ``add``, ``add_sync``, ``text_10k``, 47 search tools
    and the blobs."""
    server: MCPServer = MCPServer("bench")

    # Text content only, as mcptrio returns: without this the SDK infers structured output from
    # the return annotation and also builds and validates `structuredContent`.
    @server.tool(structured_output=False)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(structured_output=False)
    def add_sync(a: int, b: int) -> int:
        """Add two integers (a plain function: the server runs it as a sync handler)."""
        return a + b

    @server.tool(structured_output=False)
    async def text_10k() -> str:
        """Return 10 KiB of text."""
        return TEXT_10K

    for name in SEARCH_TOOL_NAMES:
        server.tool(name, description=search_tool_description(name), structured_output=False)(
            search_tool(name)
        )

    @server.resource(BLOB_URI, name="blob_100k", mime_type=BLOB_MIME_TYPE)
    async def blob_100k() -> str:
        """100 KiB of text."""
        return BLOB_100K

    for uri, blob_name, text in SWEEP_BLOBS:
        server.resource(uri, name=blob_name, mime_type=BLOB_MIME_TYPE)(blob_reader(text))

    return server


if __name__ == "__main__":
    build_server().run()
