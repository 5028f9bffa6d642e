"""What an SSE event costs in the Redis event store, against the in-memory one.

    python scripts/event_store_cost.py                       # starts a redis-server of its own
    python scripts/event_store_cost.py redis://127.0.0.1:6379/0

For each store: ``events`` events of 1 KiB stored one after the other on one stream (what one
SSE stream does: each store is awaited before the event is written), then replayed after the
first (what a resuming client costs), then stored by ``streams`` concurrent streams (what a
worker with many open streams does). Prints microseconds per event. The Redis store runs a
Lua script per store (one round trip on loopback) and one per replay.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from typing import Any

import trio

from mcptrio.stores.event_store import EventStore, InMemoryEventStore
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_event_store import RedisEventStore

EVENTS = 4000
STREAMS = 64
MESSAGE = b"x" * 1024


async def measure(name: str, store: EventStore) -> dict[str, float]:
    start = time.perf_counter()
    for _ in range(EVENTS):
        await store.store("bench", "1", MESSAGE)
    stored = time.perf_counter() - start
    start = time.perf_counter()
    replay = await store.replay_after("bench", "1-1")
    replayed = time.perf_counter() - start
    assert len(replay.events) == EVENTS - 1
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
    figures = {
        "store, one stream (us/event)": stored / EVENTS * 1e6,
        "replay (us/event)": replayed / (EVENTS - 1) * 1e6,
        f"store, {STREAMS} streams at once (us/event)": concurrent / EVENTS * 1e6,
    }
    for label, value in figures.items():
        print(f"{name:>8}  {label:<40} {value:8.1f}")
    return figures


async def main(url: str) -> None:
    memory = await measure("memory", InMemoryEventStore())
    async with open_redis(url) as redis:
        red = await measure("redis", RedisEventStore(redis, prefix="bench:"))
    for label in memory:
        print(f"{'ratio':>8}  {label:<40} {red[label] / memory[label]:8.0f}x")


def _own_redis() -> tuple[str, Any]:
    executable = shutil.which("redis-server") or shutil.which("valkey-server")
    if executable is None:
        sys.exit("no redis-server: give a redis:// URL")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.3)
    return f"redis://127.0.0.1:{port}/0", process


if __name__ == "__main__":
    if len(sys.argv) > 1:
        trio.run(main, sys.argv[1])
    else:
        redis_url, server = _own_redis()
        try:
            trio.run(main, redis_url)
        finally:
            server.terminate()
            server.wait()
