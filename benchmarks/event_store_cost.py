"""What an SSE event costs in the Redis event store, against the in-memory one (a part of
``python -m benchmarks --scale-out``, and on its own):

    python -m benchmarks.event_store_cost                    # starts a redis-server of its own
    python -m benchmarks.event_store_cost redis://127.0.0.1:6379/0

For each store: ``events`` events of 1 KiB stored one after the other on one stream (what one
SSE stream does: each store is awaited before the event is written), then replayed after the
first (what a resuming client costs), then stored by ``streams`` concurrent streams (what a
worker with many open streams does). Prints microseconds per event. The Redis store runs a
Lua script per store (one round trip on loopback) and one per replay.
"""

from __future__ import annotations

import sys
import time

import trio

from mcptrio.stores.event_store import EventStore, InMemoryEventStore
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_event_store import RedisEventStore

from .redis_server import own_redis

EVENTS = 4000
STREAMS = 64
MESSAGE = b"x" * 1024


async def measure(store: EventStore) -> dict[str, float]:
    """Microseconds per event: stored on one stream, replayed, stored by many streams at once."""
    start = time.perf_counter()
    for _ in range(EVENTS):
        await store.store("bench", "1", MESSAGE)
    stored = time.perf_counter() - start
    start = time.perf_counter()
    replay = await store.replay_after("bench", "1-1")
    replayed = time.perf_counter() - start
    if len(replay.events) != EVENTS - 1:
        raise RuntimeError(f"replayed {len(replay.events)} events, not {EVENTS - 1}")
    await store.forget_session("bench")

    async def stream(index: int) -> None:
        for _ in range(EVENTS // STREAMS):
            await store.store(f"many{index}", "1", MESSAGE)

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for index in range(STREAMS):
            nursery.start_soon(stream, index)
    concurrent = time.perf_counter() - start
    for index in range(STREAMS):
        await store.forget_session(f"many{index}")
    return {
        "store, one stream": stored / EVENTS * 1e6,
        "replay": replayed / (EVENTS - 1) * 1e6,
        f"store, {STREAMS} streams at once": concurrent / EVENTS * 1e6,
    }


async def measure_both(url: str) -> dict[str, dict[str, float]]:
    """The figures of the in-memory store and of the Redis one at ``url``."""
    memory = await measure(InMemoryEventStore())
    async with open_redis(url) as redis:
        red = await measure(RedisEventStore(redis, prefix="bench:"))
    return {"memory": memory, "redis": red}


def format_markdown(figures: dict[str, dict[str, float]]) -> str:
    lines = [
        f"SSE event store, {len(MESSAGE)} B events, microseconds per event:",
        "",
        "| | in memory | Redis | Redis / memory |",
        "|---|---|---|---|",
    ]
    for label, memory in figures["memory"].items():
        red = figures["redis"][label]
        lines.append(f"| {label} | {memory:,.1f} | {red:,.1f} | {red / memory:,.0f}x |")
    return "\n".join(lines) + "\n"


def main(url: str | None) -> None:
    if url is not None:
        print(format_markdown(trio.run(measure_both, url)), end="")
        return
    with own_redis() as own:
        print(format_markdown(trio.run(measure_both, own)), end="")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
