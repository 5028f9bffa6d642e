"""The Streamable HTTP cells on their own: ``python -m benchmarks.http [--quick] [options]``.

Runs each selected cell once per library and transport with :class:`~.runner.HttpRunner` (one
server process per library and transport) and prints a table; ``--output`` also writes the run
records as JSON. The whole benchmark (``python -m benchmarks``) calls the same runner, with
repeats, interleaving and medians. ``--quick``: the ``call`` workload at ``x1`` and ``s100x20``
only, 1 s each, a smoke test of every library's server in both transports.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from benchmarks.matrix import ALL_WORKLOADS, HTTP_TRANSPORTS, LOADS, WORKLOADS, RunRecord, cells_for

from .runner import LIBS, HttpRunner
from .wrk import WRK

QUICK_CELLS = {("call", "x1"), ("call", "s100x20")}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http", description=__doc__)
    parser.add_argument("--libs", nargs="+", choices=LIBS, default=list(LIBS))
    parser.add_argument(
        "--transports", nargs="+", choices=HTTP_TRANSPORTS, default=list(HTTP_TRANSPORTS)
    )
    parser.add_argument("--workloads", nargs="+", choices=ALL_WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--loads", nargs="+", choices=LOADS, default=list(LOADS))
    parser.add_argument("--duration", type=float, default=1.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=0.2, help="seconds of calls before")
    parser.add_argument("--quick", action="store_true", help="call at x1 and s100x20 only")
    parser.add_argument("--output", type=Path, default=None, help="write the records as JSON")
    return parser.parse_args(argv)


def format_row(record: RunRecord) -> str:
    name = f"{record['lib']:17} {record['transport']:9} {record['workload']:9} {record['load']:8}"
    if "error" in record:
        return f"{name} ERROR {record['error']}"
    row = (
        f"{name} {record['calls_per_s']:9.0f}/s  p50 {record['p50_us'] / 1000:7.2f} ms"
        f"  p99 {record['p99_us'] / 1000:7.2f} ms  cpu {record['cpu_us_per_call']:6.0f} us/call"
    )
    if "sessions" in record:
        row += (
            f"  sessions {record['sessions']}  open p50 {record['open_p50_us'] / 1000:.1f} ms"
            f" p99 {record['open_p99_us'] / 1000:.1f} ms"
        )
    return row


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which(WRK) is None:
        print(f"wrk not found ({WRK}): install it (apt-get install wrk)", file=sys.stderr)
        return 2
    started = time.monotonic()
    records: list[RunRecord] = []
    for lib in args.libs:
        for transport in args.transports:
            with HttpRunner(lib, transport) as runner:
                for workload, load in cells_for(lib, transport):
                    if workload not in args.workloads or load not in args.loads:
                        continue
                    if args.quick and (workload, load) not in QUICK_CELLS:
                        continue
                    record = runner.run(workload, load, args.duration, args.warmup)
                    records.append(record)
                    print(format_row(record), flush=True)
    print(f"{len(records)} runs in {time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(records, indent=1) + "\n")
    return 1 if any("error" in record for record in records) else 0


if __name__ == "__main__":
    sys.exit(main())
