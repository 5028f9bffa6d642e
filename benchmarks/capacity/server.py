"""Each library's Streamable HTTP server (JSON response mode) as its users run it, one per process.

::

    python -m benchmarks.capacity.server {mcptrio,sdk,fastmcp} PORT MAX_CONNECTIONS

The server is the benchmark's ``build_server()`` (``benchmarks/servers/<lib>_server.py``) at
``http://127.0.0.1:PORT/mcp``, every setting at its default except:

- mcptrio: ``Server.serve_http(json_response=True)`` under ``trio.run`` (built-in front end,
  httptools parser when installed), with ``ServerLimits(max_connections=MAX_CONNECTIONS)``:
  its default of 1,000 connections would refuse the 1,001st open GET stream; and with
  ``HttpSecurity(max_sessions=...)`` ``OPENINGS_ROOM`` past ``MAX_CONNECTIONS`` or its default
  of 10,000 sessions, whichever is larger: the timed openings come on top of the idle sessions
  (idle ones hold no connection);
- sdk: ``MCPServer.streamable_http_app(json_response=True, max_sessions=None)`` on uvicorn, one
  worker, as ``MCPServer.run_streamable_http_async()`` serves it (uvicorn has no connection
  limit; its session manager's default limit of 10,000 sessions would refuse a run of 10,000);
- fastmcp: ``FastMCP.run(transport="http", json_response=True)``, FastMCP's own uvicorn runner,
  whose session limit (the SDK's default, 10,000) cannot be set: ``measure`` gives it fewer
  sessions (``FASTMCP_SESSIONS``).

Logging is at warning level (the SDK and FastMCP log a line per session at INFO). It runs until
killed.
"""

from __future__ import annotations

import logging
import sys
from functools import partial

LIBS = ("mcptrio", "sdk", "fastmcp")
#: ``HttpSecurity``'s default ``max_sessions``.
_MCPTRIO_DEFAULT_MAX_SESSIONS = 10_000
#: Sessions a server must take beyond the idle ones: ``measure``'s timed openings (201).
OPENINGS_ROOM = 1_000


def serve_mcptrio(port: int, max_connections: int) -> None:
    import trio

    from benchmarks.servers.mcptrio_server import build_server
    from mcptrio.transports.http.endpoints.security import HttpSecurity
    from mcptrio.transports.http.engine.builtin_server import ServerLimits

    limits = ServerLimits(max_connections=max_connections)
    max_sessions = max(max_connections, _MCPTRIO_DEFAULT_MAX_SESSIONS) + OPENINGS_ROOM
    security = HttpSecurity(max_sessions=max_sessions)
    server = build_server()
    serve = partial(
        server.serve_http, "127.0.0.1", port, json_response=True, limits=limits, security=security
    )
    trio.run(serve)


def serve_sdk(port: int) -> None:
    import uvicorn

    from benchmarks.servers.sdk_server import build_server

    app = build_server().streamable_http_app(json_response=True, max_sessions=None)
    logging.getLogger().setLevel(logging.WARNING)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", workers=1)
    uvicorn.Server(config).run()


def serve_fastmcp(port: int) -> None:
    from benchmarks.servers.fastmcp_server import build_server

    build_server().run(
        transport="http",
        host="127.0.0.1",
        port=port,
        json_response=True,
        show_banner=False,
        log_level="WARNING",
    )


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in LIBS:
        sys.exit(f"usage: python -m benchmarks.capacity.server {{{','.join(LIBS)}}} PORT MAXCONN")
    lib, port, max_connections = argv[0], int(argv[1]), int(argv[2])
    if lib == "mcptrio":
        serve_mcptrio(port, max_connections)
    elif lib == "sdk":
        serve_sdk(port)
    else:
        serve_fastmcp(port)


if __name__ == "__main__":
    main(sys.argv[1:])
