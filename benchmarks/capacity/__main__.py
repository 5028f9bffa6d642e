"""``python -m benchmarks.capacity [--libs mcptrio sdk fastmcp] [--sessions N] [--quick] [--json]
[--held [--held-sessions N]]``

Measures each library's capacity figures in turn and prints a Markdown table (``--json``: the
records as JSON too). Progress goes to stderr. ``--held`` adds the held-sessions cell
(:mod:`benchmarks.capacity.held`): 100,000 idle sessions in one server process within 1 GiB
(1,000 with ``--quick``; ``--held-sessions`` sets the count). It takes minutes, so it is off
unless asked for.
"""

from __future__ import annotations

import argparse
import json
import sys

from .held import HELD_SESSIONS, QUICK_HELD_SESSIONS
from .measure import LIBS, CapacityRecord, measure

_COLUMNS = (
    ("lib", "lib", "{}"),
    ("idle KiB/session", "rss_idle_kib_per_session", "{:.1f}"),
    ("GET stream KiB/session", "rss_get_stream_kib_per_session", "{:.1f}"),
    ("open p50 µs", "session_open_p50_us", "{:.0f}"),
    ("open p99 µs", "session_open_p99_us", "{:.0f}"),
    ("import s", "import_s", "{:.3f}"),
    ("stdio start s", "stdio_start_s", "{:.3f}"),
)
#: Shown only when a record has the held-sessions cell.
_HELD_COLUMNS = (
    ("held idle sessions", "held_sessions", "{:,}"),
    ("held RSS MiB", "held_rss_mib", "{:.0f}"),
    ("within 1 GiB", "held_within_budget", "{}"),
)


def format_table(records: list[CapacityRecord]) -> str:
    """The records as a Markdown table; a missing figure shows as ``-``, errors follow it."""
    columns: tuple[tuple[str, str, str], ...] = _COLUMNS
    if any("held_sessions" in record for record in records):
        columns += _HELD_COLUMNS
    lines = [
        "| " + " | ".join(title for title, _, _ in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for record in records:
        cells = []
        for _, key, fmt in columns:
            value = record.get(key)
            cells.append("-" if value is None else fmt.format(value))
        lines.append("| " + " | ".join(cells) + " |")
    for record in records:
        if "notes" in record:
            lines.append(f"\n{record['lib']}: {record['notes']}")
        if "error" in record:
            lines.append(f"\n{record['lib']} error: {record['error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__)
    parser.add_argument("--libs", nargs="+", choices=LIBS, default=list(LIBS))
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--json", action="store_true", help="also print the records as JSON")
    parser.add_argument(
        "--held", action="store_true", help="add the held-sessions cell (takes minutes)"
    )
    parser.add_argument("--held-sessions", type=int, default=None, help="its session count")
    args = parser.parse_args(argv)
    held = None
    if args.held:
        held = args.held_sessions or (QUICK_HELD_SESSIONS if args.quick else HELD_SESSIONS)
    records: list[CapacityRecord] = []
    for lib in args.libs:
        print(f"capacity: {lib} ...", file=sys.stderr, flush=True)
        record = measure(lib, sessions=args.sessions, quick=args.quick, held=held)
        print(f"capacity: {lib} done in {record.get('elapsed_s')} s", file=sys.stderr, flush=True)
        records.append(record)
    print(format_table(records))
    if args.json:
        print(json.dumps(records, indent=2))


if __name__ == "__main__":
    main()
