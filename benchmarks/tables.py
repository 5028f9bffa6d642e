"""Turning cell results into the summary table and the JSON results file."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

LIB_TITLES = {
    "mcptrio": "mcptrio calls/s",
    "mcptrio-lowlevel": "mcptrio low-level calls/s",
    "sdk": "official SDK calls/s",
}

#: Issue 3: the decorator server keeps at least this share of the low-level session's rate.
DECORATOR_TARGET = 0.85


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
            cpu_rates = [r["calls_per_cpu_s"] for r in results if r.get("calls_per_cpu_s")]
            row[lib] = {
                "median_calls_per_s": statistics.median(rates) if rates else None,
                "median_calls_per_cpu_s": statistics.median(cpu_rates) if cpu_rates else None,
                "runs": results,
            }
        mcptrio = row.get("mcptrio", {}).get("median_calls_per_s")
        sdk = row.get("sdk", {}).get("median_calls_per_s")
        row["ratio"] = mcptrio / sdk if mcptrio and sdk else None
        row["decorator"] = _decorator_share(row)
        rows.append(row)
    return rows


def _decorator_share(row: dict[str, Any]) -> dict[str, Any] | None:
    """The decorator server's rate as a share of the low-level session's, and its cost.

    ``share`` is the ratio of the medians; ``paired_shares`` holds the ratio within each repeat
    (the two runs are adjacent in time, so slow drift in the machine's load cancels out).
    """
    decorated, lowlevel = row.get("mcptrio"), row.get("mcptrio-lowlevel")
    if decorated is None or lowlevel is None:
        return None
    top, bottom = decorated["median_calls_per_s"], lowlevel["median_calls_per_s"]
    if not top or not bottom:
        return None
    paired = [
        d["calls_per_s"] / low["calls_per_s"]
        for d, low in zip(decorated["runs"], lowlevel["runs"], strict=False)
        if "error" not in d and "error" not in low and low["calls_per_s"] > 0
    ]
    share = top / bottom
    # Calls per CPU second of client and server together compare the two servers with other
    # programs' use of the cores left out; only runs whose CPU time covers the server count.
    cpu_top, cpu_bottom = decorated["median_calls_per_cpu_s"], lowlevel["median_calls_per_cpu_s"]
    covered = all(
        r.get("cpu_includes_server", False)
        for r in (*decorated["runs"], *lowlevel["runs"])
        if "error" not in r
    )
    cpu_share = cpu_top / cpu_bottom if covered and cpu_top and cpu_bottom else None
    return {
        "share": share,
        "cost": 1 - share,
        "paired_shares": [round(p, 4) for p in paired],
        "cpu_share": cpu_share,
        "meets_target": share >= DECORATOR_TARGET,
    }


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
    return table(header, body)


def format_decorator_table(rows: list[dict[str, Any]]) -> str | None:
    """What ``@server.tool()`` costs over a bare session, per cell; ``None`` if not measured."""
    measured = [row for row in rows if "mcptrio-lowlevel" in row]
    if not measured:
        return None
    header = [
        "workload",
        "callers",
        "decorator calls/s",
        "low-level calls/s",
        "decorator / low-level",
        "per repeat",
        "per CPU second",
        "decorator cost",
        f"share >= {DECORATOR_TARGET:.0%}",
    ]
    body: list[list[str]] = []
    for row in measured:
        decorator = row.get("decorator")
        values = [
            row["workload"],
            str(row["callers"]),
            _rate(row.get("mcptrio")),
            _rate(row.get("mcptrio-lowlevel")),
        ]
        if decorator is None:
            values += ["-", "-", "-", "-", "-"]
        else:
            paired = decorator["paired_shares"]
            spread = f"{min(paired):.0%}-{max(paired):.0%}" if paired else "-"
            values += [
                f"{decorator['share']:.1%}",
                spread,
                "-" if decorator["cpu_share"] is None else f"{decorator['cpu_share']:.1%}",
                f"{decorator['cost']:.1%}",
                "yes" if decorator["meets_target"] else "NO",
            ]
        body.append(values)
    return table(header, body)


def table(header: list[str], body: list[list[str]]) -> str:
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
