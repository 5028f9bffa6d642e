"""The gateway's cost per forwarded call: ``python -m benchmarks.gateway_cost``.

The workload is the main run's ``call`` at ``x32`` (32 callers, each calling ``add(1, 2)`` in a
loop, every answer checked) against the benchmark server (``benchmarks.servers.mcptrio_server``),
measured:

- **direct**, mcptrio's client against the server, in memory, over stdio and over Streamable HTTP
  (the HTTP server in a process of its own, as a remote upstream is);
- **through an mcptrio gateway** (:class:`mcptrio.gateway.Gateway`) whose one upstream is that
  server over the same transport, the client talking to the gateway in memory;
- **through FastMCP's proxy** (``fastmcp.server.create_proxy``) over the same stdio and HTTP
  upstreams, FastMCP's client talking to the proxy in memory. The proxy is given a
  ``fastmcp.Client`` of the upstream, so it keeps one upstream session (its best case: given a
  command or a URL it opens a session per request). FastMCP runs on asyncio, so its cells run
  in a subprocess of this script (``--fastmcp CELL``).

Cells are measured in rounds, the order reversed every round, and each cell's median over the
rounds is reported, with the gateway's cost as a share of the direct call's (``1 - rate ratio``
is what it adds) and its rate over FastMCP's proxy. Targets (issue 18): the gateway adds less
than 50% to a direct in-memory call's cost, and forwards at least 10x FastMCP's proxy's rate.

    python -m benchmarks.gateway_cost [--duration S] [--rounds N] [--cells CELL ...] [--calls N]

``--calls N`` makes each mcptrio cell run N calls in all instead of running for ``--duration``:
a run of fixed work, to count under callgrind (the gateway's process only; its upstream is a
process of its own), where the difference between two such runs cancels start-up out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import trio

from . import REPO_ROOT

#: The concurrent callers (the main run's x32).
CALLERS = 32
#: The upstream server over stdio, run from the repository root.
STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_server"]
RESULTS = Path(__file__).resolve().parent / "results" / "gateway_cost.json"
#: Issue 18's targets.
MAX_ADDED_COST = 0.5
MIN_OVER_FASTMCP = 10.0

CELLS = (
    "direct-in-memory",
    "gateway-in-memory",
    "direct-stdio",
    "gateway-stdio",
    "fastmcp-proxy-stdio",
    "direct-http",
    "gateway-http",
    "fastmcp-proxy-http",
)


def check(result: Any) -> None:
    text = getattr(result.content[0], "text", None)
    if text != "3":
        raise RuntimeError(f"add(1, 2) returned {text!r}, expected '3'")


async def measure_trio(
    call: Callable[[], Awaitable[Any]], duration: float, calls: int = 0
) -> float:
    """Calls per second of ``CALLERS`` tasks calling ``call`` for ``duration`` seconds, or until
    they made ``calls`` calls in all when it is not 0."""
    for _ in range(64):  # warm-up, untimed
        check(await call())
    count = 0
    deadline = time.perf_counter() + duration

    async def caller() -> None:
        nonlocal count
        while (count < calls) if calls else (time.perf_counter() < deadline):
            count += 1
            check(await call())

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(CALLERS):
            nursery.start_soon(caller)
    return count / (time.perf_counter() - start)


@asynccontextmanager
async def upstream_target(transport: str) -> AsyncIterator[Any]:
    """The benchmark server as an ``open_client`` target over ``transport``."""
    from .servers.mcptrio_server import build_server

    if transport == "in-memory":
        yield build_server()
    elif transport == "stdio":
        yield STDIO_COMMAND
    else:
        async with http_upstream() as url:
            yield url


@asynccontextmanager
async def http_upstream() -> AsyncIterator[str]:
    """The benchmark server over Streamable HTTP in a process of its own (as a remote upstream
    is), for the direct, gateway and FastMCP cells alike; yields its endpoint's URL."""
    command = [sys.executable, "-m", "benchmarks.gateway_cost", "--serve-http"]
    async with trio.open_nursery() as nursery:
        process = await nursery.start(
            partial(trio.run_process, command, stdout=subprocess.PIPE, cwd=REPO_ROOT, check=False)
        )
        assert process.stdout is not None
        line = b""
        with trio.fail_after(30):
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(1)
                if not chunk:
                    raise RuntimeError("the HTTP upstream ended before serving")
                line += chunk
        yield line.decode().strip()
        process.terminate()


async def serve_http_printing_url() -> None:
    """``--serve-http``: serve the benchmark server over HTTP, print the endpoint's URL."""
    from .servers.mcptrio_server import build_server

    async with trio.open_nursery() as nursery:
        base = await nursery.start(build_server().serve_http)
        print(f"{base}/mcp", flush=True)


async def run_mcptrio_cell(cell: str, duration: float, calls: int = 0) -> float:
    import mcptrio
    from mcptrio.gateway import Gateway, Upstream

    kind, transport = cell.split("-", 1)
    async with upstream_target(transport) as target:
        if kind == "direct":
            async with mcptrio.open_client(target) as client:
                return await measure_trio(
                    lambda: client.call_tool("add", {"a": 1, "b": 2}), duration, calls
                )
        gateway = Gateway(upstreams=[Upstream(name="bench", target=target)])
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            if gateway.upstreams["bench"].state != "up":
                raise RuntimeError(
                    f"the upstream did not connect: {gateway.upstreams['bench'].error}"
                )
            async with mcptrio.open_client(gateway) as client:
                rate = await measure_trio(
                    lambda: client.call_tool("bench_add", {"a": 1, "b": 2}), duration, calls
                )
            nursery.cancel_scope.cancel()
        return rate


def run_fastmcp_cell(cell: str, duration: float) -> float:
    """FastMCP's proxy over the upstream of ``cell``, under anyio (in this subprocess)."""
    import anyio
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    transport = cell.rsplit("-", 1)[1]
    rate = 0.0

    async def main() -> None:
        nonlocal rate
        if transport == "stdio":
            backend = Client(
                StdioTransport(
                    command=STDIO_COMMAND[0],
                    args=STDIO_COMMAND[1:],
                    cwd=str(REPO_ROOT),
                    env={"PYTHONPATH": str(REPO_ROOT)},
                )
            )
            await measure_fastmcp(backend, duration)
        else:
            url = sys.argv[sys.argv.index("--url") + 1]
            await measure_fastmcp(Client(url), duration)

    async def measure_fastmcp(backend: Any, duration: float) -> None:
        nonlocal rate
        async with backend:
            proxy = create_proxy(backend, name="proxy")
            async with Client(proxy) as client:
                for _ in range(16):
                    check(await client.call_tool("add", {"a": 1, "b": 2}))
                count = 0
                deadline = time.perf_counter() + duration

                async def caller() -> None:
                    nonlocal count
                    while time.perf_counter() < deadline:
                        check(await client.call_tool("add", {"a": 1, "b": 2}))
                        count += 1

                start = time.perf_counter()
                async with anyio.create_task_group() as group:
                    for _ in range(CALLERS):
                        group.start_soon(caller)
                rate = count / (time.perf_counter() - start)

    anyio.run(main)
    return rate


async def run_fastmcp_subprocess(cell: str, duration: float) -> float:
    args = [sys.executable, "-m", "benchmarks.gateway_cost", "--fastmcp", cell]
    args += ["--duration", str(duration)]
    if cell.endswith("http"):
        async with http_upstream() as url:
            done = await trio.run_process([*args, "--url", url], capture_stdout=True, cwd=REPO_ROOT)
    else:
        done = await trio.run_process(args, capture_stdout=True, cwd=REPO_ROOT)
    rate: float = json.loads(done.stdout)["rate"]
    return rate


async def run_all(
    cells: list[str], duration: float, rounds: int, calls: int = 0
) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {cell: [] for cell in cells}
    order = list(cells)
    for number in range(rounds):
        for cell in order:
            if cell.startswith("fastmcp"):
                rate = await run_fastmcp_subprocess(cell, duration)
            else:
                rate = await run_mcptrio_cell(cell, duration, calls)
            rates[cell].append(rate)
            print(f"round {number + 1} {cell}: {rate:,.0f} calls/s", file=sys.stderr, flush=True)
        order.reverse()
    return rates


def summary(rates: dict[str, list[float]]) -> dict[str, Any]:
    medians = {cell: statistics.median(values) for cell, values in rates.items()}
    out: dict[str, Any] = {"callers": CALLERS, "rates": medians, "transports": {}}
    for transport in ("in-memory", "stdio", "http"):
        direct = medians.get(f"direct-{transport}")
        gateway = medians.get(f"gateway-{transport}")
        proxy = medians.get(f"fastmcp-proxy-{transport}")
        entry: dict[str, float] = {}
        if direct and gateway:
            # Cost per call is 1/rate: what the gateway adds, as a share of the direct cost.
            entry["added_cost"] = direct / gateway - 1
        if gateway and proxy:
            entry["over_fastmcp_proxy"] = gateway / proxy
        out["transports"][transport] = entry
    return out


def report(result: dict[str, Any]) -> str:
    lines = [f"call x{CALLERS}, calls/s (median over rounds)", ""]
    for cell, rate in result["rates"].items():
        lines.append(f"  {cell:22} {rate:>10,.0f}")
    lines.append("")
    for transport, entry in result["transports"].items():
        parts = []
        if "added_cost" in entry:
            parts.append(f"gateway adds {entry['added_cost']:.0%} to a direct call's cost")
        if "over_fastmcp_proxy" in entry:
            parts.append(f"{entry['over_fastmcp_proxy']:.1f}x FastMCP's proxy")
        if parts:
            lines.append(f"  {transport}: " + "; ".join(parts))
    added = result["transports"].get("in-memory", {}).get("added_cost")
    if added is not None:
        verdict = "met" if added < MAX_ADDED_COST else "NOT met"
        lines.append(f"  target: adds < {MAX_ADDED_COST:.0%} in memory: {verdict}")
    ratios = [
        e["over_fastmcp_proxy"] for e in result["transports"].values() if "over_fastmcp_proxy" in e
    ]
    if ratios:
        verdict = "met" if min(ratios) >= MIN_OVER_FASTMCP else "NOT met"
        lines.append(f"  target: >= {MIN_OVER_FASTMCP:.0f}x FastMCP's proxy: {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per cell")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cells", nargs="+", choices=CELLS, default=list(CELLS))
    parser.add_argument("--calls", type=int, default=0, help="calls per mcptrio cell (callgrind)")
    parser.add_argument("--fastmcp", choices=[c for c in CELLS if c.startswith("fastmcp")])
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--serve-http", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_http:
        trio.run(serve_http_printing_url)
        return
    if args.fastmcp:
        print(json.dumps({"rate": run_fastmcp_cell(args.fastmcp, args.duration)}))
        return
    result = summary(trio.run(run_all, args.cells, args.duration, args.rounds, args.calls))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))


if __name__ == "__main__":
    main()
