"""A server with a lifespan: a resource opened before it serves, shared by every handler, and
closed after it stops.

Here the resource is a small counter store with a background task that saves it every so often
(the task lives in the lifespan's own nursery, so it runs exactly as long as the serving). Run it
(``python examples/lifespan.py``); ``docs/how-to/share-resources-with-a-lifespan.md`` explains it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

import mcptrio


class Counters:
    """The shared resource: counts by name, saved by a background task."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.saves = 0
        self.closed = False

    def bump(self, name: str) -> int:
        if self.closed:
            raise RuntimeError("the store is closed")
        self.counts[name] = self.counts.get(name, 0) + 1
        return self.counts[name]

    async def save_every(self, seconds: float) -> None:
        while True:
            await trio.sleep(seconds)
            self.saves += 1


@asynccontextmanager
async def lifespan(server: mcptrio.Server) -> AsyncIterator[Counters]:
    store = Counters()
    print(f"{server.info.name}: store opened")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.save_every, 60.0)
        try:
            yield store
        finally:
            nursery.cancel_scope.cancel()
            store.closed = True
            print(f"{server.info.name}: store closed, counts {store.counts}")


def build_server() -> mcptrio.Server:
    server = mcptrio.Server("counter", lifespan=lifespan)

    @server.tool
    async def bump(name: str, ctx: mcptrio.Context) -> int:
        """Add one to a counter; returns its new value."""
        store: Counters = ctx.lifespan
        return store.bump(name)

    return server


async def main() -> None:
    server = build_server()
    # The in-memory client serves the server in its own nursery: the lifespan opens first.
    async with mcptrio.open_client(server) as client:
        for _ in range(2):
            result = await client.call_tool("bump", {"name": "visits"})
            print("visits:", result.structured_content)
    print("served and stopped")


if __name__ == "__main__":
    trio.run(main)
