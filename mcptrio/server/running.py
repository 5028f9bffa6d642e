"""``Server.run``: serve a server over one transport as a whole program, in one line.

::

    server.run()                                        # stdio
    server.run("http")                                  # http://127.0.0.1:8000/mcp
    server.run("websocket", port=9000)                  # ws://127.0.0.1:9000/mcp

:func:`run_server` is ``trio.run`` around the matching ``serve_*`` method, for a process whose
only job is this server; inside a Trio program of your own, start the ``serve_*`` method in your
nursery instead. Over HTTP and WebSocket the URL clients connect to is written to stderr as one
line (stdout is left alone: it may be a pipe someone reads), and Ctrl-C ends the run quietly.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final, Literal, TextIO

import trio

from ..runtime.nurseries import open_unwrapping_nursery

if TYPE_CHECKING:
    from .server import Server

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TRANSPORTS", "TransportName", "run_server"]

#: The port ``Server.run`` and ``mcptrio run`` serve HTTP and WebSocket on unless told otherwise
#: (the port FastMCP and most Python MCP servers use, so clients' examples work unchanged).
DEFAULT_PORT: Final = 8000
#: Loopback only unless told otherwise: a development server is not exposed to the network.
DEFAULT_HOST: Final = "127.0.0.1"

TransportName = Literal["stdio", "http", "websocket"]
TRANSPORTS: Final[tuple[TransportName, ...]] = ("stdio", "http", "websocket")


def run_server(
    server: Server,
    transport: TransportName = "stdio",
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    path: str = "/mcp",
    parser: Literal["auto", "h11", "httptools"] = "auto",
    front_end: Literal["builtin", "hypercorn"] = "builtin",
    announce: TextIO | None = None,
) -> None:
    """Serve ``server`` over ``transport`` until stdin ends (stdio) or Ctrl-C.

    ``announce`` is where the URL line goes for HTTP and WebSocket (``None``: stderr).
    A port already in use raises ``OSError`` before anything is served.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}: use one of {', '.join(TRANSPORTS)}")

    async def serve() -> None:
        # A lone error (a port in use, say) leaves as itself, not in a group.
        async with open_unwrapping_nursery() as nursery:
            if transport == "stdio":
                await server.serve_stdio()
                return
            if transport == "http":
                base = await nursery.start(_serve_http, server, host, port, path, parser, front_end)
                url = f"{base}{path}"
            else:
                url = await nursery.start(_serve_websocket, server, host, port, path)
            out = sys.stderr if announce is None else announce
            print(f"Serving {server.info.name} over {transport} at {url}", file=out, flush=True)

    try:
        trio.run(serve)
    except KeyboardInterrupt:
        return


async def _serve_http(
    server: Server,
    host: str,
    port: int,
    path: str,
    parser: Literal["auto", "h11", "httptools"],
    front_end: Literal["builtin", "hypercorn"],
    *,
    task_status: trio.TaskStatus[str],
) -> None:
    await server.serve_http(
        host, port, path=path, parser=parser, front_end=front_end, task_status=task_status
    )


async def _serve_websocket(
    server: Server, host: str, port: int, path: str, *, task_status: trio.TaskStatus[str]
) -> None:
    await server.serve_websocket(host, port, path=path, task_status=task_status)
