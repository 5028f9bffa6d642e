"""A small MCP server with a few tools, served over stdio.

Run it directly (``python examples/demo_server.py``) and it speaks MCP on stdin/stdout; anything
it logs goes to stderr. ``examples/stdio_demo.py`` spawns it and calls its tools.
"""

from __future__ import annotations

import logging

import trio

import mcptrio

server = mcptrio.Server(
    "demo", "1.0.0", title="mcptrio demo", instructions="Arithmetic and a slow countdown."
)
log = logging.getLogger("demo")


@server.tool(title="Add two integers")
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str, times: int = 1) -> str:
    """Upper-case a text, repeated (a sync tool: it runs in a worker thread)."""
    return " ".join([text.upper()] * times)


@server.tool()
async def countdown(ctx: mcptrio.Context, start: int = 3, pause: float = 0.05) -> str:
    """Count down to zero, reporting progress at each step."""
    for step in range(start):
        log.info("countdown at %d", start - step)
        await ctx.report_progress(step + 1, start, f"{start - step}...")
        await trio.sleep(pause)
    return "liftoff"


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="[server] %(name)s: %(message)s")
    server.run()
