"""What a trivial task costs: ``python -m benchmarks.task_cost``.

One task is a task-augmented ``tools/call`` of ``add(1, 2)`` (the server answers with the
task), then ``tasks/get`` until the task is terminal, then ``tasks/result`` (every result
checked): create + poll-to-completion, as a requestor does it. The client is mcptrio's in every
cell, so the cells differ only by the server:

- ``mcptrio-stdio``: mcptrio's server (``benchmarks.servers.mcptrio_task_server``, ``add`` with
  ``task="required"``) in a process of its own over stdio;
- ``ts-sdk-stdio``: the official TypeScript SDK's server (``benchmarks/servers/ts_task_server.mjs``,
  ``registerToolTask`` with its ``InMemoryTaskStore``, as server-everything builds its task
  tools) over stdio, on interop/'s Node 22;
- ``mcptrio-in-memory``: mcptrio's server in this process (no process boundary: the runtime's
  own cost).

The official Python SDK (``mcp`` 2.3.0) has no server-side tasks (its server never answers a
``CreateTaskResult``), so it has no task cell. For scale, the same ``add`` called plainly (one
``tools/call``, no task) is measured against mcptrio's and the Python SDK's benchmark servers
(``plain-mcptrio-stdio``, ``plain-sdk-stdio``).

Cells are measured in rounds, the order reversed every round, one caller at a time (x1) and 16
callers at once (x16); each cell's median rate over the rounds is reported. Nothing is asserted.

    python -m benchmarks.task_cost [--duration S] [--rounds N] [--cells CELL ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.types import TextContent
from mcptrio.transports.memory import memory_transport_pair

from . import REPO_ROOT

NODE = REPO_ROOT / "interop" / "node_modules" / ".bin" / "node"
TS_SERVER = REPO_ROOT / "benchmarks" / "servers" / "ts_task_server.mjs"
RESULTS = Path(__file__).resolve().parent / "results" / "task_cost.json"
REV = Revisions(supported=("2025-11-25",))

CELLS = (
    "mcptrio-in-memory",
    "mcptrio-stdio",
    "ts-sdk-stdio",
    "plain-mcptrio-stdio",
    "plain-sdk-stdio",
)
LOADS = {"x1": 1, "x16": 16}


def _target(cell: str) -> list[str] | None:
    python = sys.executable
    return {
        "mcptrio-stdio": [python, "-m", "benchmarks.servers.mcptrio_task_server"],
        "ts-sdk-stdio": [str(NODE), str(TS_SERVER)],
        "plain-mcptrio-stdio": [python, "-m", "benchmarks.servers.mcptrio_server"],
        "plain-sdk-stdio": [python, "-m", "benchmarks.servers.sdk_server"],
    }.get(cell)


@asynccontextmanager
async def _client(cell: str) -> AsyncIterator[mcptrio.Client]:
    if cell == "mcptrio-in-memory":
        from .servers.mcptrio_task_server import build_server

        client_end, server_end = memory_transport_pair()
        async with trio.open_nursery() as nursery:
            await nursery.start(build_server().serve_session, server_end)
            async with mcptrio.open_client(client_end, revisions=REV) as client:
                yield client
            nursery.cancel_scope.cancel()
        return
    target = _target(cell)
    assert target is not None
    async with mcptrio.open_client(target, revisions=REV) as client:
        yield client


async def _one_task(client: mcptrio.Client) -> None:
    handle = await client.call_tool("add", {"a": 1, "b": 2}, as_task=True)
    task = handle.task
    while task.status not in ("completed", "failed", "cancelled"):
        task = await handle.status()
    result = await handle.result()
    _check(result.content)


async def _one_call(client: mcptrio.Client) -> None:
    result = await client.call_tool("add", {"a": 1, "b": 2}, validate_output=False)
    _check(result.content)


def _check(content: list[Any]) -> None:
    (block,) = content
    if not (isinstance(block, TextContent) and block.text == "3"):
        raise AssertionError(f"unexpected result {content!r}")


async def _measure(cell: str, callers: int, duration: float) -> float:
    """Tasks (or calls) per second over ``duration`` seconds, ``callers`` at once."""
    one: Callable[[mcptrio.Client], Awaitable[None]] = (
        _one_call if cell.startswith("plain-") else _one_task
    )
    async with _client(cell) as client:
        for _ in range(20):  # warm-up
            await one(client)
        done = 0
        deadline = time.perf_counter() + duration

        async def caller() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await one(client)
                done += 1

        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for _ in range(callers):
                nursery.start_soon(caller)
        return done / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per run (2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, order reversed each (3)")
    parser.add_argument("--cells", nargs="+", choices=CELLS, default=list(CELLS))
    parser.add_argument("--loads", nargs="+", choices=list(LOADS), default=list(LOADS))
    args = parser.parse_args(argv)
    cells = [c for c in args.cells if c != "ts-sdk-stdio" or NODE.exists()]
    rates: dict[tuple[str, str], list[float]] = {}
    for round_no in range(args.rounds):
        order = [(c, load) for c in cells for load in args.loads]
        if round_no % 2:
            order.reverse()
        for cell, load in order:
            rate = trio.run(_measure, cell, LOADS[load], args.duration)
            rates.setdefault((cell, load), []).append(rate)
            print(f"round {round_no + 1} {cell:22} {load:4} {rate:9.1f} /s", file=sys.stderr)
    medians = {key: statistics.median(values) for key, values in rates.items()}
    print("| cell | load | tasks (or plain calls) per second, median | vs ts-sdk-stdio |")
    print("|---|---|---|---|")
    for (cell, load), rate in medians.items():
        ts = medians.get(("ts-sdk-stdio", load))
        ratio = f"{rate / ts:.2f}x" if ts else "-"
        print(f"| {cell} | {load} | {rate:,.1f} | {ratio} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                f"{cell} {load}": {"median": m, "runs": rates[(cell, load)]}
                for (cell, load), m in medians.items()
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
