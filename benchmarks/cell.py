"""Run one benchmark cell in this process and print its result as one JSON line.

    python -m benchmarks.cell <lib> <workload> <callers> <duration> [--warmup S] [--sdk-mode M]

``lib`` is ``mcptrio`` (the decorator server), ``mcptrio-lowlevel`` (a bare session with a
hand-written handler) or ``sdk``; ``workload`` is ``in-memory`` or ``stdio``. Only the chosen
library is imported, so they never share an event loop or interpreter state.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import LIBS, SDK_MODES, WORKLOADS


def default_warmup(duration: float) -> float:
    """Warm-up before the window opens: a quarter of the duration, at most half a second."""
    return min(0.5, duration / 4)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cell", description=__doc__)
    parser.add_argument("lib", choices=LIBS)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("callers", type=int, help="concurrent callers in one session")
    parser.add_argument("duration", type=float, help="seconds of measurement after warm-up")
    parser.add_argument("--warmup", type=float, default=None, help="seconds of warm-up")
    parser.add_argument("--sdk-mode", choices=SDK_MODES, default="auto")
    args = parser.parse_args(argv)
    if args.callers < 1 or args.duration <= 0:
        parser.error("callers must be >= 1 and duration > 0")
    return args


def run_cell(args: argparse.Namespace) -> dict[str, Any]:
    warmup = default_warmup(args.duration) if args.warmup is None else args.warmup
    if args.lib in ("mcptrio", "mcptrio-lowlevel"):
        from . import _run_mcptrio

        measured = _run_mcptrio.run(
            args.workload,
            args.callers,
            warmup,
            args.duration,
            lowlevel=args.lib == "mcptrio-lowlevel",
        )
    else:
        from . import _run_sdk

        measured = _run_sdk.run(args.workload, args.callers, warmup, args.duration, args.sdk_mode)
    return {
        "lib": args.lib,
        "workload": args.workload,
        "callers": args.callers,
        "duration_s": args.duration,
        "warmup_s": warmup,
        **measured,
    }


def main(argv: list[str] | None = None) -> None:
    result = run_cell(parse_args(argv))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
