"""The decorator layer's cost, measured A/B in one process: ``python -m benchmarks.decorator_cost``.

The main run (``python -m benchmarks``) measures ``mcptrio`` and ``mcptrio-lowlevel`` in separate
processes a few seconds apart; on a busy shared machine the load changes more between two such
runs than the few percent being measured. Here both servers are connected at once, from one
process, and measured in alternating slices (A B B A A B ...; ``--slice`` seconds each): load
that changes more slowly than a slice falls on both alike. Before each slice the other side's
calls in flight are drained, untimed, so the two never run at the same time.

For each cell this prints the decorator server's rate as a share of the low-level one over all
slices, and the median and quartiles of the share within each A/B pair of slices.

    python -m benchmarks.decorator_cost [--duration S] [--slice S] [--warmup S]
                                        [--workloads in-memory stdio]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import trio

import mcptrio
from mcptrio.transports.memory import memory_transport_pair

from .harness import process_cpu_seconds
from .servers import mcptrio_lowlevel_server
from .servers.mcptrio_server import build_server

RESULTS = Path(__file__).resolve().parent / "results" / "decorator_cost.json"

#: The workloads both mcptrio servers are measured on, and the concurrent callers of each.
WORKLOADS: dict[str, tuple[int, ...]] = {"in-memory": (1, 100), "stdio": (1, 32)}
MEASURED = tuple(WORKLOADS)

#: Issue 3: the decorator server keeps at least this share of the low-level session's rate.
DECORATOR_TARGET = 0.85

#: The stdio server commands; run from the repository root, with it on PYTHONPATH.
STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_server"]
LOWLEVEL_STDIO_COMMAND = [sys.executable, "-m", "benchmarks.servers.mcptrio_lowlevel_server"]

#: The arguments of every call; the expected text result is "3".
ARGS: dict[str, Any] = {"a": 1, "b": 2}


def check_text(text: object) -> None:
    """Fail loudly if a warm-up call did not return the expected sum."""
    if text != "3":
        raise RuntimeError(f"add(1, 2) returned {text!r}, expected '3'")


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


def server_cpu_reader(client: mcptrio.Client) -> Callable[[], float] | None:
    """A reader of the CPU time of ``client``'s stdio server process (``/proc``), or None."""
    process = getattr(getattr(client.session, "transport", None), "process", None)
    pid = getattr(process, "pid", None)
    if not isinstance(pid, int):
        return None
    try:
        process_cpu_seconds(pid)
    except OSError:
        return None
    return partial(process_cpu_seconds, pid)


def table(header: list[str], body: list[list[str]]) -> str:
    """A Markdown table, the first column left-aligned and the others right-aligned."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(values: list[str]) -> str:
        cells = [
            v.ljust(w) if i == 0 else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(values) for values in body)])


class Side:
    """One server's client and its callers, counting calls only while its slice is open."""

    def __init__(
        self, name: str, client: mcptrio.Client, server_cpu: Callable[[], float] | None
    ) -> None:
        self.name = name
        self.client = client
        self.server_cpu = server_cpu
        self.active = False
        self.counting = False
        self.in_flight = 0
        self.opened = trio.Event()
        self.drained = trio.Event()
        self.drained.set()
        self.slice_count = 0
        self.t_open = 0.0
        self.cpu_open = 0.0
        #: (calls, seconds, CPU seconds) of every measured slice, in order.
        self.slices: list[tuple[int, float, float]] = []

    def _cpu(self) -> float:
        """CPU seconds of this process and, over stdio, of this side's server process."""
        server = self.server_cpu() if self.server_cpu is not None else 0.0
        return time.process_time() + server

    def open(self, counting: bool) -> None:
        self.counting = counting
        self.slice_count = 0
        self.drained = trio.Event()
        self.cpu_open = self._cpu()
        self.t_open = time.perf_counter()
        self.active = True
        self.opened.set()

    async def close(self) -> None:
        """Stop issuing calls, record the slice, and wait (untimed) until none is in flight."""
        elapsed = time.perf_counter() - self.t_open
        cpu = self._cpu() - self.cpu_open
        self.active = False
        self.opened = trio.Event()
        if self.counting:
            self.slices.append((self.slice_count, elapsed, cpu))
        if self.in_flight == 0:
            self.drained.set()
        await self.drained.wait()

    async def caller(self) -> None:
        while True:
            if not self.active:
                await self.opened.wait()
                continue
            self.in_flight += 1
            try:
                await self.client.call_tool("add", ARGS)
            finally:
                self.in_flight -= 1
            if self.active:
                self.slice_count += 1
            elif self.in_flight == 0:
                self.drained.set()


async def _measure(
    workload: str, callers: int, duration: float, slice_s: float, warmup: float
) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        if workload == "in-memory":
            decorated = await stack.enter_async_context(mcptrio.open_client(build_server()))
            lowlevel = await stack.enter_async_context(open_lowlevel_in_memory())
        else:
            decorated = await stack.enter_async_context(mcptrio.open_client(STDIO_COMMAND))
            lowlevel = await stack.enter_async_context(mcptrio.open_client(LOWLEVEL_STDIO_COMMAND))
        for client in (decorated, lowlevel):
            first = await client.call_tool("add", ARGS)
            check_text(getattr(first.content[0], "text", None))
        readers = [
            server_cpu_reader(c) if workload == "stdio" else None for c in (decorated, lowlevel)
        ]
        a = Side("mcptrio", decorated, readers[0])
        b = Side("mcptrio-lowlevel", lowlevel, readers[1])
        cpu_covers_servers = workload == "in-memory" or None not in readers
        async with trio.open_nursery() as nursery:
            for side in (a, b):
                for _ in range(callers):
                    nursery.start_soon(side.caller)
            pairs = max(1, round(duration / slice_s))
            warm_pairs = max(1, round(warmup / slice_s / 2))
            for i in range(warm_pairs + pairs):
                for side in (a, b) if i % 2 == 0 else (b, a):
                    side.open(counting=i >= warm_pairs)
                    await trio.sleep(slice_s)
                    await side.close()
            nursery.cancel_scope.cancel()
    return _summary(workload, callers, a, b, cpu_covers_servers)


def _summary(
    workload: str, callers: int, a: Side, b: Side, cpu_covers_servers: bool
) -> dict[str, Any]:
    def rate(side: Side, cpu: bool = False) -> float:
        calls = sum(s[0] for s in side.slices)
        seconds = sum(s[2] if cpu else s[1] for s in side.slices)
        return calls / seconds if seconds > 0 else 0.0

    paired = [
        (sa[0] / sa[1]) / (sb[0] / sb[1])
        for sa, sb in zip(a.slices, b.slices, strict=True)
        if sb[0] and sa[1] > 0
    ]
    quartiles = statistics.quantiles(paired, n=4) if len(paired) >= 2 else [0.0, 0.0, 0.0]
    low_rate = rate(b)
    low_cpu = rate(b, cpu=True)
    return {
        "workload": workload,
        "callers": callers,
        "decorator_calls_per_s": rate(a),
        "lowlevel_calls_per_s": low_rate,
        "share": rate(a) / low_rate if low_rate else None,
        # Client and server CPU time together; None where the servers' could not be read.
        "cpu_share": rate(a, cpu=True) / low_cpu if cpu_covers_servers and low_cpu else None,
        "paired_median": statistics.median(paired) if paired else None,
        "paired_quartiles": [quartiles[0], quartiles[2]],
        "slices": {"mcptrio": a.slices, "mcptrio-lowlevel": b.slices},
    }


def format_results(results: list[dict[str, Any]]) -> str:
    header = [
        "workload",
        "callers",
        "decorator calls/s",
        "low-level calls/s",
        "decorator / low-level",
        "pairs: median (IQR)",
        "per CPU second",
        f"share >= {DECORATOR_TARGET:.0%}",
    ]
    body = []
    for r in results:
        share, cpu = r["share"], r["cpu_share"]
        q1, q3 = r["paired_quartiles"]
        median = r["paired_median"]
        body.append(
            [
                r["workload"],
                str(r["callers"]),
                f"{r['decorator_calls_per_s']:,.0f}",
                f"{r['lowlevel_calls_per_s']:,.0f}",
                "-" if share is None else f"{share:.1%}",
                "-" if median is None else f"{median:.1%} ({q1:.0%}-{q3:.0%})",
                "-" if cpu is None else f"{cpu:.1%}",
                "-" if share is None else ("yes" if share >= DECORATOR_TARGET else "NO"),
            ]
        )
    return table(header, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.decorator_cost", description=__doc__
    )
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per side")
    parser.add_argument("--slice", type=float, default=0.2, help="seconds per slice")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds first")
    parser.add_argument(
        "--workloads", nargs="+", choices=MEASURED, default=list(MEASURED), help="cells to run"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.slice <= 0 or args.warmup < 0:
        parser.error("need duration > 0, slice > 0 and warmup >= 0")
    results = []
    for workload in args.workloads:
        for callers in WORKLOADS[workload]:
            print(f"{workload} x{callers} ...", file=sys.stderr, flush=True)
            results.append(
                trio.run(_measure, workload, callers, args.duration, args.slice, args.warmup)
            )
    print(format_results(results))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    meta = {"duration_s": args.duration, "slice_s": args.slice, "warmup_s": args.warmup}
    args.output.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(f"results written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
