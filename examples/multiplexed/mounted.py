"""Several MCP servers merged into one by mounting.

    python examples/multiplexed/mounted.py [--port 8000]

serves one server, ``assistant``, at ``http://127.0.0.1:8000/mcp``: its own ``ping`` tool, and
the ``weather`` and ``notes`` servers mounted under the namespaces ``weather`` and ``notes``
(tools ``weather_forecast``, ``notes_add_note``, prompt ``notes_summarize``; resource URIs kept
as they are). A client sees one server; list changes and resource updates of the mounted
servers reach it. ``--port 0`` picks a free port.
"""

from __future__ import annotations

import argparse
import contextlib

import trio
from servers import notes, weather

import mcptrio

assistant = mcptrio.Server("assistant")


@assistant.tool
def ping() -> str:
    """Check that the assistant answers."""
    return "pong"


assistant.mount(weather, namespace="weather")
assistant.mount(notes, namespace="notes")


async def main(port: int) -> None:
    async with trio.open_nursery() as nursery:
        base = await nursery.start(assistant.serve_http, "127.0.0.1", port)
        print(f"assistant at {base}/mcp", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main, parser.parse_args().port)
