"""mcptrio's own HTTP client against the server, CPU per call side by side:
``python -m benchmarks.http_client``.

The server is the benchmark server (``benchmarks.servers.mcptrio_server``) over Streamable HTTP
with JSON answers, in a process of its own (``python -m benchmarks.http.server mcptrio json
PORT``). The client is ``mcptrio.open_client(url)`` in a measuring process, calling
``tools/call`` ``add(1, 2)`` (every answer checked) from 1 and from 32 concurrent tasks over the
one client, in both eras (handshake: ``initialize`` then the session; stateless: revision
2026-07-28 pinned, ``_meta`` on every request). Each cell reports:

- calls/s over the measured window;
- the client's CPU per call: the measuring process's CPU time (``time.process_time``, user and
  system, every thread) over the window, divided by the calls;
- the server's CPU per call: the server process's ``utime + stime`` from ``/proc/<pid>/stat``
  over the same window, divided by the calls;
- client / server, the ratio issue 42 bounds at 1.5; and per era, x32 calls/s over x1 calls/s
  (bounded below at 3);
- how much of the window each process spent blocked, neither running nor waiting for a CPU
  (``/proc/<pid>/task/*/schedstat``: wall time minus time on a CPU minus time in the run queue).
  This is what tells a serialisation from a busy machine: a client serialised somewhere is
  blocked at x32 while the server is too; a client that is never blocked at x32 is bound by
  the CPU it gets, and its calls/s follow the machine's load, not the code;
- per era, the x32 / x1 ceiling on two idle cores, from CPU time alone: one caller waits for
  the client's and then the server's work in turn (x1 takes at least ``client + server`` µs a
  call), 32 callers keep both processes busy at once (at best ``max(client, server)`` µs a
  call at x32), so x32 / x1 is at most about ``(client + server at x1) / max(client, server at
  x32)``, plus what the wake-ups cost x1. It does not drift with the load as calls/s do.

Before and after a change, in one run: ``--compare OLD_CHECKOUT`` measures OLD's ``mcptrio``
(this script run with OLD on ``PYTHONPATH``) and this checkout's alternately, round after round,
the order reversed every round, against the same server process, and prints each side's medians
and the ratios NEW / OLD. The load average is printed with the table (a shared machine's
figures are noisy; compare ratios from one run, not absolute figures across runs).

``--instructions SMALL LARGE`` counts the client's instructions per call instead, with
callgrind: each cell is run with SMALL and with LARGE calls, and (Ir(large) - Ir(small)) /
(LARGE - SMALL) cancels start-up and imports out. It sees no kernel time (a syscall counts as
the instructions that make it) but does not drift with the machine's load: the figure for a
change that saves Python work. Slow (a run of 200 calls takes minutes under callgrind).

    python -m benchmarks.http_client [--duration S] [--rounds N] [--loads 1 32]
                                     [--eras handshake stateless] [--compare OLD_CHECKOUT]
                                     [--instructions SMALL LARGE]

``--measure URL SERVER_PID`` is the measuring process alone (one round of every cell, a JSON
line per cell on stdout): run it under ``py-spy record`` to profile the client.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

#: This script's checkout: the server runs from it, and so does NEW in ``--compare``.
REPO_ROOT = Path(__file__).resolve().parent.parent
ERAS = ("handshake", "stateless")
STATELESS_VERSION = "2026-07-28"
#: Seconds the server process gets to accept connections.
SERVER_START_TIMEOUT = 30.0
#: Untimed calls before each cell's window (at the cell's concurrency).
WARMUP_CALLS = 200
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def scheduled_s(pid: int) -> float:
    """Seconds the threads of process ``pid`` have spent on a CPU or waiting in the run queue
    for one (``/proc/<pid>/task/*/schedstat``, nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            on_cpu, run_queue, _ = (task / "schedstat").read_text().split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended since the listing (Trio's thread cache, say)
        total += int(on_cpu) + int(run_queue)
    return total / 1e9


def server_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICK_S


# --- the measuring process -------------------------------------------------------------------


async def measure_cell(
    client: Any, load: int, duration: float, server_pid: int, calls_wanted: int = 0
) -> dict[str, Any]:
    """``load`` tasks calling ``add(1, 2)`` over ``client`` for ``duration`` seconds, or
    ``calls_wanted`` calls in all when it is not 0 (then the warm-up is left out)."""
    import trio

    async def call() -> None:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        if getattr(result.content[0], "text", None) != "3":
            raise RuntimeError(f"add(1, 2) returned {result.content!r}")

    async def calls(count: int) -> None:
        for _ in range(count):
            await call()

    if not calls_wanted:
        async with trio.open_nursery() as nursery:
            for _ in range(load):
                nursery.start_soon(calls, max(1, WARMUP_CALLS // load))

    done = 0
    deadline = time.perf_counter() + duration

    async def caller() -> None:
        nonlocal done
        while (done < calls_wanted) if calls_wanted else (time.perf_counter() < deadline):
            done += 1
            await call()

    client_pid = os.getpid()
    server_before, client_before = server_cpu_s(server_pid), time.process_time()
    scheduled_before = scheduled_s(client_pid), scheduled_s(server_pid)
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(load):
            nursery.start_soon(caller)
    elapsed = time.perf_counter() - start
    client_cpu = time.process_time() - client_before
    server_cpu = server_cpu_s(server_pid) - server_before
    client_scheduled = scheduled_s(client_pid) - scheduled_before[0]
    server_scheduled = scheduled_s(server_pid) - scheduled_before[1]
    return {
        "load": load,
        "calls": done,
        "calls_per_s": done / elapsed,
        "client_us": client_cpu / done * 1e6,
        "server_us": server_cpu / done * 1e6,
        "client_blocked": max(0.0, 1 - client_scheduled / elapsed),
        "server_blocked": max(0.0, 1 - server_scheduled / elapsed),
    }


async def measure(
    url: str, server_pid: int, eras: list[str], loads: list[int], duration: float, calls: int
) -> None:
    """One round of every cell; a JSON line per cell on stdout."""
    import mcptrio
    from mcptrio.client import HANDSHAKE_ERA, Revisions

    stateless = Revisions(protocol_version=STATELESS_VERSION, supported=(STATELESS_VERSION,))
    for era in eras:
        revisions = HANDSHAKE_ERA if era == "handshake" else stateless
        async with mcptrio.open_client(url, revisions=revisions) as client:
            for load in loads:
                cell = await measure_cell(client, load, duration, server_pid, calls)
                print(json.dumps({"era": era, **cell}), flush=True)


# --- the driver ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    """The benchmark server over HTTP (JSON answers) in its own process; its URL once it accepts."""
    port = free_port()
    command = [sys.executable, "-m", "benchmarks.http.server", "mcptrio", "json", str(port)]
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the server did not start (exit {process.poll()})") from None
            time.sleep(0.05)


def run_side(checkout: Path, url: str, pid: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One measuring process importing ``checkout``'s ``mcptrio``: one round of every cell."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    # -P: the script's folder (benchmarks/, which has an `http` package) stays off sys.path.
    command = [sys.executable, "-P", str(Path(__file__).resolve()), "--measure", url, str(pid)]
    command += ["--duration", str(args.duration), "--eras", *args.eras]
    command += ["--loads", *map(str, args.loads)]
    output = subprocess.run(command, cwd=checkout, env=env, check=True, capture_output=True)
    return [json.loads(line) for line in output.stdout.decode().splitlines()]


def instructions(checkout: Path, url: str, pid: int, era: str, load: int, calls: int) -> int:
    """Instructions (callgrind) of a measuring process importing ``checkout``'s ``mcptrio``
    that makes ``calls`` calls of one cell, start-up included."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        command += [sys.executable, "-P", str(Path(__file__).resolve()), "--measure", url]
        command += [str(pid), "--eras", era, "--loads", str(load), "--calls", str(calls)]
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        subprocess.run(command, cwd=checkout, env=env, check=True, capture_output=True)
        totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        assert totals is not None, "callgrind wrote no totals"
        return int(totals.group(1))


def instructions_table(sides: dict[str, Path], url: str, pid: int, args: argparse.Namespace) -> str:
    """Client instructions per call, per side and cell: (Ir(large) - Ir(small)) / (large -
    small), so that start-up and imports cancel out; the runs go two at a time."""
    small, large = args.instructions
    jobs = [
        (side, era, load, calls)
        for era in args.eras
        for load in args.loads
        for side in sides
        for calls in (small, large)
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(
            zip(
                jobs,
                pool.map(lambda job: instructions(sides[job[0]], url, pid, *job[1:]), jobs),
                strict=True,
            )
        )
    lines = ["| era | load | " + " | ".join(f"{side} instructions/call" for side in sides)]
    lines[0] += " | new / old |" if "old" in sides else " |"
    lines.append("|---|---|" + "---:|" * (len(sides) + ("old" in sides)))
    for era in args.eras:
        for load in args.loads:
            per_call = {
                side: (counts[side, era, load, large] - counts[side, era, load, small])
                / (large - small)
                for side in sides
            }
            row = f"| {era} | x{load} | " + " | ".join(f"{per_call[s]:,.0f}" for s in sides)
            if "old" in sides:
                row += f" | {per_call['new'] / per_call['old']:.3f}"
            lines.append(row + " |")
    return "\n".join(lines)


def table(results: dict[str, list[dict[str, Any]]], eras: list[str], loads: list[int]) -> str:
    """Medians per side and cell, client / server CPU, x32 / x1, and NEW / OLD when compared."""
    lines = [
        "| side | era | load | calls/s | client µs/call | server µs/call | client / server "
        "| client blocked | server blocked |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    keys = ("calls_per_s", "client_us", "server_us", "client_blocked", "server_blocked")
    medians: dict[tuple[str, str, int], dict[str, float]] = {}
    for side, records in results.items():
        for era in eras:
            for load in loads:
                cell = [r for r in records if r["era"] == era and r["load"] == load]
                median = {key: statistics.median(r[key] for r in cell) for key in keys}
                medians[side, era, load] = median
                lines.append(
                    f"| {side} | {era} | x{load} | {median['calls_per_s']:,.0f} | "
                    f"{median['client_us']:.0f} | {median['server_us']:.0f} | "
                    f"{median['client_us'] / median['server_us']:.2f} | "
                    f"{median['client_blocked']:.0%} | {median['server_blocked']:.0%} |"
                )
    if len(loads) > 1:
        many, one = max(loads), min(loads)
        lines += [
            "",
            f"| side | era | x{many} / x{one} calls/s | ceiling on 2 idle cores (CPU time) |",
            "|---|---|---:|---:|",
        ]
        for side in results:
            for era in eras:
                at_many, at_one = medians[side, era, many], medians[side, era, one]
                ratio = at_many["calls_per_s"] / at_one["calls_per_s"]
                ceiling = (at_one["client_us"] + at_one["server_us"]) / max(
                    at_many["client_us"], at_many["server_us"]
                )
                lines.append(f"| {side} | {era} | {ratio:.2f} | {ceiling:.2f} |")
    if "old" in results:
        lines += [
            "",
            "| era | load | calls/s new / old | client µs new / old |",
            "|---|---|---:|---:|",
        ]
        for era in eras:
            for load in loads:
                old, new = medians["old", era, load], medians["new", era, load]
                lines.append(
                    f"| {era} | x{load} | {new['calls_per_s'] / old['calls_per_s']:.2f} | "
                    f"{new['client_us'] / old['client_us']:.2f} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.http_client", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--duration", type=float, default=2.0, help="seconds measured per cell")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians are reported")
    parser.add_argument("--loads", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--eras", nargs="+", choices=ERAS, default=list(ERAS))
    parser.add_argument("--compare", type=Path, metavar="OLD_CHECKOUT")
    parser.add_argument("--measure", nargs=2, metavar=("URL", "SERVER_PID"))
    parser.add_argument("--calls", type=int, default=0, help="with --measure: calls per cell")
    parser.add_argument(
        "--instructions",
        type=int,
        nargs=2,
        metavar=("SMALL", "LARGE"),
        help="client instructions per call under callgrind instead (calls per run: e.g. 64 320)",
    )
    args = parser.parse_args(argv)
    if args.measure:
        import trio

        url, pid = args.measure
        trio.run(measure, url, int(pid), args.eras, args.loads, args.duration, args.calls)
        return
    sides = {"new": REPO_ROOT} if args.compare is None else {"old": args.compare, "new": REPO_ROOT}
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    server, url = start_server()
    if args.instructions:
        try:
            print(instructions_table(sides, url, server.pid, args))
        finally:
            server.terminate()
            server.wait()
        return
    try:
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for side in order:
                results[side] += run_side(sides[side], url, server.pid, args)
                print(f"round {round_ + 1}/{args.rounds}: {side} done", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
    print(table(results, args.eras, args.loads))
    print(f"\nload average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
