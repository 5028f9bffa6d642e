"""A server that dies mid-call: how long until the client's pending calls fail.

For each transport (stdio, Streamable HTTP, WebSocket) a client starts 10 calls of a tool that
sleeps for a minute, the server process is killed with SIGKILL, and the time from the kill until
the last pending call has raised is the figure (it must be under a second).
"""

from __future__ import annotations

import signal
from typing import Any

import trio

import mcptrio
from mcptrio.protocol.errors import McpError
from mcptrio.transports.stdio import StdioTransport

from .harness import ServerChild, open_server

CALLS = 10


async def _calls_fail_after_kill(child: ServerChild, client: mcptrio.Client) -> dict[str, Any]:
    failed: list[float] = []
    killed_at = 0.0

    async def call() -> None:
        try:
            await client.call_tool("sleep", {"seconds": 60})
        except (McpError, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            failed.append(trio.current_time())

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for _ in range(CALLS):
                nursery.start_soon(call)
            # Let every call reach the server's handler.
            await trio.sleep(0.5)
            killed_at = trio.current_time()
            child.process.send_signal(signal.SIGKILL)
    worst = max(failed) - killed_at if failed else float("inf")
    return {
        "pending_calls": CALLS,
        "failed": len(failed),
        "last_failed_after_s": round(worst, 3),
        "holds": len(failed) == CALLS and worst < 1.0,
    }


async def dead_peer(transport: str) -> dict[str, Any]:
    if transport == "stdio":
        async with open_server("stdio") as child:
            process = child.process
            assert process.stdout is not None and process.stdin is not None
            stdio = StdioTransport(process.stdout, process.stdin)
            async with mcptrio.open_client(stdio) as client:
                return await _calls_fail_after_kill(child, client)
    async with open_server("http-httptools") as child:
        url = child.url + "/mcp"
        if transport == "websocket":
            url = url.replace("http://", "ws://", 1)
        async with mcptrio.open_client(url) as client:
            return await _calls_fail_after_kill(child, client)


async def dead_peer_attack(short: bool) -> dict[str, Any]:
    """Pending calls when the server is killed, per transport (each under a second)."""
    figures: dict[str, Any] = {}
    holds = True
    for transport in ("stdio", "http", "websocket"):
        result = await dead_peer(transport)
        figures[transport] = result["last_failed_after_s"]
        holds = holds and result["holds"]
    return {"last_pending_call_failed_after_s": figures, "holds": holds}
