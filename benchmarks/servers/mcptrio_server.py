"""The mcptrio benchmark server: every fixture of ``matrix.FIXTURES``, declared with decorators.

Run it as a stdio server with ``python -m benchmarks.servers.mcptrio_server`` (from the
repository root), or over WebSocket with ``python -m benchmarks.servers.mcptrio_server
--websocket`` (prints its ``ws://`` URL on the first line of stdout, then serves until killed).
"""

from __future__ import annotations

import sys
from functools import partial

import trio

import mcptrio
from mcptrio.transports.websocket_server import serve_websocket

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


def build_server() -> mcptrio.Server:
    """A server with the benchmark fixtures: ``add``, ``add_sync``, ``text_10k``, 47 search tools
    and the blobs."""
    server = mcptrio.Server("bench")

    # Text content only, the same result as the other libraries' servers: without this mcptrio
    # infers structured output from the return annotation and also validates the value and sends
    # `structuredContent` (see benchmarks/README.md, "Same result everywhere").
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


async def serve_websocket_printing_url(server: mcptrio.Server) -> None:
    """Serve ``server`` over WebSocket on a free loopback port; print the URL, then serve."""
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_websocket, server))
        sys.stdout.write(f"{url}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if "--websocket" in sys.argv[1:]:
        trio.run(serve_websocket_printing_url, build_server())
    else:
        build_server().run_stdio()
