"""The servers of the HTTP benchmark, one per process: ``python -m benchmarks.http.server``.

::

    python -m benchmarks.http.server <server> <mode> <port>

``server`` is one of :data:`SERVERS`; ``mode`` is ``json`` (one JSON body per answer) or ``sse``
(every answer streamed as an SSE event). Each serves the benchmark's ``add`` tool (the same
decorated servers as the stdio benchmark, ``benchmarks/servers/``) over Streamable HTTP at
``http://127.0.0.1:<port>/mcp``, with every other setting at its default, and runs until it is
killed. Nothing is printed unless it fails.
"""

from __future__ import annotations

import logging
import sys
from functools import partial

#: The servers, by the name the report uses.
SERVERS = ("mcptrio-h11", "mcptrio-httptools", "mcptrio-hypercorn", "sdk-uvicorn")
MODES = ("json", "sse")


def serve_mcptrio(server: str, mode: str, port: int) -> None:
    import trio

    from benchmarks.servers.mcptrio_server import build_server

    mcp = build_server()
    # Hypercorn logs its start at INFO (and sets its logger's level itself): warnings only.
    logging.getLogger("hypercorn.error").addFilter(lambda record: record.levelno >= logging.WARNING)
    parser = {"mcptrio-h11": "h11", "mcptrio-httptools": "httptools"}.get(server, "auto")
    front_end = "hypercorn" if server == "mcptrio-hypercorn" else "builtin"
    trio.run(
        partial(
            mcp.serve_http,
            "127.0.0.1",
            port,
            parser=parser,  # type: ignore[arg-type]
            front_end=front_end,  # type: ignore[arg-type]
            json_response=mode == "json",
        )
    )


def serve_sdk(mode: str, port: int) -> None:
    import uvicorn

    from benchmarks.servers.sdk_server import build_server

    # MCPServer.streamable_http_app() is the Starlette app run_streamable_http_async() serves;
    # uvicorn with its defaults (loop and HTTP parser "auto"), one worker, as that method does.
    app = build_server().streamable_http_app(json_response=mode == "json")
    # MCPServer configures logging at INFO (one line per session); warnings only, as uvicorn's.
    logging.getLogger().setLevel(logging.WARNING)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", workers=1)
    uvicorn.Server(config).run()


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in SERVERS or argv[1] not in MODES:
        sys.exit(f"usage: python -m benchmarks.http.server {{{','.join(SERVERS)}}} json|sse PORT")
    server, mode, port = argv[0], argv[1], int(argv[2])
    if server == "sdk-uvicorn":
        serve_sdk(mode, port)
    else:
        serve_mcptrio(server, mode, port)


if __name__ == "__main__":
    main(sys.argv[1:])
