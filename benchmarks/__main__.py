"""Orchestrate the benchmark: ``python -m benchmarks [--duration S] [--repeat N] [--quick]``.

Every cell runs in a fresh ``python -m benchmarks.cell`` subprocess. Within each repeat the
libraries alternate cell by cell (and which goes first alternates between repeats); the table
reports each cell's median over the repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import LIBS, REPO_ROOT, SDK_MODES, WORKLOADS
from .cell import default_warmup
from .tables import format_decorator_table, format_table, summarise, write_json

DEFAULT_DURATION = 2.5
DEFAULT_REPEAT = 3
QUICK_DURATION = 0.5
RESULTS_DIR = Path(__file__).resolve().parent / "results"
DEFAULT_OUTPUT = RESULTS_DIR / "first.json"
QUICK_OUTPUT = RESULTS_DIR / "quick.json"

#: Checks, in a subprocess, that a library and the API the cells use are importable.
_PROBES = {
    "mcptrio": "import mcptrio; mcptrio.Server; mcptrio.open_client; "
    "print(getattr(mcptrio, '__version__', 'unknown'))",
    "mcptrio-lowlevel": "import mcptrio; from mcptrio.runtime.session import Session; "
    "from mcptrio.protocol.connection import Connection; "
    "from mcptrio.transports.memory import memory_transport_pair; "
    "from mcptrio.transports.stdio import open_stdio_server_transport; "
    "print(getattr(mcptrio, '__version__', 'unknown'))",
    "sdk": "from importlib.metadata import version; import mcp; "
    "from mcp.server.mcpserver import MCPServer; print(version('mcp'))",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help=f"seconds measured per cell (default {DEFAULT_DURATION})",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help=f"runs per cell; the median is reported (default {DEFAULT_REPEAT})",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="seconds of warm-up per cell (default: min(0.5, duration/4))",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke test: one repeat of {QUICK_DURATION} s per cell",
    )
    parser.add_argument(
        "--sdk-mode",
        choices=SDK_MODES,
        default="auto",
        help="the SDK Client's mode=: 'auto' (its default) or 'legacy' (initialize first)",
    )
    parser.add_argument("--libs", nargs="+", choices=LIBS, default=list(LIBS))
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"JSON results file (default {DEFAULT_OUTPUT}; {QUICK_OUTPUT.name} with --quick)",
    )
    args = parser.parse_args(argv)
    if args.duration is None:
        args.duration = QUICK_DURATION if args.quick else DEFAULT_DURATION
    if args.repeat is None:
        args.repeat = 1 if args.quick else DEFAULT_REPEAT
    if args.output is None:
        args.output = QUICK_OUTPUT if args.quick else DEFAULT_OUTPUT
    if args.warmup is None:
        args.warmup = default_warmup(args.duration)
    if args.duration <= 0 or args.repeat < 1 or args.warmup < 0:
        parser.error("need duration > 0, repeat >= 1 and warmup >= 0")
    return args


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def probe(lib: str) -> tuple[bool, str]:
    """(available, version or the reason it is not)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBES[lib]],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode == 0:
        return True, proc.stdout.strip()
    lines = proc.stderr.strip().splitlines()
    return False, lines[-1] if lines else f"exit status {proc.returncode}"


def run_cell(lib: str, workload: str, callers: int, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.cell",
        lib,
        workload,
        str(callers),
        str(args.duration),
        "--warmup",
        str(args.warmup),
        "--sdk-mode",
        args.sdk_mode,
    ]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            cwd=REPO_ROOT,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=args.duration + args.warmup + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": "timed out", "wall_s": time.perf_counter() - started}
    wall = time.perf_counter() - started
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        return {"error": f"exit status {proc.returncode}", "stderr": tail, "wall_s": wall}
    result: dict[str, Any] = json.loads(lines[-1])
    result["wall_s"] = round(wall, 3)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    libs: list[str] = []
    versions: dict[str, str] = {}
    for lib in args.libs:
        ok, detail = probe(lib)
        if ok:
            libs.append(lib)
            versions[lib] = detail
        else:
            name = "the official MCP SDK (`mcp`)" if lib == "sdk" else lib
            log(f"NOTE: {name} is not available ({detail}); running without its cells.")
            if lib == "sdk":
                log("      Install it with: pip install 'mcp==2.3.0'  (or the 'bench' extra)")
    if not libs:
        log("Nothing to run.")
        return 1

    cells = [(w, c) for w, callers in WORKLOADS.items() for c in callers]
    total = len(cells) * len(libs) * args.repeat
    log(
        f"{total} cells: {len(cells)} workloads x {len(libs)} libs x {args.repeat} repeats, "
        f"{args.warmup:g} s warm-up + {args.duration:g} s each"
    )
    runs: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    lib_width = max(len(lib) for lib in libs)
    done = 0
    started = time.perf_counter()
    for rep in range(args.repeat):
        for workload, callers in cells:
            order = libs if rep % 2 == 0 else libs[::-1]
            for lib in order:
                done += 1
                result = run_cell(lib, workload, callers, args)
                runs.setdefault((workload, callers, lib), []).append(result)
                outcome = (
                    f"FAILED: {result['error']}\n{result.get('stderr', '')}".rstrip()
                    if "error" in result
                    else f"{result['calls_per_s']:,.0f} calls/s"
                )
                log(
                    f"[{done:>2}/{total}] repeat {rep + 1}: {lib:<{lib_width}} {workload:<9} "
                    f"x{callers:<3} {outcome} ({result['wall_s']:.1f} s wall)"
                )

    rows = summarise(runs, tuple(libs))
    print(format_table(rows))
    decorator_table = format_decorator_table(rows)
    if decorator_table is not None:
        print(
            "\nThe decorator layer: mcptrio.Server + @server.tool() next to a bare Session with a"
            " hand-written handler (same client, same run)"
        )
        print(decorator_table)
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "versions": versions,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "repeat": args.repeat,
        "sdk_mode": args.sdk_mode,
        "sdk_backend": "asyncio (anyio.run default)",
        "mcptrio_backend": "trio.run",
        "total_wall_s": round(time.perf_counter() - started, 1),
    }
    write_json(args.output, meta, rows)
    log(f"results written to {args.output} ({meta['total_wall_s']} s)")
    failed = any("error" in r for results in runs.values() for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
