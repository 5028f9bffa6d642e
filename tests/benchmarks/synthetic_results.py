"""A synthetic Results document shaped like the orchestrator's, for testing the report.

The figures are invented but plausible in their proportions (so the charts can be looked at);
they never leave the tests.
"""

from __future__ import annotations

import random
import statistics
from typing import Any

from benchmarks.matrix import (
    ERA_REFERENCE,
    FLOOR,
    HANDSHAKE_COUNTERPART,
    LIBS,
    TRANSPORTS,
    WORKLOADS,
    callers,
    cells_for,
    lib_has_transport,
)

#: calls/s of the `call` workload at x32, per (lib, transport).
_BASE_RATE = {
    "in-memory": {
        "mcptrio": 24_000,
        "sdk": 1_900,
        "sdk-legacy": 4_300,
        "fastmcp": 950,
        "mcptrio-stateless": 22_000,
        "sdk-stateless": 1_900,
        "floor": 60_000,
    },
    "stdio": {
        "mcptrio": 15_000,
        "sdk": 1_300,
        "sdk-legacy": 2_600,
        "fastmcp": 800,
        "mcptrio-stateless": 14_000,
        "sdk-stateless": 1_300,
        "floor": 45_000,
    },
    "http-json": {
        "mcptrio": 6_500,
        "sdk": 1_500,
        "fastmcp": 700,
        "mcptrio-stateless": 7_000,
        "sdk-stateless": 2_000,
        "floor": 30_000,
    },
    "http-sse": {
        "mcptrio": 5_200,
        "sdk": 640,
        "fastmcp": 450,
        "mcptrio-stateless": 6_000,
        "sdk-stateless": 1_800,
        "floor": 27_000,
    },
    "websocket": {"mcptrio": 9_800},
}
_WORKLOAD_FACTOR = {
    "call": 1.0,
    "call-sync": 0.9,
    "call-10k": 0.8,
    "list-50": 0.22,
    "read-1k": 0.9,
    "read-10k": 0.7,
    "read-100k": 0.3,
    "read-1m": 0.04,
}
_LOAD_FACTOR = {"x1": 0.55, "x16": 0.95, "x32": 1.0, "x100": 1.03, "s100x20": 0.3}

CAPACITY = {
    "mcptrio": (3.4, 10.8, 240.0, 610.0, 0.14, 0.21),
    "sdk": (37.2, 94.5, 1_850.0, 4_900.0, 0.96, 1.12),
    "fastmcp": (44.0, 112.0, 2_400.0, 7_100.0, 1.62, 1.95),
}


def run_record(lib: str, transport: str, workload: str, load: str, rng: random.Random) -> Any:
    rate = (
        _BASE_RATE[transport][lib]
        * _WORKLOAD_FACTOR[workload]
        * _LOAD_FACTOR[load]
        * rng.uniform(0.93, 1.07)
    )
    concurrency = callers(load) if load.startswith("x") else 100
    p50 = concurrency / rate * 1e6 * rng.uniform(0.85, 0.95)
    scope = "client+server" if transport in ("in-memory", "websocket") else "server"
    duration = 2.0
    record: dict[str, Any] = {
        "lib": lib,
        "transport": transport,
        "workload": workload,
        "load": load,
        "calls": round(rate * duration),
        "elapsed_s": duration,
        "calls_per_s": rate,
        "p50_us": p50,
        "p90_us": p50 * 1.5,
        "p99_us": p50 * (2.4 if lib == "mcptrio" else 3.5),
        "p999_us": p50 * (4.0 if lib == "mcptrio" else 7.0),
        "cpu_s": duration * 0.95,
        "cpu_us_per_call": 0.95e6 / rate,
        "cpu_scope": scope,
    }
    if lib == "sdk-stateless" and transport == "http-sse":
        # The SDK's SSE mode answers a quick stateless-era request as JSON.
        record["json_answers"] = record["calls"]
    if load == "s100x20":
        record |= {"sessions": round(rate * duration / 20), "open_p50_us": 300.0}
        record["open_p99_us"] = 900.0
    return record


def cell(runs: list[Any]) -> dict[str, Any]:
    first = runs[0]
    out: dict[str, Any] = {k: first[k] for k in ("lib", "transport", "workload", "load")}
    out["runs"] = runs
    good = [r for r in runs if "error" not in r]
    if good:
        for field in ("calls_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "cpu_us_per_call"):
            out[field] = statistics.median(r[field] for r in good)
        out["cpu_scope"] = good[0]["cpu_scope"]
    return out


def synthetic_results(
    *,
    libs: tuple[str, ...] = LIBS,
    transports: tuple[str, ...] = TRANSPORTS,
    repeat: int = 3,
    seed: int = 7,
    workloads: tuple[str, ...] = WORKLOADS,
) -> dict[str, Any]:
    """Every cell of the matrix for ``libs`` x ``transports`` x ``workloads``, medians,
    speedups, capacity."""
    rng = random.Random(seed)
    cells: list[dict[str, Any]] = []
    for transport in transports:
        for lib in libs:
            if not lib_has_transport(lib, transport):
                continue
            for workload, load in cells_for(lib, transport):
                if workload not in workloads:
                    continue
                runs = [run_record(lib, transport, workload, load, rng) for _ in range(repeat)]
                cells.append(cell(runs))
    add_speedups(cells)
    return {
        "meta": {
            "date": "2026-11-22T09:30:00+00:00",
            "machine": {
                "cpu_model": "AMD EPYC",
                "cores": 2,
                "python": "3.11.7",
                "platform": "Linux-6.18-x86_64-with-glibc2.36",
            },
            "versions": {"mcptrio": "0.1.0", "mcp": "2.3.0", "fastmcp": "4.1.2"},
            "duration_s": 2.0,
            "warmup_s": 0.5,
            "repeat": repeat,
            "quick": False,
            "total_wall_s": 781.0,
        },
        "cells": cells,
        "capacity": [
            {
                "lib": lib,
                "sessions": 1000,
                "rss_idle_kib_per_session": figures[0],
                "rss_get_stream_kib_per_session": figures[1],
                "session_open_p50_us": figures[2],
                "session_open_p99_us": figures[3],
                "import_s": figures[4],
                "stdio_start_s": figures[5],
            }
            for lib, figures in CAPACITY.items()
            if lib in libs
        ],
    }


def add_speedups(cells: list[dict[str, Any]]) -> None:
    """Set each cell's ``speedup`` (the calls/s of mcptrio of its era over its own), a
    stateless cell's ``vs_handshake`` and every library's ``of_floor`` where both figures
    exist, as the orchestrator does (the floor's cells get none)."""
    rates = {
        (c["lib"], c["transport"], c["workload"], c["load"]): c["calls_per_s"]
        for c in cells
        if "calls_per_s" in c
    }
    for c in cells:
        where = (c["transport"], c["workload"], c["load"])
        c.pop("speedup", None)
        c.pop("vs_handshake", None)
        c.pop("of_floor", None)
        if c["lib"] == FLOOR:
            continue
        floor = rates.get((FLOOR, *where))
        if floor is not None and "calls_per_s" in c:
            c["of_floor"] = c["calls_per_s"] / floor
        reference = rates.get((ERA_REFERENCE[c["lib"]], *where))
        if reference is not None and "calls_per_s" in c:
            c["speedup"] = reference / c["calls_per_s"]
        handshake = rates.get((HANDSHAKE_COUNTERPART.get(c["lib"], ""), *where))
        if handshake is not None and "calls_per_s" in c:
            c["vs_handshake"] = c["calls_per_s"] / handshake
