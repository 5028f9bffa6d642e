"""A real worker process measures one cell (no timing asserted: only that it gives figures)."""

from __future__ import annotations

from typing import Any

from benchmarks.matrix import RunRecord
from benchmarks.worker_runner import WorkerRunner

Cell = tuple[str, str]


def in_memory_worker(
    lib: str, measured: Cell, refused: Cell
) -> tuple[RunRecord, RunRecord, dict[str, Any]]:
    """What an in-memory worker of ``lib`` reports: a cell measured (workload, load), a cell it
    refuses, and its ready line."""
    with WorkerRunner(lib, "in-memory") as runner:
        return (
            runner.run(*measured, duration=0.05, warmup=0.01),
            runner.run(*refused, duration=0.05, warmup=0.01),
            runner.wait_ready(),
        )


def test_mcptrio_in_memory_worker_measures_a_call_x1_cell() -> None:
    record, refused, ready = in_memory_worker("mcptrio", ("call", "x1"), ("call", "x16"))
    assert "error" not in record, record["error"]
    assert (record["lib"], record["transport"], record["workload"], record["load"]) == (
        "mcptrio",
        "in-memory",
        "call",
        "x1",
    )
    assert record["calls"] > 0
    assert record["cpu_scope"] == "client+server"
    for figure in ("calls_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "cpu_us_per_call"):
        assert figure in record
    assert "x16 call is not a cell of in-memory" in refused["error"]
    assert ready["backend"] == "trio"
    assert ready["protocol_version"] == "2025-11-25"


def test_stateless_mcptrio_worker_speaks_2026_07_28_and_has_no_session_load() -> None:
    record, refused, ready = in_memory_worker(
        "mcptrio-stateless", ("list-50", "x1"), ("call", "s100x20")
    )
    assert "error" not in record, record["error"]
    assert record["lib"] == "mcptrio-stateless" and record["calls"] > 0
    assert "s100x20 call is not a cell of in-memory" in refused["error"]
    assert ready["protocol_version"] == "2026-07-28"
