"""A server whose ``charge`` tool has a side effect that must not happen twice: it appends
the call's name to the ledger file ``LEDGER_FILE``, between two halves of ``delay`` seconds (so
that a worker killed during a call may or may not have written it).

``touch`` tells every subscriber of ``ledger://entries`` that it changed: whether a session
kept its subscription through the death of the worker that took it.
"""

from __future__ import annotations

import os

import trio

import mcptrio

server = mcptrio.Server("ledger")
LEDGER = os.environ.get("LEDGER_FILE", os.devnull)


@server.tool()
async def charge(call: str, delay: float = 0.2) -> str:
    """Write ``call`` to the ledger once, taking ``delay`` seconds in all."""
    await trio.sleep(delay / 2)
    # One write of one line, appended: lines from concurrent workers never interleave.
    descriptor = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, f"{call} {os.getpid()}\n".encode())
    finally:
        os.close(descriptor)
    await trio.sleep(delay / 2)
    return f"charged {call}"


@server.resource("ledger://entries")
def entries() -> str:
    """The ledger's lines."""
    with open(LEDGER, encoding="utf-8") as ledger:
        return ledger.read()


@server.tool()
async def touch() -> str:
    """Tell the subscribers of ``ledger://entries`` that it changed."""
    return f"told {server.notify_resource_updated('ledger://entries')}"
