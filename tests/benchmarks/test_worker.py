"""A real worker process measures one cell (no timing asserted: only that it gives figures)."""

from __future__ import annotations

from benchmarks.worker_runner import WorkerRunner


def test_mcptrio_in_memory_worker_measures_a_call_x1_cell() -> None:
    with WorkerRunner("mcptrio", "in-memory") as runner:
        record = runner.run("call", "x1", duration=0.05, warmup=0.01)
        refused = runner.run("call", "x16", duration=0.05, warmup=0.01)
        ready = runner.wait_ready()
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
    with WorkerRunner("mcptrio-stateless", "in-memory") as runner:
        record = runner.run("list-50", "x1", duration=0.05, warmup=0.01)
        refused = runner.run("call", "s100x20", duration=0.05, warmup=0.01)
        ready = runner.wait_ready()
    assert "error" not in record, record["error"]
    assert record["lib"] == "mcptrio-stateless" and record["calls"] > 0
    assert "s100x20 call is not a cell of in-memory" in refused["error"]
    assert ready["protocol_version"] == "2026-07-28"
