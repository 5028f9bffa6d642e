"""The report's payload sweep: each library's time per ``read-*`` call beside the floor.

``python -m benchmarks --sweep`` measures the ``matrix.SWEEP_WORKLOADS`` (``resources/read`` of
1 KiB to 1 MiB of text, one caller) and the floor (``benchmarks/floor.py``: encoding the same
answer as cheaply as known, orjson writing a long text, and decoding it with msgspec, nothing
else), which the Results document carries as ``sweep.floor_us``. The section has a table per
transport: each library's median time per call (p50; one caller, so it is the time a call
takes, and unlike calls/s it leaves out the moments the process waited for a core on a busy
machine), the floor, mcptrio's speed-up over each other library (their p50 over mcptrio's), and
mcptrio's p50 over the floor.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchmarks.matrix import FLOOR, STATELESS_LIBS, SWEEP_LOAD, SWEEP_SIZES, SWEEP_WORKLOADS
from benchmarks.report import formatting
from benchmarks.report.document import (
    Results,
    cells_by_key,
    figure,
    handshake_libs,
    lib_title,
    libs_in,
    ordered,
    transports_in,
)

__all__ = ["sweep_section"]

_SIZE_TITLES = {
    "read-1k": "1 KiB",
    "read-10k": "10 KiB",
    "read-100k": "100 KiB",
    "read-1m": "1 MiB",
}


def sweep_section(results: Results, titles: Mapping[str, str]) -> str | None:
    """The "Payload sweep" section, or ``None`` when the run measured no sweep workload other
    than ``read-100k`` (which the matrix has anyway)."""
    floor = results.get("sweep", {}).get("floor_us", {})
    cells = [
        c
        for c in results.get("cells", [])
        if c["workload"] in SWEEP_SIZES
        and c["load"] == SWEEP_LOAD
        and c["lib"] not in STATELESS_LIBS
        # The sweep sets each library beside its own floor, the encoding's: the transports'
        # floor (``matrix.FLOOR``) is in the transport tables.
        and c["lib"] != FLOOR
    ]
    if not any(c["workload"] != "read-100k" for c in cells):
        return None
    by_key = cells_by_key(results)
    parts = [
        "## Payload sweep\n\n"
        "`resources/read` of a text resource of each size, one caller (`x1`): the median time "
        "of a call (p50), beside the floor, encoding the same answer as cheaply as known "
        "(orjson writing a long text) and decoding it with msgspec, nothing else "
        "(`benchmarks/floor.py`). *vs X*: X's p50 over mcptrio's; *over floor*: "
        "mcptrio's p50 over the floor."
    ]
    for transport in transports_in({"cells": cells}):
        here = [c for c in cells if c["transport"] == transport]
        libs = handshake_libs(ordered((c["lib"] for c in here), tuple(libs_in(results))))
        others = [lib for lib in libs if lib != "mcptrio"]
        header = ["size", *(lib_title(lib) for lib in libs), "floor"]
        if "mcptrio" in libs:
            header += [f"vs {lib_title(lib)}" for lib in others] + ["over floor"]
        rows: list[list[str]] = []
        for workload in (w for w in SWEEP_WORKLOADS if any(c["workload"] == w for c in here)):
            row_cells = {lib: by_key.get((lib, transport, workload, SWEEP_LOAD)) for lib in libs}
            row = [_SIZE_TITLES.get(workload, workload)]
            row += [formatting.latency(_p50(row_cells[lib])) for lib in libs]
            floor_us = floor.get(workload)
            row.append(formatting.latency(floor_us))
            if "mcptrio" in libs:
                mine_us = _p50(row_cells["mcptrio"])
                row += [formatting.ratio(_over(_p50(row_cells[lib]), mine_us)) for lib in others]
                row.append(formatting.ratio(_over(mine_us, floor_us)))
            rows.append(row)
        align = ["---"] + ["---:"] * (len(header) - 1)
        table = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
        table += ["| " + " | ".join(row) + " |" for row in rows]
        parts.append(f"### {titles.get(transport, transport)}\n\n" + "\n".join(table))
    return "\n\n".join(parts)


def _p50(cell: Mapping[str, object] | None) -> float | None:
    return figure(cell, "p50_us") if cell is not None else None


def _over(value: float | None, reference: float | None) -> float | None:
    return value / reference if value is not None and reference else None
