"""The HTTP benchmark's runner measures a real cell with wrk (no timing is ever asserted)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.http.client import check_result
from benchmarks.http.runner import HttpRunner
from benchmarks.http.wrk import WRK


def test_mcptrio_json_call_x1_gives_figures_without_error() -> None:
    if shutil.which(WRK) is None:
        # .ci/run installs wrk: its absence is a broken environment, not a reason to skip.
        pytest.fail(f"wrk not found ({WRK}): the HTTP benchmark needs it (apt-get install wrk)")
    with HttpRunner("mcptrio", "http-json") as runner:
        record = runner.run("call", "x1", duration=1.0, warmup=0.05)
    assert "error" not in record, record["error"]
    assert (record["lib"], record["transport"], record["workload"], record["load"]) == (
        "mcptrio",
        "http-json",
        "call",
        "x1",
    )
    assert record["calls"] > 0
    assert record["calls_per_s"] > 0
    assert record["cpu_scope"] == "server"
    for figure in ("p50_us", "p90_us", "p99_us", "p999_us", "cpu_s", "cpu_us_per_call"):
        assert figure in record, figure


def test_wrong_answers_are_refused_by_the_python_check() -> None:
    assert check_result("call", {"content": [{"type": "text", "text": "3"}]}) is None
    assert check_result("call", {"content": [{"type": "text", "text": "4"}]}) is not None
    assert check_result("call", {"content": [{"type": "text", "text": "3"}], "isError": True})
    assert check_result("call-10k", {"content": [{"type": "text", "text": "x" * 10_239}]})
    assert check_result("list-50", {"tools": [{"name": "add"}] * 49}) is not None
    assert check_result("read-100k", {"contents": [{"uri": "bench://blob/100k"}]}) is not None
