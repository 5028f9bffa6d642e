"""The orchestrator's pure parts: the cell list, the run order, medians, speedup, the Results.

No timing is asserted anywhere: the figures here are made up.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from benchmarks.harness import CpuClock, Window, percentile, record
from benchmarks.matrix import FLOOR, LIBS, STATELESS_LIBS, RunRecord, cells_for
from benchmarks.orchestrate import (
    Progress,
    assemble,
    failures,
    lib_order,
    plan,
    run_matrix,
    summarise,
)

ALL_LIBS = ("mcptrio", "sdk", "sdk-legacy", "fastmcp")
#: Every library (the floor is no library).
EVERY_LIBRARY = tuple(lib for lib in LIBS if lib != FLOOR)


def run(lib: str, calls_per_s: float, p99: float = 100.0, **extra: object) -> RunRecord:
    figures: RunRecord = {
        "lib": lib,
        "transport": "in-memory",
        "workload": "call",
        "load": "x1",
        "calls": 10,
        "calls_per_s": calls_per_s,
        "p50_us": p99 / 2,
        "p90_us": p99 / 1.5,
        "p99_us": p99,
        "p999_us": p99 * 2,
        "cpu_us_per_call": 50.0,
        "cpu_scope": "client+server",
    }
    figures.update(extra)  # type: ignore[typeddict-item]
    return figures


def failed(lib: str) -> RunRecord:
    return {"lib": lib, "transport": "in-memory", "workload": "call", "load": "x1", "error": "x"}


def test_plan_measures_each_library_only_over_its_transports() -> None:
    plans = {tp.transport: tp for tp in plan(ALL_LIBS)}
    assert list(plans) == ["in-memory", "stdio", "http-json", "http-sse", "websocket"]
    assert plans["in-memory"].libs == ALL_LIBS
    assert plans["stdio"].libs == ALL_LIBS
    assert plans["http-json"].libs == ("mcptrio", "sdk", "fastmcp")
    assert plans["websocket"].libs == ("mcptrio",)


def test_plan_cells_follow_the_matrix() -> None:
    plans = {tp.transport: tp for tp in plan(ALL_LIBS)}
    assert len(plans["in-memory"].cells) == 20
    assert ("call", "s100x20") in plans["in-memory"].cells
    assert not any(load == "s100x20" for _w, load in plans["stdio"].cells)
    assert ("call", "x16") in plans["http-json"].cells
    assert ("list-50", "x16") not in plans["http-json"].cells
    assert sum(tp.runs(3) for tp in plans.values()) == 3 * (20 * 4 + 15 * 4 + 21 * 3 * 2 + 20)


def test_stateless_libraries_have_every_cell_but_the_session_load_over_their_transports() -> None:
    plans = {tp.transport: tp for tp in plan(EVERY_LIBRARY)}
    for transport in ("in-memory", "stdio", "http-json", "http-sse"):
        assert "mcptrio-stateless" in plans[transport].libs
        assert "sdk-stateless" in plans[transport].libs
    assert plans["websocket"].libs == ("mcptrio",)
    stateless = set(STATELESS_LIBS)
    assert plans["in-memory"].libs_for("call", "s100x20") == ALL_LIBS
    assert set(plans["in-memory"].libs_for("call", "x32")) == set(ALL_LIBS) | stateless
    assert set(plans["http-json"].libs_for("call", "x16")) == {"mcptrio", "sdk", "fastmcp"} | (
        stateless
    )
    assert cells_for("sdk-stateless", "http-sse") == [
        (w, load) for w, load in cells_for("sdk", "http-sse") if load != "s100x20"
    ]
    # Per transport: the handshake runs as before, plus 15 (16 over HTTP) per stateless library.
    assert sum(tp.runs(1) for tp in plans.values()) == (20 * 4 + 15 * 4 + 21 * 3 * 2 + 20) + 2 * (
        15 + 15 + 16 + 16
    )


def test_the_floor_is_measured_beside_the_libraries_in_every_cell_mcptrio_has_but_websocket() -> (
    None
):
    plans = {tp.transport: tp for tp in plan(LIBS)}
    for transport in ("in-memory", "stdio", "http-json", "http-sse"):
        assert plans[transport].libs[-1] == FLOOR
        assert cells_for(FLOOR, transport) == cells_for("mcptrio", transport)
    assert plans["websocket"].libs == ("mcptrio",)
    assert plans["http-json"].libs_for("call", "x16") == (
        "mcptrio",
        "sdk",
        "fastmcp",
        "mcptrio-stateless",
        "sdk-stateless",
        FLOOR,
    )
    assert FLOOR in plans["in-memory"].libs_for("call", "s100x20")
    without = sum(tp.runs(1) for tp in plan(EVERY_LIBRARY))
    assert sum(tp.runs(1) for tp in plans.values()) == without + 20 + 15 + 21 + 21


def test_the_floor_has_no_speedup_and_every_library_is_a_share_of_it() -> None:
    where = ("http-json", "call", "x16")
    cells = {
        c["lib"]: c
        for c in summarise(
            {
                ("mcptrio", *where): [run("mcptrio", 1000)],
                ("sdk", *where): [run("sdk", 100)],
                ("mcptrio-stateless", *where): [run("mcptrio-stateless", 800)],
                (FLOOR, *where): [run(FLOOR, 4000)],
            }
        )
    }
    assert "speedup" not in cells[FLOOR] and "of_floor" not in cells[FLOOR]
    assert cells["mcptrio"]["of_floor"] == pytest.approx(0.25)
    assert cells["mcptrio-stateless"]["of_floor"] == pytest.approx(0.2)
    assert cells["sdk"]["of_floor"] == pytest.approx(0.025)
    assert cells["sdk"]["speedup"] == pytest.approx(10.0)
    # A cell the floor did not measure has no share of it.
    (x1,) = [c for c in summarise({("mcptrio", "http-json", "call", "x1"): [run("mcptrio", 5)]})]
    assert "of_floor" not in x1


def test_a_filter_of_stateless_and_handshake_libraries_keeps_only_their_shared_cells() -> None:
    (http,) = plan(["mcptrio", "mcptrio-stateless"], ["http-json"], ["call"], ["x16", "s100x20"])
    assert http.cells == (("call", "x16"), ("call", "s100x20"))
    assert http.libs_for("call", "x16") == ("mcptrio", "mcptrio-stateless")
    assert http.libs_for("call", "s100x20") == ("mcptrio",)
    assert http.runs(3) == 9
    assert plan(["sdk-stateless"], ["in-memory"], ["call"], ["s100x20"]) == []
    calls: list[str] = []

    @contextmanager
    def runner_for(lib: str, transport: str) -> Iterator[FakeRunner]:
        yield FakeRunner(lib, transport, calls)

    runs = run_matrix(
        [http], runner_for, repeat=1, duration=0.1, warmup=0.0, progress=Progress(3, calls.append)
    )
    assert [c for c in calls if not c.startswith("[")] == [
        "mcptrio:call:x16",
        "mcptrio-stateless:call:x16",
        "mcptrio:call:s100x20",
    ]
    assert ("mcptrio-stateless", "http-json", "call", "s100x20") not in runs


def test_plan_filters_and_drops_what_is_left_empty() -> None:
    plans = plan(["sdk", "fastmcp"], ["stdio", "websocket"], ["call"], ["x1", "x32"])
    assert [(tp.transport, tp.libs, tp.cells) for tp in plans] == [
        ("stdio", ("sdk", "fastmcp"), (("call", "x1"), ("call", "x32")))
    ]


def test_libraries_alternate_between_repeats() -> None:
    libs = ["mcptrio", "sdk", "fastmcp"]
    assert lib_order(libs, 0) == libs
    assert lib_order(libs, 1) == libs[::-1]
    assert lib_order(libs, 2) == libs


def test_medians_leave_failed_runs_out_and_speedup_is_over_mcptrio() -> None:
    key_m = ("mcptrio", "in-memory", "call", "x1")
    key_s = ("sdk", "in-memory", "call", "x1")
    cells = summarise(
        {
            key_m: [run("mcptrio", 900), run("mcptrio", 1000), run("mcptrio", 5000)],
            key_s: [run("sdk", 100, p99=300), failed("sdk"), run("sdk", 300, p99=100)],
        }
    )
    mcptrio, sdk = cells
    assert mcptrio["calls_per_s"] == 1000
    assert mcptrio["speedup"] == 1.0
    assert sdk["calls_per_s"] == 200
    assert sdk["p99_us"] == 200
    assert sdk["speedup"] == pytest.approx(5.0)
    assert sdk["cpu_scope"] == "client+server"
    assert len(sdk["runs"]) == 3


def test_stateless_speedup_is_over_mcptrio_stateless_and_each_is_compared_with_its_handshake() -> (
    None
):
    cells = {
        c["lib"]: c
        for c in summarise(
            {
                ("mcptrio", "in-memory", "call", "x1"): [run("mcptrio", 1000)],
                ("sdk", "in-memory", "call", "x1"): [run("sdk", 100)],
                ("mcptrio-stateless", "in-memory", "call", "x1"): [run("mcptrio-stateless", 800)],
                ("sdk-stateless", "in-memory", "call", "x1"): [run("sdk-stateless", 200)],
            }
        )
    }
    assert cells["mcptrio-stateless"]["speedup"] == 1.0
    assert cells["sdk-stateless"]["speedup"] == pytest.approx(4.0)
    assert cells["sdk"]["speedup"] == pytest.approx(10.0)
    assert cells["mcptrio-stateless"]["vs_handshake"] == pytest.approx(0.8)
    assert cells["sdk-stateless"]["vs_handshake"] == pytest.approx(2.0)
    assert "vs_handshake" not in cells["mcptrio"]


def test_no_speedup_without_both_figures() -> None:
    cells = summarise(
        {
            ("mcptrio", "stdio", "call", "x1"): [failed("mcptrio")],
            ("sdk", "stdio", "call", "x1"): [run("sdk", 100)],
            ("fastmcp", "in-memory", "call", "x1"): [run("fastmcp", 100)],
        }
    )
    assert all("speedup" not in cell for cell in cells)
    assert "calls_per_s" not in cells[0]


def test_results_document_has_the_contracts_shape_and_lists_failures() -> None:
    runs = {
        ("mcptrio", "in-memory", "call", "x1"): [run("mcptrio", 1000)],
        ("sdk", "in-memory", "call", "x1"): [failed("sdk")],
    }
    results = assemble(
        runs,
        [{"lib": "sdk", "sessions": 10, "error": "boom"}],
        versions={"mcptrio": "0.1.0", "sdk": "2.3.0"},
        duration=0.5,
        warmup=0.1,
        repeat=3,
        quick=False,
        total_wall_s=12.34,
        machine_info={"cores": 2},
        date="2026-11-21T00:00:00+00:00",
    )
    assert set(results) == {"meta", "cells", "capacity"}
    assert results["meta"] == {
        "date": "2026-11-21T00:00:00+00:00",
        "machine": {"cores": 2},
        "versions": {"mcptrio": "0.1.0", "sdk": "2.3.0"},
        "duration_s": 0.5,
        "warmup_s": 0.1,
        "repeat": 3,
        "quick": False,
        "total_wall_s": 12.3,
    }
    assert [c["lib"] for c in results["cells"]] == ["mcptrio", "sdk"]
    assert failures(results) == ["sdk in-memory call x1: x", "capacity sdk: boom"]


class FakeRunner:
    def __init__(self, lib: str, transport: str, calls: list[str]) -> None:
        self.lib = lib
        self.transport = transport
        self.calls = calls

    def run(self, workload: str, load: str, duration: float, warmup: float) -> RunRecord:
        self.calls.append(f"{self.lib}:{workload}:{load}")
        return {**run(self.lib, 10.0), "transport": self.transport, "workload": workload}


def test_run_matrix_interleaves_libraries_and_keeps_every_run() -> None:
    calls: list[str] = []
    opened: list[str] = []

    @contextmanager
    def runner_for(lib: str, transport: str) -> Iterator[FakeRunner]:
        opened.append(f"{lib}:{transport}")
        yield FakeRunner(lib, transport, calls)

    plans = plan(["mcptrio", "sdk"], ["in-memory"], ["call", "list-50"], ["x1"])
    lines: list[str] = []
    runs = run_matrix(
        plans, runner_for, repeat=2, duration=0.1, warmup=0.0, progress=Progress(8, lines.append)
    )
    assert opened == ["mcptrio:in-memory", "sdk:in-memory"]
    assert calls == [
        "mcptrio:call:x1",
        "sdk:call:x1",
        "mcptrio:list-50:x1",
        "sdk:list-50:x1",
        "sdk:call:x1",
        "mcptrio:call:x1",
        "sdk:list-50:x1",
        "mcptrio:list-50:x1",
    ]
    assert all(len(records) == 2 for records in runs.values())
    assert len(lines) == 8
    assert lines[-1].startswith("[8/8] repeat 2 in-memory list-50")


def test_a_failed_run_is_measured_once_more_and_says_so() -> None:
    attempts: list[str] = []

    class FlakyRunner:
        def run(self, workload: str, load: str, duration: float, warmup: float) -> RunRecord:
            attempts.append(load)
            record: RunRecord = {
                "lib": "sdk",
                "transport": "in-memory",
                "workload": workload,
                "load": load,
            }
            if load == "x1" and attempts.count("x1") == 1:
                record["error"] = "TimeoutError: stalled"
            elif load == "x32":
                record["error"] = "always fails"
            else:
                record["calls_per_s"] = 100.0
                record["p99_us"] = 1000.0
                record["cpu_us_per_call"] = 50.0
            return record

    @contextmanager
    def runner_for(lib: str, transport: str) -> Iterator[FlakyRunner]:
        yield FlakyRunner()

    plans = plan(["sdk"], ["in-memory"], ["call"], ["x1", "x32"])
    runs = run_matrix(
        plans, runner_for, repeat=1, duration=0.1, warmup=0.0, progress=Progress(2, lambda _: None)
    )
    assert attempts == ["x1", "x1", "x32", "x32"]
    (recovered,) = runs[("sdk", "in-memory", "call", "x1")]
    assert recovered["calls_per_s"] == 100.0
    assert recovered["retried"] == "TimeoutError: stalled"
    (failed,) = runs[("sdk", "in-memory", "call", "x32")]
    assert failed["error"] == "always fails"


def test_percentiles_are_nearest_rank() -> None:
    ordered = [float(i) for i in range(1, 1001)]
    assert percentile(ordered, 50) == 500
    assert percentile(ordered, 99.9) == 999
    assert percentile([7.0], 99) == 7.0


def test_a_window_without_calls_is_an_error_not_a_figure() -> None:
    window = Window(CpuClock("client+server"))
    window.open()
    window.close()
    assert record("mcptrio", "in-memory", "call", "x1", window)["error"]
    window.latencies.extend([0.001, 0.002])
    figures = record("mcptrio", "in-memory", "call", "s100x20", window)
    assert figures["calls"] == 2
    assert figures["p50_us"] == pytest.approx(1000)
    assert figures["sessions"] == 0
