"""The HTTP benchmark's tables: calls/s, server CPU per call, ratios to the SDK, targets."""

from __future__ import annotations

import statistics
from typing import Any

SDK = "sdk-uvicorn"
#: Issue 4's targets on the 2-core machine: calls/s per mcptrio server, and the SDK multiple.
TARGETS = {"mcptrio-h11": 3000.0, "mcptrio-httptools": 8000.0}
SDK_MULTIPLE = 5.0
SHORT = {
    "mcptrio-h11": "h11",
    "mcptrio-httptools": "httptools",
    "mcptrio-hypercorn": "hypercorn",
    "sdk-uvicorn": "SDK",
}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarise(
    runs: dict[tuple[str, int, str], list[dict[str, Any]]], servers: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per (mode, connections): per server the median calls/s and CPU per call."""
    keys = sorted({(mode, conns) for (mode, conns, _server) in runs})
    rows: list[dict[str, Any]] = []
    for mode, conns in keys:
        row: dict[str, Any] = {"mode": mode, "connections": conns, "servers": {}}
        for server in servers:
            results = runs.get((mode, conns, server), [])
            good = [r for r in results if "error" not in r]
            row["servers"][server] = {
                "median_calls_per_s": _median([r["calls_per_s"] for r in good]),
                "median_cpu_us_per_call": _median(
                    [r["server_cpu_us_per_call"] for r in good if r["server_cpu_us_per_call"]]
                ),
                "max_wrk_cpu_share": max((r["wrk_cpu_share"] or 0.0 for r in good), default=None),
                "errors": [r["error"] for r in results if "error" in r],
                "runs": results,
            }
        sdk = row["servers"].get(SDK, {}).get("median_calls_per_s")
        row["ratios"] = {
            server: (cell["median_calls_per_s"] / sdk)
            if sdk and cell["median_calls_per_s"]
            else None
            for server, cell in row["servers"].items()
            if server != SDK
        }
        rows.append(row)
    return rows


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_table(rows: list[dict[str, Any]], servers: tuple[str, ...]) -> str:
    """Markdown: calls/s (server CPU µs per call) per server, then each mcptrio / SDK ratio."""
    others = [s for s in servers if s != SDK]
    header = ["mode", "conns"]
    header += [f"{SHORT[s]} calls/s (CPU µs/call)" for s in servers]
    if SDK in servers:
        header += [f"{SHORT[s]} / SDK" for s in others]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row["mode"], str(row["connections"])]
        for server in servers:
            cell = row["servers"][server]
            rate, cpu = cell["median_calls_per_s"], cell["median_cpu_us_per_call"]
            text = "failed" if rate is None else f"{rate:,.0f} ({_fmt(cpu, '.0f')})"
            cells.append(text)
        if SDK in servers:
            cells += [_fmt(row["ratios"].get(s), ".2f") for s in others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_targets(rows: list[dict[str, Any]]) -> str:
    """Issue 4's targets, per cell: the rate floor and 5x the SDK."""
    lines = [
        "| server | mode | conns | calls/s | target | x SDK | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for server, floor in TARGETS.items():
            cell = row["servers"].get(server)
            if cell is None:
                continue
            rate = cell["median_calls_per_s"]
            ratio = row["ratios"].get(server)
            met = rate is not None and rate >= floor and (ratio is None or ratio >= SDK_MULTIPLE)
            lines.append(
                f"| {SHORT[server]} | {row['mode']} | {row['connections']} | "
                f"{_fmt(rate, ',.0f')} | >= {floor:,.0f} and >= {SDK_MULTIPLE:.0f}x SDK | "
                f"{_fmt(ratio, '.2f')} | {'yes' if met else 'no'} |"
            )
    return "\n".join(lines)


def errors(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{row['mode']} c={row['connections']} {server}: {message}"
        for row in rows
        for server, cell in row["servers"].items()
        for message in cell["errors"]
    ]
