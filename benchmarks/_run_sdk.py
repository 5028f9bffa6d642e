"""One official-SDK cell, run under ``anyio.run`` with its default (asyncio) backend."""

from __future__ import annotations

import os
import sys
import time
from importlib.metadata import version
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from . import REPO_ROOT
from ._window import ARGS, Window, check_text
from .servers.sdk_server import build_server


def _stdio_params() -> StdioServerParameters:
    # stdio_client passes only a short allow-list of the environment, so hand PYTHONPATH on.
    pythonpath = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "benchmarks.servers.sdk_server"],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": pythonpath},
    )


async def _measure(
    workload: str, callers: int, warmup: float, duration: float, mode: str
) -> dict[str, Any]:
    target: Any = build_server() if workload == "in-memory" else _stdio_params()
    t0 = time.perf_counter()
    async with Client(target, mode=mode) as client:
        first = await client.call_tool("add", ARGS)
        check_text(getattr(first.content[0], "text", None))
        connect_s = time.perf_counter() - t0
        window = Window()

        async def caller() -> None:
            while not window.stopped:
                await client.call_tool("add", ARGS)
                if window.measuring:
                    window.count += 1

        async with anyio.create_task_group() as tg:
            for _ in range(callers):
                tg.start_soon(caller)
            await anyio.sleep(warmup)
            window.open()
            await anyio.sleep(duration)
            window.close()
    return window.result(connect_s)


def run(workload: str, callers: int, warmup: float, duration: float, mode: str) -> dict[str, Any]:
    result = anyio.run(_measure, workload, callers, warmup, duration, mode)
    result["versions"] = {"mcp": version("mcp"), "anyio": version("anyio")}
    result["sdk_mode"] = mode
    return result
