"""The FastMCP 4.x benchmark server: every fixture of ``matrix.FIXTURES``, with its decorators.

Run it as a stdio server with ``python -m benchmarks.servers.fastmcp_server`` (from the
repository root). ``FastMCP.run()`` serves stdio under ``anyio.run`` (asyncio).
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP

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


def build_server() -> FastMCP[Any]:
    """A server with the benchmark fixtures: ``add``, ``add_sync``, ``text_10k``, 47 search tools
    and the blobs."""
    server: FastMCP[Any] = FastMCP("bench")

    # Text content only, as the other servers return: `output_schema=None` stops FastMCP from
    # inferring an output schema from the return annotation and sending `structuredContent`.
    @server.tool(output_schema=None)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(output_schema=None)
    def add_sync(a: int, b: int) -> int:
        """Add two integers (a plain function: the server runs it as a sync handler)."""
        return a + b

    @server.tool(output_schema=None)
    async def text_10k() -> str:
        """Return 10 KiB of text."""
        return TEXT_10K

    for name in SEARCH_TOOL_NAMES:
        server.tool(name=name, description=search_tool_description(name), output_schema=None)(
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
    build_server().run(show_banner=False)
