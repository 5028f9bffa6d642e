"""The benchmark run: which cells, in which order, on which runners; medians and the Results.

For each transport every library's runner is open at once (a worker process per library for
in-memory, stdio and WebSocket; ``benchmarks.http.runner.HttpRunner`` for the HTTP transports).
Within a repeat the cells go in ``matrix.cells_for`` order and, for each cell, the libraries one
after the other, in reverse order in the next repeat (A B, B A, ...) so that a drifting machine
hurts all of them alike. Then each cell's medians over its runs, the speedup of mcptrio over
each library, and the Results document the report writes (``.helpers/bench_contract.md``).

The pure parts (:func:`plan`, :func:`summarise`, :func:`assemble`) do no I/O.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from .matrix import (
    ALL_WORKLOADS,
    ERA_REFERENCE,
    FLOOR,
    HANDSHAKE_COUNTERPART,
    LIBS,
    LOADS,
    TRANSPORTS,
    WORKLOADS,
    RunRecord,
    cells_for,
    lib_has_transport,
)

#: The medians a cell reports (over its runs without error), as named in the contract.
MEDIAN_FIELDS = ("calls_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "cpu_us_per_call")
#: The library every handshake-era speedup is relative to (a stateless library's is relative
#: to ``mcptrio-stateless``: see ``matrix.ERA_REFERENCE``).
REFERENCE = "mcptrio"

CellKey = tuple[str, str, str, str]


class Runner(Protocol):
    def run(self, workload: str, load: str, duration: float, warmup: float) -> RunRecord: ...


@dataclass(frozen=True)
class TransportPlan:
    """The libraries measured over one transport and the (workload, load) cells, in run order.

    Not every library has every cell (the stateless libraries have no ``s100x20``):
    :meth:`libs_for` names those that do.
    """

    transport: str
    libs: tuple[str, ...]
    cells: tuple[tuple[str, str], ...]

    def libs_for(self, workload: str, load: str) -> tuple[str, ...]:
        return tuple(lib for lib in self.libs if (workload, load) in cells_for(lib, self.transport))

    def runs(self, repeat: int) -> int:
        return sum(len(self.libs_for(w, load)) for w, load in self.cells) * repeat


def plan(
    libs: Sequence[str],
    transports: Sequence[str] = TRANSPORTS,
    workloads: Sequence[str] = WORKLOADS,
    loads: Sequence[str] = LOADS,
) -> list[TransportPlan]:
    """Every transport with at least one library and one cell left after the filters."""
    plans: list[TransportPlan] = []
    for transport in (t for t in TRANSPORTS if t in transports):
        measured = tuple(lib for lib in LIBS if lib in libs and lib_has_transport(lib, transport))
        # Every cell some library has, in matrix order.
        wanted = {
            cell
            for lib in measured
            for cell in cells_for(lib, transport)
            if cell[0] in workloads and cell[1] in loads
        }
        cells = tuple((w, load) for w in ALL_WORKLOADS for load in LOADS if (w, load) in wanted)
        if cells:
            measured = tuple(
                lib for lib in measured if any(c in cells_for(lib, transport) for c in cells)
            )
            plans.append(TransportPlan(transport, measured, cells))
    return plans


def lib_order(libs: Sequence[str], repeat_index: int) -> list[str]:
    """The libraries in run order for a repeat: as given, then reversed, and so on."""
    return list(libs) if repeat_index % 2 == 0 else list(reversed(libs))


# ---------------------------------------------------------------- medians and the document


def summarise(runs: dict[CellKey, list[RunRecord]]) -> list[dict[str, Any]]:
    """One cell per key (in the order given): its runs, medians and speedup over mcptrio.

    ``speedup`` is mcptrio's calls/s over the cell's, mcptrio of the cell's own era
    (``matrix.ERA_REFERENCE``: ``sdk-stateless`` is compared with ``mcptrio-stateless``). A
    stateless library's cell also has ``vs_handshake``: its calls/s over its handshake-era
    counterpart's in the same transport, workload and load (``mcptrio-stateless`` over
    ``mcptrio``), when both were measured. Every cell but the floor's has ``of_floor``, its
    calls/s over the floor's in the same transport, workload and load (``matrix.FLOOR``), when
    both were measured; the floor's cells have no ``speedup``: the floor is no library.
    """
    cells: list[dict[str, Any]] = []
    for (lib, transport, workload, load), records in runs.items():
        cell: dict[str, Any] = {
            "lib": lib,
            "transport": transport,
            "workload": workload,
            "load": load,
            "runs": records,
        }
        ok = [r for r in records if "error" not in r]
        for field in MEDIAN_FIELDS:
            values = [float(r[field]) for r in ok if field in r]  # type: ignore[literal-required]
            if values:
                cell[field] = statistics.median(values)
        scopes = {r["cpu_scope"] for r in ok if "cpu_scope" in r}
        if len(scopes) == 1:
            cell["cpu_scope"] = scopes.pop()
        cells.append(cell)
    rates = {
        (c["lib"], c["transport"], c["workload"], c["load"]): c.get("calls_per_s") for c in cells
    }
    for cell in cells:
        where = (cell["transport"], cell["workload"], cell["load"])
        theirs = cell.get("calls_per_s")
        if cell["lib"] == FLOOR:
            continue
        floor = rates.get((FLOOR, *where))
        if floor and theirs:
            cell["of_floor"] = theirs / floor
        reference = ERA_REFERENCE.get(cell["lib"], REFERENCE)
        ours = rates.get((reference, *where))
        if ours and theirs:
            cell["speedup"] = 1.0 if cell["lib"] == reference else ours / theirs
        counterpart = HANDSHAKE_COUNTERPART.get(cell["lib"])
        handshake = rates.get((counterpart, *where)) if counterpart else None
        if handshake and theirs:
            cell["vs_handshake"] = theirs / handshake
    return cells


def machine() -> dict[str, Any]:
    """The machine the run measured: CPU model, cores, Python, platform, load average."""
    info: dict[str, Any] = {
        "cpu_model": _cpu_model() or platform.processor() or platform.machine(),
        "cores": _cores(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    with suppress(OSError):
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return info


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        return None
    return None


def _cores() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def assemble(
    runs: dict[CellKey, list[RunRecord]],
    capacity: list[dict[str, Any]],
    *,
    versions: dict[str, str],
    duration: float,
    warmup: float,
    repeat: int,
    quick: bool,
    total_wall_s: float,
    machine_info: dict[str, Any] | None = None,
    date: str | None = None,
    sweep: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Results document of the contract (with ``sweep``, the payload sweep's floor, when
    the run measured it)."""
    results: dict[str, Any] = {
        "meta": {
            "date": date or datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine() if machine_info is None else machine_info,
            "versions": versions,
            "duration_s": duration,
            "warmup_s": warmup,
            "repeat": repeat,
            "quick": quick,
            "total_wall_s": round(total_wall_s, 1),
        },
        "cells": summarise(runs),
        "capacity": capacity,
    }
    if sweep is not None:
        results["sweep"] = sweep
    return results


def failures(results: dict[str, Any]) -> list[str]:
    """Every cell without a figure, and every failed capacity figure, one line each."""
    lines = []
    for cell in results["cells"]:
        if "calls_per_s" not in cell:
            errors = {r.get("error", "") for r in cell["runs"]} or {"not run"}
            where = f"{cell['lib']} {cell['transport']} {cell['workload']} {cell['load']}"
            lines.append(f"{where}: {'; '.join(sorted(errors))}")
    for record in results["capacity"]:
        if "error" in record:
            lines.append(f"capacity {record.get('lib')}: {record['error']}")
    return lines


# ---------------------------------------------------------------- the run


class Progress:
    """``[ 37/412] repeat 2 http-json call x32 fastmcp  1,234 calls/s  p99 8.1 ms`` on stderr."""

    def __init__(self, total: int, write: Callable[[str], None] | None = None) -> None:
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    def report(self, repeat_index: int, record: RunRecord) -> None:
        self.done += 1
        width = len(str(self.total))
        if "error" in record:
            outcome = f"FAILED: {record['error']}"
        else:
            outcome = (
                f"{record['calls_per_s']:>9,.0f} calls/s  p99 {_ms(record['p99_us'])}"
                f"  cpu {record['cpu_us_per_call']:,.0f} µs/call"
            )
        if "retried" in record:
            outcome += f"  (second attempt; the first: {record['retried'][:80]})"
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        self.write(
            f"[{self.done:>{width}}/{self.total}] repeat {repeat_index + 1} "
            f"{record['transport']:<9} {record['workload']:<9} {record['load']:<7} "
            f"{record['lib']:<17} {outcome}  ({_clock(elapsed)} elapsed, ETA {_clock(eta)})"
        )


def _ms(us: float) -> str:
    return f"{us / 1000:,.1f} ms" if us >= 1000 else f"{us:,.0f} µs"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


RunnerFactory = Callable[[str, str], AbstractContextManager[Runner]]


def run_matrix(
    plans: Sequence[TransportPlan],
    runner_for: RunnerFactory,
    *,
    repeat: int,
    duration: float,
    warmup: float,
    progress: Progress,
) -> dict[CellKey, list[RunRecord]]:
    """Run every cell of every plan ``repeat`` times; the runs by cell, in plan order.

    A run that fails is measured once more, at once, and the record says so (``retried``): on
    a shared machine one fault (a stalled server, a timeout) should not cost the cell, and a
    cell that fails twice in a row is a failure.
    """
    runs: dict[CellKey, list[RunRecord]] = {}
    for tp in plans:
        for workload, load in tp.cells:
            for lib in tp.libs_for(workload, load):
                runs[(lib, tp.transport, workload, load)] = []
        with ExitStack() as stack:
            runners = {lib: stack.enter_context(runner_for(lib, tp.transport)) for lib in tp.libs}
            for repeat_index in range(repeat):
                for workload, load in tp.cells:
                    for lib in lib_order(tp.libs_for(workload, load), repeat_index):
                        record = runners[lib].run(workload, load, duration, warmup)
                        if "error" in record:
                            first_error = record["error"]
                            record = runners[lib].run(workload, load, duration, warmup)
                            record["retried"] = first_error
                        runs[(lib, tp.transport, workload, load)].append(record)
                        progress.report(repeat_index, record)
    return runs
