"""A gateway from ``gateway.json``: server-everything (Node, stdio), an official-SDK server
(stdio) and an mcptrio server (``notes``, Streamable HTTP), fronted as one server.

    python examples/multiplexed/gateway_demo.py [--port 8000] [--notes-port 8001]

starts the ``notes`` server on ``--notes-port``, then the gateway, served over Streamable HTTP at
``http://127.0.0.1:8000/mcp``, until Ctrl-C. Tools are named ``everything_echo``, ``sdk_add``,
``notes_...`` (``add_note`` is renamed ``remember``, and server-everything's ``toggle-*`` tools
are left out: see ``gateway.json``). With the ``notes`` server already running elsewhere, the
gateway alone is ``python -m mcptrio.gateway examples/multiplexed/gateway.json``.

Run from a checkout: ``gateway.json`` finds Node 22 and server-everything in ``interop/``
(``npm ci --prefix interop``); elsewhere, use ``"command": "npx", "args": ["-y",
"@modelcontextprotocol/server-everything"]``. ``python`` in it must have ``mcp`` installed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from pathlib import Path

import trio
from servers import notes

from mcptrio.client import http
from mcptrio.gateway import Gateway, load_config, serve_gateway

HERE = Path(__file__).parent


async def main(port: int, notes_port: int) -> None:
    async with trio.open_nursery() as nursery:
        notes_base = await nursery.start(notes.serve_http, "127.0.0.1", notes_port)
        upstreams = load_config(HERE / "gateway.json")
        # The notes server's URL is the one it was given (another port than the file's with
        # --notes-port).
        upstreams = [
            dataclasses.replace(u, target=http(f"{notes_base}/mcp")) if u.name == "notes" else u
            for u in upstreams
        ]
        gateway = Gateway("demo-gateway", upstreams=upstreams)
        url = await nursery.start(
            lambda task_status: serve_gateway(gateway, port=port, task_status=task_status)
        )
        print(f"gateway at {url}", flush=True)
        for name, upstream in gateway.upstreams.items():
            print(f"  {name}: {upstream.state}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--notes-port", type=int, default=8001)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main, args.port, args.notes_port)
