"""``python -m benchmarks --scale-out``: a real run against 1 and 2 workers (no timing is ever
asserted), and how its rows and ratio come out of the runs."""

from __future__ import annotations

import shutil

import pytest
from redis_servers import RedisServer

from benchmarks.__main__ import parse_args
from benchmarks.http.wrk import WRK
from benchmarks.scale_out import format_markdown, run_scale_out, summarize


def run(era: str, workers: int, calls_per_s: float, bad: int = 0) -> dict[str, object]:
    return {
        "era": era,
        "workers": workers,
        "calls": int(calls_per_s),
        "calls_per_s": calls_per_s,
        "server_cpu_s": 1.0,
        "server_cores": float(workers),
        "bad": bad,
        "socket_errors": 0,
        "timeouts": 0,
        "first_bad": "status 404: Session not found" if bad else "",
        "p50_us": 1000.0,
        "p99_us": 5000.0,
    }


def test_the_ratio_is_of_medians_and_bad_answers_are_reported() -> None:
    runs = [
        run("stateless", 1, 4000),
        run("stateless", 1, 5000),
        run("stateless", 1, 6000),
        run("stateless", 2, 8000),
        run("stateless", 2, 9000),
        {"era": "stateless", "workers": 2, "error": "ServerFailed: no"},
        run("handshake", 1, 5000),
        run("handshake", 2, 2000, bad=700),
    ]
    rows = summarize(runs, ["stateless", "handshake"])
    stateless_2w = rows[1]
    assert stateless_2w["calls_per_s"] == 8500 and stateless_2w["ratio"] == 8500 / 5000
    assert stateless_2w["failed_runs"] == 1
    assert rows[3]["bad"] == 700
    table = format_markdown(
        {
            "meta": {
                "workload": "call",
                "connections": 32,
                "repeat": 3,
                "duration_s": 3.0,
                "warmup_s": 1.0,
                "cpus": 2,
                "stores": ["memory"],
            },
            "runs": runs,
            "summary": rows,
        }
    )
    assert "| memory | stateless | 2 | 8,500 | 1.70x |" in table
    assert "- memory handshake 2w: `status 404: Session not found`" in table


def test_scale_out_has_its_own_defaults_and_output_folder() -> None:
    args = parse_args(["--scale-out"])
    assert (args.duration, args.warmup, args.scale_out_eras) == (3.0, 1.0, ["stateless"])
    quick = parse_args(["--scale-out", "--quick", "--scale-out-eras", "stateless", "handshake"])
    assert quick.duration < 1 and quick.scale_out_eras == ["stateless", "handshake"]
    assert args.scale_out_stores == ["memory", "redis"]


def test_a_quick_run_measures_both_worker_counts_both_eras_and_both_stores(
    redis_server: RedisServer,
) -> None:
    if shutil.which(WRK) is None:
        pytest.fail(f"wrk not found ({WRK}): the benchmark needs it (apt-get install wrk)")
    eras = ["stateless", "handshake"]
    results = run_scale_out(
        repeat=1,
        duration=0.2,
        warmup=0.05,
        eras=eras,
        stores=["memory", "redis"],
        redis_url=redis_server.url,
    )
    measured = {(r["stores"], r["era"], r["workers"]): r for r in results["runs"]}
    assert set(measured) == {(s, e, w) for s in ("memory", "redis") for e in eras for w in (1, 2)}
    for key, record in measured.items():
        assert "error" not in record, (key, record)
        assert record["calls"] > 0
    for key, record in measured.items():
        if key != ("memory", "handshake", 2):
            # With the Redis stores, the calls that reach the other worker are forwarded.
            assert record["bad"] == 0, (key, record["first_bad"])
    # Without forwarding, the connections that reach the other worker fail, and say so.
    if measured["memory", "handshake", 2]["bad"]:
        assert "404" in measured["memory", "handshake", 2]["first_bad"]
    assert measured["redis", "handshake", 2]["session_owners"] == 2
