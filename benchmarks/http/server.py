"""The HTTP benchmark's server processes: ``python -m benchmarks.http.server <lib> <mode> <port>``.

``lib`` is one of :data:`LIBS`; ``mode`` is ``json`` (one JSON body per answer) or ``sse`` (every
answer streamed as one SSE event). Each serves its library's benchmark server
(``benchmarks/servers/<lib>_server.py``, ``build_server()``, with every fixture) over Streamable
HTTP at ``http://127.0.0.1:<port>/mcp`` the way that library's users run it, with every other
setting at its default, until it is stopped. Nothing is printed unless something fails.

- mcptrio: ``Server.serve_http`` under ``trio.run``: the built-in front end, parser ``auto``
  (httptools when installed).
- sdk: ``MCPServer.streamable_http_app()`` on uvicorn, one worker, loop and HTTP parser
  ``auto``, as ``MCPServer.run_streamable_http_async()`` serves it.
- fastmcp: ``FastMCP.run(transport="http", ...)``, which builds its Starlette app and serves it
  with uvicorn under ``anyio.run``.
- floor: no library, the least an HTTP server can do: ``benchmarks/http/floor_server.py`` (a
  Trio + httptools server answering each request with the workload's fixed answer).
"""

from __future__ import annotations

import logging
import sys
from functools import partial

LIBS = ("mcptrio", "sdk", "fastmcp", "floor")
MODES = ("json", "sse")
PATH = "/mcp"


def serve_mcptrio(json_response: bool, port: int) -> None:
    import trio

    from benchmarks.servers.mcptrio_server import build_server

    server = build_server()
    trio.run(partial(server.serve_http, "127.0.0.1", port, json_response=json_response))


def serve_sdk(json_response: bool, port: int) -> None:
    import uvicorn

    from benchmarks.servers.sdk_server import build_server

    app = build_server().streamable_http_app(json_response=json_response)
    # MCPServer configures logging at INFO (a line per session): warnings only, as uvicorn's.
    logging.getLogger().setLevel(logging.WARNING)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", workers=1)
    uvicorn.Server(config).run()


def serve_fastmcp(json_response: bool, port: int) -> None:
    from benchmarks.servers.fastmcp_server import build_server

    # FastMCP logs at INFO through its own handler (a line per request and session): warnings
    # only, and no start-up banner, so that the benchmark measures serving, not logging.
    build_server().run(
        transport="http",
        host="127.0.0.1",
        port=port,
        path=PATH,
        json_response=json_response,
        show_banner=False,
        log_level="WARNING",
    )


def serve_floor(json_response: bool, port: int) -> None:
    from .floor_server import run

    run(json_response, port)


SERVERS = {
    "mcptrio": serve_mcptrio,
    "sdk": serve_sdk,
    "fastmcp": serve_fastmcp,
    "floor": serve_floor,
}


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in LIBS or argv[1] not in MODES:
        sys.exit(f"usage: python -m benchmarks.http.server {{{','.join(LIBS)}}} json|sse PORT")
    lib, json_response, port = argv[0], argv[1] == "json", int(argv[2])
    SERVERS[lib](json_response, port)


if __name__ == "__main__":
    main(sys.argv[1:])
