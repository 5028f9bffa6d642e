"""What a client of the gateway must read to start, per mode, and what a call through tool search
adds: ``python -m benchmarks.gateway_tools``.

The gateway fronts real upstreams over stdio: ``@modelcontextprotocol/server-everything``,
``server-filesystem`` (over a temporary folder) and ``server-memory`` from npm (``interop/``), an
official-SDK server (``tests/servers/sdk_everything_server.py``) and two mcptrio servers
(``examples/everything_server.py``, ``examples/demo_server.py``): 90 tools. For each mode:

- **pass-through**: every upstream tool listed;
- **toolsets**: one toolset per upstream, only ``filesystem`` enabled;
- **search**: ``search_tools`` and ``call_tool`` listed;

it reports the bytes of every ``tools/list`` page as JSON (the results, encoded as on the wire,
without the JSON-RPC envelope) and an estimate of their tokens (bytes / 4, the usual rule of thumb
for English and JSON, not a tokenizer's count).

The latency: a client in memory calls the mcptrio upstream's ``describe`` (``{"values": [1, 2,
3]}``, one stdio round trip upstream) through a pass-through gateway directly, and through a
search-mode gateway with ``call_tool``; calls alternate in rounds, and the medians are reported
with their difference. Targets (issue 41): search mode lists at most 5% of pass-through's bytes,
and a call through it costs less than 2 ms more.

    python -m benchmarks.gateway_tools [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

from mcptrio.client import Client, open_client, stdio
from mcptrio.gateway import Gateway, ToolSearch, Toolset, Upstream

from . import REPO_ROOT

INTEROP = REPO_ROOT / "interop" / "node_modules"
NODE = str(INTEROP / ".bin" / "node")
NPM = INTEROP / "@modelcontextprotocol"
#: Issue 41's targets.
MAX_SEARCH_SHARE = 0.05
MAX_ADDED_MS = 2.0
LATENCY_TOOL = ("mcptrio_describe", {"values": [1, 2, 3]})


def upstreams(folder: Path) -> list[Upstream]:
    """The six upstreams (see the module docstring)."""
    python = sys.executable
    memory_env = {**os.environ, "MEMORY_FILE_PATH": str(folder / "memory.json")}
    commands: dict[str, Any] = {
        "everything": stdio([NODE, str(NPM / "server-everything/dist/index.js"), "stdio"]),
        "filesystem": stdio([NODE, str(NPM / "server-filesystem/dist/index.js"), str(folder)]),
        "memory": stdio([NODE, str(NPM / "server-memory/dist/index.js")], env=memory_env),
        "sdk": stdio([python, str(REPO_ROOT / "tests/servers/sdk_everything_server.py"), "stdio"]),
        "mcptrio": stdio([python, str(REPO_ROOT / "examples/everything_server.py")]),
        "demo": stdio([python, str(REPO_ROOT / "examples/demo_server.py")]),
    }
    return [Upstream(name=n, target=t, connect_timeout=60) for n, t in commands.items()]


def gateway(mode: str, folder: Path) -> Gateway:
    ups = upstreams(folder)
    if mode == "toolsets":
        sets = [
            Toolset(name=u.name, upstreams=[u.name], enabled=u.name == "filesystem") for u in ups
        ]
        return Gateway(upstreams=ups, toolsets=sets)
    if mode == "search":
        return Gateway(upstreams=ups, tool_search=ToolSearch())
    return Gateway(upstreams=ups)


@asynccontextmanager
async def serving(mode: str, folder: Path) -> AsyncIterator[tuple[Gateway, Client]]:
    served = gateway(mode, folder)
    async with trio.open_nursery() as nursery:
        await nursery.start(served.serve_upstreams)
        down = [n for n, c in served.upstreams.items() if c.state != "up"]
        if down:
            raise RuntimeError(f"upstreams not up: {down} (npm ci --prefix interop?)")
        async with open_client(served) as client:
            yield served, client
        nursery.cancel_scope.cancel()


async def listed_bytes(client: Client) -> tuple[int, int]:
    """The bytes of every tools/list page's result, and how many tools they list."""
    size = count = 0
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        size += len(msgspec.json.encode(page))
        count += len(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return size, count


async def call_ms(client: Client, search: bool) -> float:
    name, arguments = LATENCY_TOOL
    started = time.perf_counter()
    if search:
        result = await client.call_tool("call_tool", {"name": name, "arguments": arguments})
    else:
        result = await client.call_tool(name, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error or (result.structured_content or {}).get("mean") != 2.0:
        raise RuntimeError(f"unexpected answer: {result}")
    return elapsed


async def run(calls: int, rounds: int) -> dict[str, Any]:
    report: dict[str, Any] = {"modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mode in ("pass-through", "toolsets", "search"):
            async with serving(mode, folder) as (served, client):
                size, count = await listed_bytes(client)
                upstream_tools = sum(len(c.tool_names) for c in served.upstreams.values())
                report["modes"][mode] = {
                    "tools_listed": count,
                    "upstream_tools": upstream_tools,
                    "bytes": size,
                    "tokens_estimated": size // 4,
                }
        direct: list[float] = []
        searched: list[float] = []
        async with (
            serving("pass-through", folder) as (_g, plain),
            serving("search", folder) as (_s, search),
        ):
            for _ in range(20):  # warm both paths (validators, index, upstream)
                await call_ms(plain, False)
                await call_ms(search, True)
            for n in range(rounds):
                order = [(plain, False, direct), (search, True, searched)]
                for client, through_search, into in order[:: 1 if n % 2 else -1]:
                    times = [await call_ms(client, through_search) for _ in range(calls)]
                    into.append(statistics.median(times))
    passing = report["modes"]["pass-through"]["bytes"]
    share = report["modes"]["search"]["bytes"] / passing
    added = statistics.median(searched) - statistics.median(direct)
    report["latency_ms"] = {
        "direct_through_gateway": round(statistics.median(direct), 3),
        "through_call_tool": round(statistics.median(searched), 3),
        "added": round(added, 3),
    }
    report["search_share_of_pass_through"] = round(share, 4)
    report["targets_met"] = share <= MAX_SEARCH_SHARE and added < MAX_ADDED_MS
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per round and path")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    report = trio.run(run, args.calls, args.rounds)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
