"""``python -m mcptrio.gateway gateway.json``: serve a gateway from its configuration file.

Over Streamable HTTP by default (``--host``, ``--port``, ``--path``; the endpoint's URL is
written to stderr once every upstream has been tried), or over this process's stdin and stdout
with ``--stdio``. Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from functools import partial

import trio

from .config import ConfigError, load_config
from .gateway import Gateway
from .serve import serve_gateway

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcptrio.gateway", description="Serve an MCP gateway from its config."
    )
    parser.add_argument("config", help='a JSON file with an "mcpServers" object')
    parser.add_argument("--stdio", action="store_true", help="serve on stdin/stdout")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--name", default="mcptrio-gateway", help="the gateway's serverInfo name")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")

    try:
        gateway = Gateway(args.name, upstreams=load_config(args.config))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            where = await nursery.start(
                partial(
                    serve_gateway,
                    gateway,
                    transport="stdio" if args.stdio else "http",
                    host=args.host,
                    port=args.port,
                    path=args.path,
                )
            )
            print(f"mcptrio gateway serving at {where}", file=sys.stderr, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        trio.run(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
