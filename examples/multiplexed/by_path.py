"""Several MCP servers on one endpoint, one path each.

    python examples/multiplexed/by_path.py [--port 8000]

serves ``weather`` at ``http://127.0.0.1:8000/weather/mcp`` and ``notes`` at
``http://127.0.0.1:8000/notes/mcp`` (Streamable HTTP, with WebSocket and the legacy HTTP+SSE
endpoints below each prefix too), until Ctrl-C. Each server keeps its own sessions; a client
connects to the one whose path it names. ``--port 0`` picks a free port.
"""

from __future__ import annotations

import argparse
import contextlib

import trio
from servers import notes, weather

from mcptrio.transports.http.serve import serve_http


async def main(port: int) -> None:
    async with trio.open_nursery() as nursery:
        base = await nursery.start(
            serve_http, {"/weather": weather, "/notes": notes}, "127.0.0.1", port
        )
        print(f"weather at {base}/weather/mcp", flush=True)
        print(f"notes at {base}/notes/mcp", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main, parser.parse_args().port)
