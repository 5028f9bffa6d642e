"""``python -m benchmarks.report results.json [--out DIR]``: the report again from saved results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.report import write_results
from benchmarks.report.publish import DOCS_PAGE, PublishError, publish


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.report",
        description="Write results.md, results.json and the PNG charts from a saved results.json.",
    )
    parser.add_argument("results", type=Path, help="a results.json written by python -m benchmarks")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the folder to write into (default: the one holding the results file)",
    )
    parser.add_argument(
        "--publish",
        action="store_true",
        help=f"also draw the charts into docs/benchmarks/ and put the tables in the marked"
        f" section of {DOCS_PAGE.relative_to(DOCS_PAGE.parent.parent)}",
    )
    parser.add_argument("--page", type=Path, default=DOCS_PAGE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        results = json.loads(args.results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        parser.error(f"cannot read {args.results}: {exc}")
    if not isinstance(results, dict) or not isinstance(results.get("cells", []), list):
        parser.error(f"{args.results} is not a benchmark results document")
    out_dir = args.out if args.out is not None else args.results.parent
    written = write_results(results, out_dir)
    if args.publish:
        try:
            written += publish(results, args.page)
        except PublishError as exc:
            parser.error(str(exc))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
