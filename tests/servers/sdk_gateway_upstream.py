"""An official-SDK (``mcp``, MCPServer) server over stdio, the gateway tests' second upstream.

    python tests/servers/sdk_gateway_upstream.py

``MARKS`` (an environment variable naming a file) collects what the gateway tests check from
the outside: the process id at start (``pid <n>``) and ``cancelled slow`` when a ``slow`` call is
cancelled, which the SDK does on ``notifications/cancelled``.
"""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import Context, MCPServer


def mark(line: str) -> None:
    path = os.environ.get("MARKS")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


def build() -> MCPServer:
    server = MCPServer("sdk-upstream")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    @server.tool()
    async def countdown(start: int, ctx: Context) -> str:
        """Reports progress from 1 to start."""
        for i in range(1, start + 1):
            await ctx.report_progress(i, start, f"step {i}")
        return "liftoff"

    @server.tool()
    async def slow() -> str:
        """Waits a minute (to be cancelled)."""
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            mark("cancelled slow")
            raise
        return "done"

    @server.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        return "buy milk"

    @server.prompt()
    def summarize(text: str) -> str:
        return f"Summarize: {text}"

    return server


if __name__ == "__main__":
    mark(f"pid {os.getpid()}")
    build().run("stdio")
