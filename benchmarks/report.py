"""Turning cell results into the summary table and the JSON results file."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

LIB_TITLES = {"mcptrio": "mcptrio calls/s", "sdk": "official SDK calls/s"}


def summarise(
    runs: dict[tuple[str, int, str], list[dict[str, Any]]], libs: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per (workload, callers): each library's runs, median, and the median ratio."""
    keys = sorted({(w, c) for (w, c, _lib) in runs}, key=_row_order)
    rows: list[dict[str, Any]] = []
    for workload, callers in keys:
        row: dict[str, Any] = {"workload": workload, "callers": callers}
        for lib in libs:
            results = runs.get((workload, callers, lib), [])
            rates = [r["calls_per_s"] for r in results if "error" not in r]
            row[lib] = {
                "median_calls_per_s": statistics.median(rates) if rates else None,
                "runs": results,
            }
        mcptrio = row.get("mcptrio", {}).get("median_calls_per_s")
        sdk = row.get("sdk", {}).get("median_calls_per_s")
        row["ratio"] = mcptrio / sdk if mcptrio and sdk else None
        rows.append(row)
    return rows


def _row_order(key: tuple[str, int]) -> tuple[int, int]:
    workload, callers = key
    return (0 if workload == "in-memory" else 1, callers)


def format_table(rows: list[dict[str, Any]]) -> str:
    header = [
        "workload",
        "callers",
        LIB_TITLES["mcptrio"],
        LIB_TITLES["sdk"],
        "ratio (mcptrio/sdk)",
    ]
    body = [
        [
            row["workload"],
            str(row["callers"]),
            _rate(row.get("mcptrio")),
            _rate(row.get("sdk")),
            "-" if row["ratio"] is None else f"{row['ratio']:.2f}x",
        ]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    lines = [_line(header, widths), rule]
    lines += [_line(line, widths) for line in body]
    return "\n".join(lines)


def _rate(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return "not run"
    median = cell["median_calls_per_s"]
    if median is None:
        return "failed" if cell["runs"] else "not run"
    return f"{median:,.0f}"


def _line(values: list[str], widths: list[int]) -> str:
    cells = [
        v.ljust(w) if i == 0 else v.rjust(w)
        for i, (v, w) in enumerate(zip(values, widths, strict=True))
    ]
    return "| " + " | ".join(cells) + " |"


def write_json(path: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n")
