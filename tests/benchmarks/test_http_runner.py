"""The HTTP benchmark's runner measures a real cell with wrk (no timing is ever asserted)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.http import wrk
from benchmarks.http.client import (
    SessionError,
    StatelessCaller,
    check_result,
    stateless_headers,
    stateless_params,
)
from benchmarks.http.runner import HttpRunner
from benchmarks.http.wrk import WRK
from benchmarks.matrix import FIXTURES, RunRecord

STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "benchmarks.http", "version": "1"},
}


def require_wrk() -> None:
    if shutil.which(WRK) is None:
        # .ci/run installs wrk: its absence is a broken environment, not a reason to skip.
        pytest.fail(f"wrk not found ({WRK}): the HTTP benchmark needs it (apt-get install wrk)")


def assert_figures(record: RunRecord, where: tuple[str, str, str, str]) -> None:
    assert "error" not in record, record["error"]
    assert (record["lib"], record["transport"], record["workload"], record["load"]) == where
    assert record["calls"] > 0
    assert record["cpu_scope"] == "server"
    for figure in ("p50_us", "p90_us", "p99_us", "p999_us", "cpu_s", "cpu_us_per_call"):
        assert figure in record, figure


def test_mcptrio_json_call_x1_gives_figures_without_error() -> None:
    require_wrk()
    with HttpRunner("mcptrio", "http-json") as runner:
        record = runner.run("call", "x1", duration=1.0, warmup=0.05)
    assert_figures(record, ("mcptrio", "http-json", "call", "x1"))
    assert record["calls_per_s"] > 0


def test_wrong_answers_are_refused_by_the_python_check() -> None:
    assert check_result("call", {"content": [{"type": "text", "text": "3"}]}) is None
    assert check_result("call", {"content": [{"type": "text", "text": "4"}]}) is not None
    assert check_result("call", {"content": [{"type": "text", "text": "3"}], "isError": True})
    assert check_result("call-10k", {"content": [{"type": "text", "text": "x" * 10_239}]})
    assert check_result("list-50", {"tools": [{"name": "add"}] * 49}) is not None
    assert check_result("read-100k", {"contents": [{"uri": "bench://blob/100k"}]}) is not None


def test_stateless_requests_carry_the_eras_meta_and_routing_headers() -> None:
    assert stateless_params("call") == {
        "name": "add",
        "arguments": {"a": 1, "b": 2},
        "_meta": STATELESS_META,
    }
    assert stateless_headers("call") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "add",
    }
    assert stateless_headers("read-100k")["Mcp-Name"] == "bench://blob/100k"
    assert stateless_headers("list-50") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    assert stateless_params("list-50") == {"_meta": STATELESS_META}
    assert FIXTURES["list-50"] == ("tools/list", {})


def test_stateless_mcptrio_cells_give_figures_and_wrong_answers_are_refused_by_the_script() -> None:
    require_wrk()
    with HttpRunner("mcptrio-stateless", "http-sse") as runner:
        record = runner.run("call", "x16", duration=0.3, warmup=0.05)
        refused = runner.run("call", "s100x20", duration=0.3, warmup=0.05)
        port = runner.port
        # The script checks every answer: expecting "4" from add(1, 2) makes every one bad.
        args = wrk._workload_args("call", "text/event-stream", stateless_params("call"))
        args[-1], args[-2] = "1", "4"
        headers = [f"{name}: {value}" for name, value in stateless_headers("call").items()]
        wrong = wrk._run(wrk.STATELESS_SCRIPT, 1, 2, 0.2, port, [*args, *headers]).summary
        # And the content type: this server's SSE mode answers in SSE.
        json_only = wrk.run_stateless(
            port, 2, 0.2, workload="call", content_types="application/json"
        ).summary
        # The Python check too (the runner's first answer and warm-up).
        caller = StatelessCaller(port)
        try:
            caller.call("list-50")
            caller.call("read-100k")
            # text_10k's answer where add's is expected: refused.
            with pytest.raises(SessionError, match="call: wrong text"):
                caller._call(
                    "call",
                    "tools/call",
                    stateless_params("call-10k"),
                    stateless_headers("call-10k"),
                )
        finally:
            caller.close()
    assert_figures(record, ("mcptrio-stateless", "http-sse", "call", "x16"))
    assert record["json_answers"] == 0
    assert "no sessions" in refused["error"]
    assert wrong["ok"] == 0 and wrong["bad"] > 0
    assert wrong["first_bad"].startswith("wrong text content (status 200)")
    assert json_only["ok"] == 0 and json_only["bad"] > 0
    assert json_only["first_bad"].startswith("content type text/event-stream")


def test_stateless_sdk_server_answers_json_in_sse_mode_and_the_record_counts_it() -> None:
    require_wrk()
    with HttpRunner("sdk-stateless", "http-sse") as runner:
        record = runner.run("read-100k", "x1", duration=0.3, warmup=0.05)
        caller = StatelessCaller(runner.port)
        try:
            caller.call("call")
            # A call without its Mcp-Name header is refused by the era's checks (-32020).
            message = {"jsonrpc": "2.0", "id": 99, "method": "tools/call"}
            message["params"] = stateless_params("call")
            headers = stateless_headers("call")
            del headers["Mcp-Name"]
            status, answer, session_id = caller.post(message, headers)
        finally:
            caller.close()
    assert_figures(record, ("sdk-stateless", "http-sse", "read-100k", "x1"))
    assert record["json_answers"] == record["calls"]
    assert status == 400 and answer is not None and answer["error"]["code"] == -32020
    assert session_id is None
