"""``python -m benchmarks.compare_checkouts OLD NEW``: mcptrio against itself, two checkouts.

A change that must not make mcptrio slower is measured here: each checkout runs its *own*
``python -m benchmarks --libs mcptrio`` (so each measures with the driver written for its own
API), in alternating order, round after round, on the same cells; the table gives each side's
median calls/s over the rounds and the ratio NEW / OLD. Interleaving rounds, and reversing the
order every round, spreads the noise of a shared machine over both sides alike.

Runs never assert a timing; the ratio is for a person (or a closing note) to read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .matrix import LOADS, TRANSPORTS, WORKLOADS

Cell = tuple[str, str, str]


def run_checkout(checkout: Path, cell_args: list[str], output: Path) -> dict[Cell, float]:
    """One ``python -m benchmarks`` run of ``checkout`` on its own code: calls/s per cell."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    command = [sys.executable, "-m", "benchmarks", "--libs", "mcptrio", "--no-capacity"]
    command += ["--output-dir", str(output), *cell_args]
    subprocess.run(command, cwd=checkout, env=env, check=True, stdout=subprocess.DEVNULL)
    results = json.loads((output / "results.json").read_text())
    return {
        (cell["transport"], cell["workload"], cell["load"]): float(cell["calls_per_s"])
        for cell in results["cells"]
        if "calls_per_s" in cell
    }


def table(old: dict[Cell, list[float]], new: dict[Cell, list[float]]) -> str:
    """The Markdown table: each side's median calls/s and the ratio NEW / OLD per cell."""
    lines = [
        "| transport | workload | load | old calls/s | new calls/s | new / old |",
        "|---|---|---|---:|---:|---:|",
    ]
    for cell in sorted(set(old) | set(new)):
        before = statistics.median(old[cell]) if old.get(cell) else None
        after = statistics.median(new[cell]) if new.get(cell) else None
        ratio = f"{after / before:.3f}" if before and after else "-"
        lines.append(f"| {' | '.join(cell)} | {before or 0:,.0f} | {after or 0:,.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.compare_checkouts", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("old", type=Path, help="the checkout measured as the baseline")
    parser.add_argument("new", type=Path, help="the checkout compared with it")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell a round (>= 3)")
    parser.add_argument("--duration", type=float, default=0.5)
    parser.add_argument("--transports", nargs="+", choices=TRANSPORTS, default=["in-memory"])
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=["call"])
    parser.add_argument("--loads", nargs="+", choices=LOADS, default=["x1", "x100"])
    args = parser.parse_args(argv)
    cell_args = ["--repeat", str(args.repeat), "--duration", str(args.duration)]
    cell_args += ["--transports", *args.transports, "--workloads", *args.workloads]
    cell_args += ["--loads", *args.loads]
    sides = {"old": args.old.resolve(), "new": args.new.resolve()}
    figures: dict[str, dict[Cell, list[float]]] = {"old": {}, "new": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            order = ["old", "new"] if round_index % 2 == 0 else ["new", "old"]
            for side in order:
                output = Path(scratch) / f"{side}-{round_index}"
                for cell, value in run_checkout(sides[side], cell_args, output).items():
                    figures[side].setdefault(cell, []).append(value)
                print(f"round {round_index + 1}/{args.rounds}: {side} done", file=sys.stderr)
    print(table(figures["old"], figures["new"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
