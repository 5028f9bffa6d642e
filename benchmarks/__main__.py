"""``python -m benchmarks``: mcptrio, the official SDK and FastMCP on every cell of the matrix.

Runs every (library, transport, workload, load) of ``benchmarks/matrix.py`` ``--repeat`` times,
the libraries interleaved, then the capacity figures, and writes the Markdown table, the JSON
file and the charts to the output folder. Progress goes to stderr. Exits with status 1 if any
cell produced no figure. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from contextlib import AbstractContextManager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from . import REPO_ROOT
from .matrix import (
    ALL_WORKLOADS,
    HTTP_TRANSPORTS,
    LIBS,
    LOADS,
    SWEEP_LOAD,
    SWEEP_WORKLOADS,
    TRANSPORTS,
    WORKLOADS,
)
from .orchestrate import Progress, Runner, assemble, failures, plan, run_matrix
from .worker_runner import WorkerRunner

#: Seconds measured per run, and of warm-up before it (HTTP too: wrk is stopped by SIGINT when
#: the window ends, see benchmarks/http/wrk.py).
DEFAULT_DURATION = 0.5
DEFAULT_WARMUP = 0.1
QUICK_DURATION = 0.1
QUICK_WARMUP = 0.05
DEFAULT_REPEAT = 3
SCALE_OUT_DURATION = 3.0
SCALE_OUT_WARMUP = 1.0
MIN_REPEAT = 3
CAPACITY_SESSIONS = 1000
RESULTS_DIR = Path(__file__).resolve().parent / "results"

#: The module each library needs, to tell which are installed without importing them here.
REQUIRED_MODULES = {
    "mcptrio": "mcptrio",
    "sdk": "mcp",
    "sdk-legacy": "mcp",
    "fastmcp": "fastmcp",
    "mcptrio-stateless": "mcptrio",
    "sdk-stateless": "mcp",
    # The floor is no library: Trio (and httptools over HTTP) is all it needs.
    "floor": "trio",
}
#: The distribution whose version stands for each library (each module's has its name).
DISTRIBUTIONS = dict(REQUIRED_MODULES)
INSTALL_HINTS = {
    "sdk": "pip install 'mcp==2.3.0'",
    "sdk-legacy": "pip install 'mcp==2.3.0'",
    "sdk-stateless": "pip install 'mcp==2.3.0'",
    "fastmcp": "pip install 'fastmcp==4.1.2'",
}
#: Libraries with capacity figures.
CAPACITY_LIBS = ("mcptrio", "sdk", "fastmcp")
#: ``--sweep``: the libraries and transports measured unless ``--libs`` / ``--transports`` say.
SWEEP_LIBS = ("mcptrio", "sdk")
SWEEP_TRANSPORTS = ("in-memory", "stdio", "http-json", "http-sse")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: one repeat of {QUICK_DURATION:g} s runs, small capacity",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help=f"runs per cell, the median reported (default {DEFAULT_REPEAT}; "
        f"at least {MIN_REPEAT} unless --quick)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help=f"seconds measured per run (default {DEFAULT_DURATION:g})",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help=f"seconds of calls before each run's window (default {DEFAULT_WARMUP:g})",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="the payload sweep instead of the matrix: resources/read of 1 KiB to 1 MiB "
        f"({', '.join(SWEEP_WORKLOADS)}) at {SWEEP_LOAD}, with the floor (the cheapest encode "
        "and a msgspec decode of the same answer); default libraries "
        f"{' '.join(SWEEP_LIBS)}, transports {' '.join(SWEEP_TRANSPORTS)}; no capacity figures",
    )
    parser.add_argument(
        "--scale-out",
        action="store_true",
        help=f"the scale-out section instead of the matrix: call x32 over HTTP with wrk against "
        f"mcptrio run --workers 1 and 2, the ratio 2w/1w (default {SCALE_OUT_DURATION:g} s "
        f"runs after {SCALE_OUT_WARMUP:g} s of warm-up); see benchmarks/scale_out.py",
    )
    parser.add_argument(
        "--scale-out-eras",
        nargs="+",
        choices=("stateless", "handshake"),
        default=["stateless"],
        help="with --scale-out: stateless-era calls (default), and/or calls on 32 "
        "handshake-era sessions (one per connection, spread over the workers)",
    )
    parser.add_argument(
        "--scale-out-stores",
        nargs="+",
        choices=("memory", "redis"),
        default=["memory", "redis"],
        help="with --scale-out: each worker's own stores, and/or the Redis ones shared through "
        "--redis (default: both; without --redis the benchmark starts a redis-server)",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        default=None,
        help="with --scale-out: the Redis server of the redis stores (--redis of mcptrio run)",
    )
    parser.add_argument("--libs", nargs="+", choices=LIBS, default=None)
    parser.add_argument("--transports", nargs="+", choices=TRANSPORTS, default=None)
    parser.add_argument("--workloads", nargs="+", choices=ALL_WORKLOADS, default=None)
    parser.add_argument("--loads", nargs="+", choices=LOADS, default=None)
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=None,
        help="where results.md, results.json and the charts go "
        "(default benchmarks/results/latest/, latest-quick/ with --quick)",
    )
    parser.add_argument("--no-capacity", action="store_true", help="skip the capacity figures")
    parser.add_argument(
        "--capacity-sessions",
        type=int,
        default=CAPACITY_SESSIONS,
        help=f"sessions opened for the memory figures (default {CAPACITY_SESSIONS})",
    )
    args = parser.parse_args(argv)
    if args.sweep:
        args.no_capacity = True
    defaults = {
        "libs": SWEEP_LIBS if args.sweep else LIBS,
        "transports": SWEEP_TRANSPORTS if args.sweep else TRANSPORTS,
        "workloads": SWEEP_WORKLOADS if args.sweep else WORKLOADS,
        "loads": (SWEEP_LOAD,) if args.sweep else LOADS,
    }
    for name, default in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, list(default))
    if args.repeat is None:
        args.repeat = 1 if args.quick else DEFAULT_REPEAT
    if args.scale_out:
        # Two workers need a window of seconds, not tenths, to show what they can do.
        quick = (QUICK_DURATION, QUICK_WARMUP)
        duration, warmup = quick if args.quick else (SCALE_OUT_DURATION, SCALE_OUT_WARMUP)
        args.duration = duration if args.duration is None else args.duration
        args.warmup = warmup if args.warmup is None else args.warmup
    if args.duration is None:
        args.duration = QUICK_DURATION if args.quick else DEFAULT_DURATION
    if args.warmup is None:
        args.warmup = QUICK_WARMUP if args.quick else DEFAULT_WARMUP
    if args.repeat < (1 if args.quick else MIN_REPEAT):
        parser.error(f"--repeat must be at least {MIN_REPEAT} (medians of fewer are noise)")
    if args.duration <= 0 or args.warmup < 0 or args.capacity_sessions < 1:
        parser.error("need --duration > 0, --warmup >= 0 and --capacity-sessions >= 1")
    return args


def library_version(lib: str) -> str | None:
    """The installed version of ``lib``, or None if it cannot be imported here."""
    if importlib.util.find_spec(REQUIRED_MODULES[lib]) is None:
        return None
    try:
        return version(DISTRIBUTIONS[lib])
    except PackageNotFoundError:
        # mcptrio run from the checkout without being installed.
        return "checkout"


def available_libs(wanted: list[str]) -> tuple[list[str], dict[str, str]]:
    libs: list[str] = []
    versions: dict[str, str] = {}
    for lib in wanted:
        found = library_version(lib)
        if found is None:
            hint = INSTALL_HINTS.get(lib, "pip install -e .")
            log(f"NOTE: {lib} is not installed; running without it ({hint}, or the bench extra)")
            continue
        libs.append(lib)
        # The floor's "version" is its event loop's (it has no package of its own).
        versions[lib] = f"trio {found}" if lib == "floor" else found
    return libs, versions


def http_runner_class() -> Any:
    """``benchmarks.http.runner.HttpRunner``, or None (said on stderr) if it cannot load."""
    try:
        from .http.runner import HttpRunner
    except ImportError as error:
        log(f"NOTE: the HTTP runner is not available ({error}); skipping the HTTP transports")
        return None
    return HttpRunner


def measure_capacity(libs: list[str], sessions: int, quick: bool) -> list[dict[str, Any]]:
    try:
        from .capacity import measure
    except ImportError as error:
        log(f"NOTE: the capacity measurements are not available ({error}); skipping them")
        return []
    records: list[dict[str, Any]] = []
    for lib in (lib for lib in CAPACITY_LIBS if lib in libs):
        started = time.perf_counter()
        what = "quick, fewer sessions" if quick else f"{sessions} sessions"
        log(f"capacity {lib} ({what}) ...")
        record = dict(measure(lib, sessions=sessions, quick=quick))
        took = time.perf_counter() - started
        log(f"capacity {lib}: {record.get('error') or 'done'} ({took:.1f} s)")
        records.append(record)
    return records


def write_report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """The report's files; without matplotlib, the table and the JSON file only."""
    from .report import format_markdown, results_json, write_results

    try:
        return write_results(results, out_dir)
    except ImportError as error:
        log(f"NOTE: no charts ({error}; pip install matplotlib, or the bench extra)")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "results.json", out_dir / "results.md"]
    paths[0].write_text(results_json(results), encoding="utf-8")
    paths[1].write_text(format_markdown(results), encoding="utf-8")
    return paths


def output_dir(args: argparse.Namespace) -> Path:
    if args.output_dir is not None:
        return Path(args.output_dir)
    name = "latest-scale-out" if args.scale_out else "latest-sweep" if args.sweep else "latest"
    return RESULTS_DIR / (f"{name}-quick" if args.quick else name)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.scale_out:
        from .scale_out import main as scale_out

        return scale_out(
            repeat=args.repeat,
            duration=args.duration,
            warmup=args.warmup,
            eras=args.scale_out_eras,
            stores=args.scale_out_stores,
            redis_url=args.redis,
            out_dir=output_dir(args),
        )
    started = time.perf_counter()
    libs, versions = available_libs(args.libs)
    if not libs:
        log("Nothing to run: none of the libraries is installed.")
        return 1
    transports = list(args.transports)
    http_runner = None
    if any(t in HTTP_TRANSPORTS for t in transports):
        http_runner = http_runner_class()
        if http_runner is None:
            transports = [t for t in transports if t not in HTTP_TRANSPORTS]

    def runner_for(lib: str, transport: str) -> AbstractContextManager[Runner]:
        if transport in HTTP_TRANSPORTS:
            assert http_runner is not None
            runner: AbstractContextManager[Runner] = http_runner(lib, transport)
            return runner
        return WorkerRunner(lib, transport)

    plans = plan(libs, transports, args.workloads, args.loads)
    total = sum(tp.runs(args.repeat) for tp in plans)
    log(
        f"{total} runs: {len(plans)} transports, {', '.join(libs)}, {args.repeat} repeat(s); "
        f"{args.warmup:g} s warm-up + {args.duration:g} s per run"
    )
    runs = run_matrix(
        plans,
        runner_for,
        repeat=args.repeat,
        duration=args.duration,
        warmup=args.warmup,
        progress=Progress(total),
    )
    capacity = (
        [] if args.no_capacity else measure_capacity(libs, args.capacity_sessions, args.quick)
    )
    sweep = None
    if any(w in SWEEP_WORKLOADS and w != "read-100k" for w in args.workloads):
        from .floor import measure_floor

        log("the payload sweep's floor (the cheapest encode and decode of each answer) ...")
        sweep = {"floor_us": measure_floor(tuple(args.workloads))}
    results = assemble(
        runs,
        capacity,
        versions=versions,
        duration=args.duration,
        warmup=args.warmup,
        repeat=args.repeat,
        quick=args.quick,
        total_wall_s=time.perf_counter() - started,
        sweep=sweep,
    )
    out_dir = output_dir(args)
    written = write_report(results, out_dir)
    try:
        shown = out_dir.resolve().relative_to(REPO_ROOT)
    except ValueError:
        shown = out_dir
    log(f"wrote {', '.join(p.name for p in written)} to {shown}/")
    log(f"whole run: {results['meta']['total_wall_s']:.0f} s")
    failed = failures(results)
    for line in failed:
        log(f"FAILED: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
