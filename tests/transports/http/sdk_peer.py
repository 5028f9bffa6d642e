"""The official Python SDK's server, run with uvicorn in a subprocess, as a real HTTP peer.

Run as a script: ``python sdk_peer.py MODE PORT`` with MODE one of ``streamable-json``,
``streamable-sse`` (Streamable HTTP at ``/mcp``) or ``sse`` (the legacy HTTP+SSE app, ``/sse``
and ``/messages/``). Tests use :func:`open_sdk_server`, which picks a free port, waits until the
server accepts connections, and kills it at the end.
"""

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

_SCRIPT = str(Path(__file__).resolve())


def _build_and_run(mode: str, port: int) -> None:
    import uvicorn
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("sdk-peer")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def countdown(start: int, ctx: Context) -> str:
        """Report progress from start down to 1."""
        for i in range(start):
            await ctx.report_progress(i + 1, start, f"step {i + 1}")
        return "liftoff"

    if mode == "sse":
        app = server.sse_app()
    else:
        app = server.streamable_http_app(json_response=mode == "streamable-json")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def open_sdk_server(mode: str) -> AsyncIterator[str]:
    """Start the SDK server in ``mode``; yields its base URL (``http://127.0.0.1:PORT``)."""
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, _SCRIPT, mode, str(port)],
        stdout=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(20):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                except OSError:
                    if process.poll() is not None:
                        raise RuntimeError("the SDK server exited at startup") from None
                    await trio.sleep(0.05)
                    continue
                await stream.aclose()
                break
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await process.wait()


if __name__ == "__main__":
    _build_and_run(sys.argv[1], int(sys.argv[2]))
