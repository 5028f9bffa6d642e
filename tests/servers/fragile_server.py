"""A stdio server for end-to-end tests: one tool prints to stdout, one kills the process."""

from __future__ import annotations

import os
import sys

import trio

import mcptrio

server = mcptrio.Server("fragile")


@server.tool()
async def chatty(text: str) -> str:
    print("this print must not reach the protocol stream")
    print("a line for stderr", file=sys.stderr, flush=True)
    return text


@server.tool()
async def die(after: float = 0.05) -> str:
    await trio.sleep(after)
    os._exit(3)


@server.tool()
async def hang() -> str:
    await trio.sleep_forever()
    return "never"


if __name__ == "__main__":
    server.run_stdio()
