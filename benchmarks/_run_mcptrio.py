"""One mcptrio cell, run under ``trio.run``."""

from __future__ import annotations

import sys
import time
from typing import Any

import trio

import mcptrio

from ._window import ARGS, Window, check_text
from .servers.mcptrio_server import build_server

#: The stdio server command; the cell runs with the repository root as cwd and on PYTHONPATH.
STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_server"]


async def _measure(workload: str, callers: int, warmup: float, duration: float) -> dict[str, Any]:
    target: Any = build_server() if workload == "in-memory" else STDIO_COMMAND
    t0 = time.perf_counter()
    async with mcptrio.open_client(target) as client:
        first = await client.call_tool("add", ARGS)
        check_text(getattr(first.content[0], "text", None))
        connect_s = time.perf_counter() - t0
        window = Window()

        async def caller() -> None:
            while not window.stopped:
                await client.call_tool("add", ARGS)
                if window.measuring:
                    window.count += 1

        async with trio.open_nursery() as nursery:
            for _ in range(callers):
                nursery.start_soon(caller)
            await trio.sleep(warmup)
            window.open()
            await trio.sleep(duration)
            window.close()
    return window.result(connect_s)


def run(workload: str, callers: int, warmup: float, duration: float) -> dict[str, Any]:
    result = trio.run(_measure, workload, callers, warmup, duration)
    result["versions"] = {
        "mcptrio": getattr(mcptrio, "__version__", "unknown"),
        "trio": trio.__version__,
    }
    return result
