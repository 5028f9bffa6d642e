"""Tool calls per second over Streamable HTTP: ``python -m benchmarks.http [--quick]``.

Every cell (server x response mode x connections) starts a fresh server process and drives it
with ``wrk`` (see ``cell.py``). Within a repeat the servers alternate cell by cell, and their
order rotates from one repeat to the next; the table reports each cell's median.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .cell import WRK, CellError, run_cell
from .report import errors, format_table, format_targets, summarise
from .server import MODES, SERVERS

DEFAULT_DURATION = 3
DEFAULT_REPEAT = 3
CONNECTIONS = (1, 16)
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
DEFAULT_OUTPUT = RESULTS_DIR / "http.json"
QUICK_OUTPUT = RESULTS_DIR / "http-quick.json"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http", description=__doc__)
    parser.add_argument(
        "--duration", type=int, default=None, help=f"whole seconds per cell ({DEFAULT_DURATION})"
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help=f"runs per cell, median shown ({DEFAULT_REPEAT})"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="whole seconds of wrk warm-up per cell (1; 0 = 50 calls from Python)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: 1 repeat of 1 s, no wrk warm-up"
    )
    parser.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="pin the server to core 0 and wrk to core 1 (default: off, see the README)",
    )
    parser.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--connections", nargs="+", type=int, default=list(CONNECTIONS))
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if args.duration is None:
        args.duration = 1 if args.quick else DEFAULT_DURATION
    if args.repeat is None:
        args.repeat = 1 if args.quick else DEFAULT_REPEAT
    if args.warmup is None:
        args.warmup = 0 if args.quick else 1
    if args.output is None:
        args.output = QUICK_OUTPUT if args.quick else DEFAULT_OUTPUT
    if args.duration < 1 or args.repeat < 1:
        parser.error("--duration and --repeat must be at least 1")
    return args


def _available(servers: list[str]) -> tuple[str, ...]:
    """The servers whose libraries import; the others are skipped with a note."""
    probes = {
        "sdk-uvicorn": "import uvicorn; from mcp.server.mcpserver import MCPServer",
        "mcptrio-httptools": "import mcptrio, httptools",
        "mcptrio-hypercorn": "import mcptrio, hypercorn",
        "mcptrio-h11": "import mcptrio",
    }
    kept = []
    for server in servers:
        probe = subprocess.run([sys.executable, "-c", probes[server]], capture_output=True)
        if probe.returncode == 0:
            kept.append(server)
        else:
            log(f"skipping {server}: its libraries do not import")
    return tuple(kept)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("mcptrio", "mcp", "uvicorn", "h11", "httptools", "hypercorn", "trio"):
        with contextlib.suppress(PackageNotFoundError):
            found[name] = version(name)
    wrk = subprocess.run([WRK, "--version"], capture_output=True, text=True)
    found["wrk"] = (wrk.stdout or wrk.stderr).split("Copyright")[0].strip()
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which(WRK) is None:
        log(f"wrk not found ({WRK}): install it (apt-get install wrk)")
        return 2
    servers = _available(args.servers)
    if not servers:
        log("no server can run")
        return 2
    cells = [(mode, conns) for mode in args.modes for conns in args.connections]
    log(
        f"{len(cells) * len(servers)} cells x {args.repeat} repeats, {args.duration} s each"
        f" (warm-up {args.warmup} s), wrk -t1, pinning {'on' if args.pin else 'off'}"
    )
    runs: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    started = time.monotonic()
    for repeat in range(args.repeat):
        shift = repeat % len(servers)
        order = servers[shift:] + servers[:shift]
        for mode, conns in cells:
            for server in order:
                try:
                    result = run_cell(
                        server, mode, conns, args.duration, pin=args.pin, warmup=args.warmup
                    )
                except CellError as error:
                    result = {"error": str(error)}
                result["repeat"] = repeat
                runs.setdefault((mode, conns, server), []).append(result)
                rate = result.get("calls_per_s")
                shown = f"{rate:,.0f} calls/s" if rate is not None else ""
                log(
                    f"  [{repeat + 1}/{args.repeat}] {mode:4} c={conns:<3} {server:18} {shown}"
                    + (f"  ERROR {result['error']}" if "error" in result else "")
                )
    rows = summarise(runs, servers)
    print(format_table(rows, servers))
    print()
    print(format_targets(rows))
    failures = errors(rows)
    for failure in failures:
        log(f"error: {failure}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "benchmark": "http",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "python": platform.python_version(),
        "versions": _versions(),
        "settings": {
            "duration": args.duration,
            "repeat": args.repeat,
            "warmup": args.warmup,
            "pin": args.pin,
            "wrk_threads": 1,
        },
        "elapsed_s": round(time.monotonic() - started, 1),
        "rows": rows,
    }
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    log(f"results written to {args.output} ({document['elapsed_s']} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
