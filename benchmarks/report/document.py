"""Reading the Results document: its cells by key, the libraries in report order, the meta line.

The orchestrator hands the report one JSON-ready dict (the shape is in
``.helpers/bench_contract.md`` and ``benchmarks/README.md``): ``meta``, ``cells`` (one per
library x transport x workload x load, with the medians of its runs) and ``capacity`` (one
record per library). Every reader here tolerates a part being absent, so that a partial run
(``--libs``, ``--transports``, a crashed worker) still gets a report of what it did measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks.matrix import ALL_WORKLOADS, FLOOR, LIBS, LOADS, STATELESS_LIBS, TRANSPORTS

Results = Mapping[str, Any]
Cell = Mapping[str, Any]
CellKey = tuple[str, str, str, str]

#: How each library is named in tables and legends (short: tables have a column per library).
LIB_TITLES: dict[str, str] = {
    "mcptrio": "mcptrio",
    "sdk": "SDK",
    "sdk-legacy": "SDK legacy",
    "fastmcp": "FastMCP",
    "mcptrio-stateless": "mcptrio stateless",
    "sdk-stateless": "SDK stateless",
    FLOOR: "floor",
}

#: What each library is, said once above the tables.
LIB_DESCRIPTIONS: dict[str, str] = {
    "mcptrio": "mcptrio's `Server` and `open_client`",
    "sdk": 'the official SDK\'s `MCPServer` driven by its `Client` (default `mode="auto"`)',
    "sdk-legacy": 'the same server and `Client(mode="legacy")` (in memory and stdio only)',
    "fastmcp": "FastMCP's server and its own `Client`",
    "mcptrio-stateless": "the same mcptrio server, spoken to in the stateless era (revision"
    " 2026-07-28, no session): `open_client` pinned to it; over HTTP, wrk's stateless POSTs",
    "sdk-stateless": 'the same SDK server, `Client(mode="2026-07-28")`; over HTTP, wrk\'s'
    " stateless POSTs",
    FLOOR: "no library: the least each transport costs, a fixed answer of the workload's bytes"
    " with the request's id and no MCP work (HTTP: a bare Trio + httptools server driven by wrk;"
    " stdio: a line echo; in memory: a round trip over a Trio memory channel)",
}

#: The package whose version stands for each library in ``meta.versions`` when the library's own
#: key is not there (``sdk-legacy`` is the ``sdk`` server with another client mode).
VERSION_KEYS: dict[str, tuple[str, ...]] = {
    "mcptrio": ("mcptrio",),
    "sdk": ("sdk", "mcp"),
    "sdk-legacy": ("sdk-legacy", "sdk", "mcp"),
    "fastmcp": ("fastmcp",),
    "mcptrio-stateless": ("mcptrio-stateless", "mcptrio"),
    "sdk-stateless": ("sdk-stateless", "sdk", "mcp"),
    FLOOR: (FLOOR, "trio"),
}


def cells_by_key(results: Results) -> dict[CellKey, Cell]:
    """Every cell under (lib, transport, workload, load)."""
    return {
        (c["lib"], c["transport"], c["workload"], c["load"]): c for c in results.get("cells", [])
    }


def ordered(values: Iterable[str], order: tuple[str, ...]) -> list[str]:
    """``values`` without repeats, those in ``order`` first in its order, then the rest sorted."""
    present = set(values)
    return [v for v in order if v in present] + sorted(present.difference(order))


def libs_in(results: Results) -> list[str]:
    """The libraries with at least one cell or capacity record, in report order."""
    names = [c["lib"] for c in results.get("cells", [])]
    names += [r["lib"] for r in results.get("capacity", []) if "lib" in r]
    return ordered(names, LIBS)


def handshake_libs(libs: Iterable[str]) -> list[str]:
    """``libs`` without the stateless era's (which have a table of their own, and no chart)."""
    return [lib for lib in libs if lib not in STATELESS_LIBS]


def peers(libs: Iterable[str]) -> list[str]:
    """The libraries mcptrio is compared with (a *vs X* column): not mcptrio, not the floor."""
    return [lib for lib in libs if lib not in ("mcptrio", FLOOR)]


def transports_in(results: Results) -> list[str]:
    return ordered((c["transport"] for c in results.get("cells", [])), TRANSPORTS)


def workloads_in(cells: Iterable[Cell]) -> list[str]:
    return ordered((c["workload"] for c in cells), ALL_WORKLOADS)


def loads_in(cells: Iterable[Cell]) -> list[str]:
    return ordered((c["load"] for c in cells), LOADS)


def figure(cell: Cell | None, field: str) -> float | None:
    """A median of the cell (``calls_per_s``, ``p99_us``...), or None if it has none."""
    if cell is None:
        return None
    value = cell.get(field)
    return float(value) if isinstance(value, int | float) else None


def failed(cell: Cell | None) -> bool:
    """Whether the cell was attempted and no run of it succeeded."""
    return cell is not None and figure(cell, "calls_per_s") is None


def run_errors(cell: Cell) -> list[str]:
    """The error of every failed run of the cell, plus the cell's own if it has one."""
    errors = [str(r["error"]) for r in cell.get("runs", []) if r.get("error")]
    if cell.get("error"):
        errors.append(str(cell["error"]))
    return errors


def speedup(cell: Cell | None, reference: Cell | None) -> float | None:
    """mcptrio's calls/s over this cell's: the cell's own ``speedup``, or computed from both."""
    given = figure(cell, "speedup")
    if given is not None:
        return given
    mine, theirs = figure(reference, "calls_per_s"), figure(cell, "calls_per_s")
    return mine / theirs if mine is not None and theirs else None


def of_floor(cell: Cell | None, floor: Cell | None) -> float | None:
    """This cell's calls/s over the floor's: the cell's own ``of_floor``, or computed."""
    given = figure(cell, "of_floor")
    if given is not None:
        return given
    mine, least = figure(cell, "calls_per_s"), figure(floor, "calls_per_s")
    return mine / least if mine is not None and least else None


def lib_title(lib: str) -> str:
    return LIB_TITLES.get(lib, lib)


def lib_version(results: Results, lib: str) -> str | None:
    versions: Mapping[str, Any] = results.get("meta", {}).get("versions", {})
    for key in VERSION_KEYS.get(lib, (lib,)):
        if versions.get(key):
            return str(versions[key])
    return None


def lib_label(results: Results, lib: str) -> str:
    """The library's title with its version, for legends: "official SDK 2.3.0"."""
    version = lib_version(results, lib)
    return f"{lib_title(lib)} {version}" if version else lib_title(lib)


def machine_summary(results: Results) -> str:
    """One line naming the machine: CPU model, cores, Python, platform (whatever meta has)."""
    machine: Mapping[str, Any] = results.get("meta", {}).get("machine", {})
    parts: list[str] = []
    cpu = _first(machine, "cpu_model", "cpu", "model", "processor")
    if cpu:
        parts.append(str(cpu))
    cores = _first(machine, "cores", "cpu_count", "cpus", "logical_cores")
    if cores:
        parts.append(f"{cores} cores")
    python = _first(machine, "python", "python_version")
    if python:
        parts.append(f"Python {python}")
    system = _first(machine, "platform", "os", "system")
    if system:
        parts.append(str(system))
    return ", ".join(parts) if parts else "machine not recorded"


def run_date(results: Results) -> str:
    """The run's date and time to the minute, from the ISO timestamp in meta."""
    date = str(results.get("meta", {}).get("date", ""))
    if not date:
        return "date not recorded"
    return date[:16].replace("T", " ") + (" UTC" if date.endswith(("Z", "+00:00")) else "")


def _first(mapping: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if mapping.get(key) not in (None, ""):
            return mapping[key]
    return None
