"""One mcptrio cell, run under ``trio.run``: the decorator server or the bare session.

Both variants use the same client (``mcptrio.open_client``) and the same ``add`` tool, so the
difference between their rates is the server's decorator layer alone:

- ``lowlevel=False``: ``mcptrio.Server`` with ``@server.tool()`` (:mod:`.servers.mcptrio_server`);
- ``lowlevel=True``: a ``Session`` with a hand-written request handler
  (:mod:`.servers.mcptrio_lowlevel_server`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import trio

import mcptrio
from mcptrio.transports.memory import memory_transport_pair

from ._cpu import server_cpu_reader
from ._window import ARGS, Window, check_text
from .servers import mcptrio_lowlevel_server
from .servers.mcptrio_server import build_server

#: The stdio server commands; the cell runs with the repository root as cwd and on PYTHONPATH.
STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_server"]
LOWLEVEL_STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_lowlevel_server"]


@asynccontextmanager
async def open_lowlevel_in_memory() -> AsyncIterator[mcptrio.Client]:
    """A client of the bare low-level session, which runs in this block's nursery."""
    client_end, server_end = memory_transport_pair()
    session = mcptrio_lowlevel_server.build_session(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(session.run)
        try:
            async with mcptrio.open_client(client_end) as client:
                yield client
        finally:
            nursery.cancel_scope.cancel()


def _open(workload: str, lowlevel: bool) -> AbstractAsyncContextManager[mcptrio.Client]:
    if workload == "in-memory":
        return open_lowlevel_in_memory() if lowlevel else mcptrio.open_client(build_server())
    return mcptrio.open_client(LOWLEVEL_STDIO_COMMAND if lowlevel else STDIO_COMMAND)


async def _measure(
    workload: str, callers: int, warmup: float, duration: float, lowlevel: bool
) -> dict[str, Any]:
    t0 = time.perf_counter()
    async with _open(workload, lowlevel) as client:
        first = await client.call_tool("add", ARGS)
        check_text(getattr(first.content[0], "text", None))
        connect_s = time.perf_counter() - t0
        server_cpu = server_cpu_reader(client) if workload == "stdio" else None
        window = Window(server_cpu)

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
    result = window.result(connect_s)
    # In memory the server runs in this process, so its CPU time is in the window's.
    result["cpu_includes_server"] = workload == "in-memory" or server_cpu is not None
    return result


def run(
    workload: str, callers: int, warmup: float, duration: float, *, lowlevel: bool = False
) -> dict[str, Any]:
    result = trio.run(_measure, workload, callers, warmup, duration, lowlevel)
    result["versions"] = {
        "mcptrio": getattr(mcptrio, "__version__", "unknown"),
        "trio": trio.__version__,
    }
    result["server"] = "Session + hand-written handler" if lowlevel else "Server + @tool"
    return result
