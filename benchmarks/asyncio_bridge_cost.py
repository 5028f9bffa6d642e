"""What a tool written against asyncio costs per call, by bridge: ``python -m
benchmarks.asyncio_bridge_cost``.

One server, one in-memory client, the same one-suspension tool four ways:

- ``trio``: an ``async def`` awaiting ``trio.lowlevel.checkpoint()``, in the request's task
  (the baseline);
- ``loop-thread``: an ``async def`` awaiting ``asyncio.sleep(0)``, marked
  ``mcptrio.asyncio_handler`` (the bridge mcptrio ships: an asyncio loop in a thread);
- ``trio-asyncio``: the same asyncio coroutine called from a Trio tool through
  ``trio_asyncio.aio_as_trio``, the server served inside ``trio_asyncio.open_loop()`` (the
  asyncio loop runs in Trio's own thread);
- ``loop-thread.ctx`` / ``trio-asyncio.ctx``: the same, awaiting ``ctx.report_progress`` from
  the asyncio side once per call (through the bridge's context, or ``trio_as_aio``).

Before measuring, each bridge runs a tool that fetches from a local aiohttp server and one that
queries aiosqlite (a check that the bridge works with them, not a figure). Then the variants are
measured in alternating slices (``--slice`` seconds each, the order rotating every round), with
1 and 32 concurrent callers, so that load that changes more slowly than a slice falls on all
alike. Prints, per variant and load, the median wall time per call over the slices and its
difference from ``trio``; writes ``benchmarks/results/asyncio_bridge_cost.json``.

    python -m benchmarks.asyncio_bridge_cost [--rounds N] [--slice S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import aiosqlite
import trio
import trio_asyncio
from aiohttp import web

import mcptrio
from mcptrio.server.context import Context

RESULTS = Path(__file__).resolve().parent / "results" / "asyncio_bridge_cost.json"
VARIANTS = ("trio", "loop-thread", "trio-asyncio", "loop-thread.ctx", "trio-asyncio.ctx")
LOADS = (1, 32)


async def aio_add(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


async def aio_add_reporting(ctx: Any, a: int, b: int) -> int:
    await asyncio.sleep(0)
    await ctx.report_progress(1, 1)
    return a + b


async def aio_fetch(url: str) -> str:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return await response.text()


async def aio_count(path: str) -> int:
    async with aiosqlite.connect(path) as db:
        await db.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        await db.execute("INSERT INTO t VALUES (1)")
        async with db.execute("SELECT count(*) FROM t") as cursor:
            row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


def build_server() -> mcptrio.Server:
    server = mcptrio.Server("asyncio-bridges")

    @server.tool(name="trio")
    async def add_trio(a: int, b: int) -> int:
        await trio.lowlevel.checkpoint()
        return a + b

    server.tool(name="loop-thread")(mcptrio.asyncio_handler(aio_add))

    @server.tool(name="loop-thread.ctx")
    @mcptrio.asyncio_handler
    async def add_loop_ctx(ctx: Context, a: int, b: int) -> int:
        return await aio_add_reporting(ctx, a, b)

    @server.tool(name="trio-asyncio")
    async def add_trio_asyncio(a: int, b: int) -> int:
        value: int = await trio_asyncio.aio_as_trio(aio_add)(a, b)
        return value

    @server.tool(name="trio-asyncio.ctx")
    async def add_trio_asyncio_ctx(ctx: Context, a: int, b: int) -> int:
        class Reporting:
            report_progress = staticmethod(trio_asyncio.trio_as_aio(ctx.report_progress))

        value: int = await trio_asyncio.aio_as_trio(aio_add_reporting)(Reporting(), a, b)
        return value

    server.tool(name="loop-thread-fetch")(mcptrio.asyncio_handler(aio_fetch))
    server.tool(name="loop-thread-sqlite")(mcptrio.asyncio_handler(aio_count))

    @server.tool(name="trio-asyncio-fetch")
    async def fetch_trio_asyncio(url: str) -> str:
        text: str = await trio_asyncio.aio_as_trio(aio_fetch)(url)
        return text

    @server.tool(name="trio-asyncio-sqlite")
    async def count_trio_asyncio(path: str) -> int:
        count: int = await trio_asyncio.aio_as_trio(aio_count)(path)
        return count

    return server


async def serve_hello(task_status: trio.TaskStatus[str]) -> None:
    """A local aiohttp server, on an asyncio loop of its own (in a thread), until cancelled."""
    token = trio.lowlevel.current_trio_token()
    url: list[str] = []
    stop: list[Callable[[], None]] = []

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/", lambda _: web.Response(text="hello"))
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        stop.append(lambda: loop.call_soon_threadsafe(done.set))
        url.append(f"http://127.0.0.1:{port}/")
        token.run_sync_soon(started.set)
        await done.wait()
        await runner.cleanup()

    started = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, asyncio.run, main())
        await started.wait()
        task_status.started(url[0])
        try:
            await trio.sleep_forever()
        finally:
            stop[0]()


async def check_libraries(client: mcptrio.Client, url: str, folder: str) -> None:
    for bridge in ("loop-thread", "trio-asyncio"):
        fetched = await client.call_tool(f"{bridge}-fetch", {"url": url})
        counted = await client.call_tool(f"{bridge}-sqlite", {"path": f"{folder}/{bridge}.db"})
        texts = [getattr(block, "text", None) for block in (*fetched.content, *counted.content)]
        if texts != ["hello", "1"] or fetched.is_error or counted.is_error:
            raise RuntimeError(f"{bridge}: aiohttp and aiosqlite tools answered {texts}")
        print(f"{bridge}: aiohttp and aiosqlite work")


async def timed_slice(call: Callable[[], Awaitable[Any]], callers: int, seconds: float) -> float:
    """Seconds per call, wall time, over a slice of ``seconds`` with ``callers`` at once."""
    counts = [0] * callers
    deadline = time.perf_counter() + seconds

    async def caller(i: int) -> None:
        while time.perf_counter() < deadline:
            await call()
            counts[i] += 1

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for i in range(callers):
            nursery.start_soon(caller, i)
    return (time.perf_counter() - start) / max(1, sum(counts))


async def measure(rounds: int, seconds: float) -> dict[str, dict[int, list[float]]]:
    server = build_server()
    seen: dict[str, dict[int, list[float]]] = {v: {n: [] for n in LOADS} for v in VARIANTS}
    with tempfile.TemporaryDirectory() as folder:
        async with trio_asyncio.open_loop(), trio.open_nursery() as nursery:
            url = await nursery.start(serve_hello)
            async with mcptrio.open_client(server) as client:
                await check_libraries(client, url, folder)
                calls = {
                    v: (lambda v=v: client.call_tool(v, {"a": 1, "b": 2}, on_progress=ignore))
                    for v in VARIANTS
                }
                for call in calls.values():
                    await timed_slice(call, 1, seconds / 2)  # warm up (and start the loop)
                for i in range(rounds):
                    order = VARIANTS[i % len(VARIANTS) :] + VARIANTS[: i % len(VARIANTS)]
                    for callers in LOADS:
                        for variant in order:
                            per_call = await timed_slice(calls[variant], callers, seconds)
                            seen[variant][callers].append(per_call)
            nursery.cancel_scope.cancel()
    return seen


def ignore(progress: float, total: float | None, message: str | None) -> None:
    """The progress callback (the calls ask for progress, so the ``.ctx`` tools report it)."""


def report(seen: dict[str, dict[int, list[float]]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    print(f"{'variant':<18} {'callers':>7} {'us/call':>9} {'vs trio':>9}")
    for callers in LOADS:
        base = statistics.median(seen["trio"][callers]) * 1e6
        for variant in VARIANTS:
            median = statistics.median(seen[variant][callers]) * 1e6
            table.setdefault(variant, {})[str(callers)] = {
                "us_per_call": round(median, 1),
                "us_over_trio": round(median - base, 1),
            }
            print(f"{variant:<18} {callers:>7} {median:>9.1f} {median - base:>+9.1f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--slice", type=float, default=1.0, help="seconds per slice")
    options = parser.parse_args()
    seen = trio.run(measure, options.rounds, options.slice)
    table = report(seen)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(table, indent=2) + "\n")


if __name__ == "__main__":
    main()
