"""The floors (``matrix.FLOOR``): each answers every workload with the libraries' answer, which
the benchmark's own checks accept (wrk's Lua check, the Python checks), and is measured by the
same runners as the libraries (no timing is asserted)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest
import trio
from test_http_check_script import CHECK_LUA, _lua_string, lines_printed_by_wrk

import mcptrio
from benchmarks.drive_floor import check_result as harness_check
from benchmarks.harness import WrongAnswer
from benchmarks.http.client import LUA_CHECKS
from benchmarks.http.client import check_result as http_check
from benchmarks.http.floor_server import _answer
from benchmarks.http.runner import HttpRunner
from benchmarks.http.wrk import WRK
from benchmarks.matrix import ALL_WORKLOADS, FIXTURES, FLOOR, WORKLOADS, RunRecord
from benchmarks.servers.floor_answers import LISTED_TOOLS, RESULTS, SESSION_ID, request_id
from benchmarks.servers.floor_server import answer_lines
from benchmarks.servers.mcptrio_server import build_server
from benchmarks.worker_runner import WorkerRunner

MODES = {"http-json": "application/json", "http-sse": "text/event-stream"}


def _request(workload: str, identifier: int | str = 7, spaced: bool = False) -> bytes:
    """A request body as wrk's scripts write it, or (``spaced``) as Python's json.dumps does."""
    method, params = FIXTURES[workload]
    separators = (", ", ": ") if spaced else (",", ":")
    body = {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
    return json.dumps(body, separators=separators).encode()


def _http_answer(workload: str, transport: str) -> tuple[bytes, bytes]:
    """The floor's HTTP answer to a request of ``workload``: its head and its body."""
    answer = _answer(b"POST", _request(workload), sse=transport == "http-sse")
    head, _, body = answer.partition(b"\r\n\r\n")
    return head + b"\r\n", body


def test_every_workload_gets_the_libraries_result_with_the_requests_id() -> None:
    for workload in ALL_WORKLOADS:
        harness_check(workload, RESULTS[workload])
        assert http_check(workload, RESULTS[workload]) is None
        for identifier, raw in ((7, b"7"), ("req-1", b'"req-1"')):
            for spaced in (False, True):
                line = _request(workload, identifier, spaced)
                assert request_id(line) == raw
                (answer,) = answer_lines([line]).splitlines()
                decoded = msgspec.json.decode(answer)
                assert decoded == {"jsonrpc": "2.0", "id": identifier, "result": RESULTS[workload]}
    # Another workload's answer is refused by the checks the floors are measured with.
    with pytest.raises(WrongAnswer):
        harness_check("call-10k", RESULTS["call"])
    assert http_check("read-100k", RESULTS["read-1k"]) is not None


def test_the_stdio_floor_answers_requests_and_not_notifications() -> None:
    lines = [b'{"jsonrpc":"2.0","method":"notifications/initialized"}', b"", _request("call", 3)]
    (answer,) = answer_lines(lines).splitlines()
    assert msgspec.json.decode(answer)["id"] == 3


def test_the_http_floor_answers_sessions_the_least_way_their_checks_accept() -> None:
    initialize = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'
    answer = _answer(b"POST", initialize, sse=False)
    assert f"mcp-session-id: {SESSION_ID}\r\n".encode() in answer
    assert b'"protocolVersion":"2025-11-25"' in answer
    notification = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert _answer(b"POST", notification, sse=False).startswith(b"HTTP/1.1 202 ")
    assert _answer(b"DELETE", b"", sse=False).startswith(b"HTTP/1.1 200 ")
    assert _answer(b"GET", b"", sse=True).startswith(b"HTTP/1.1 405 ")
    head, _ = _http_answer("call", "http-json")
    assert b"mcp-session-id" not in head


def test_the_http_floors_answers_pass_wrks_check_script(tmp_path: Path) -> None:
    cases: list[tuple[str, str, str, bytes, str]] = []
    for transport, content_type in MODES.items():
        for workload in ALL_WORKLOADS:
            head, body = _http_answer(workload, transport)
            assert f"content-type: {content_type}\r\n".encode() in head
            assert f"content-length: {len(body)}\r\n".encode() in head
            cases.append((content_type, workload, workload, body, "ok"))
        # The answer of one workload is not another's: the check tells them apart.
        _, call_body = _http_answer("call", transport)
        cases.append((content_type, "call-10k", "call", call_body, "wrong text content"))
    lines = [f"local check = dofile({_lua_string(str(CHECK_LUA))})"]
    for content_type, checked_as, _answered, body, _verdict in cases:
        kind, arg1, arg2 = LUA_CHECKS[checked_as]
        args = ", ".join(_lua_string(a) for a in (content_type, kind, arg1, arg2))
        lines.append(
            f"do local problem = check.answer_checker({args})(200, "
            f'{{["content-type"] = {_lua_string(content_type)}}}, {_lua_string(body.decode())}) '
            'io.write(problem or "ok", "\\n") end'
        )
    lines.append("os.exit(0)")
    verdicts = lines_printed_by_wrk("\n".join(lines) + "\n", tmp_path)
    assert verdicts == [verdict for *_rest, verdict in cases]


async def test_the_floor_lists_the_tools_mcptrios_bench_server_lists() -> None:
    with trio.fail_after(30):
        async with mcptrio.open_client(build_server()) as client:
            listed = (await client.list_tools()).tools
    assert [msgspec.to_builtins(tool) for tool in listed] == LISTED_TOOLS


def _assert_figures(record: RunRecord, lib: str, transport: str, scope: str) -> None:
    assert "error" not in record, record["error"]
    assert (record["lib"], record["transport"]) == (lib, transport)
    assert record["calls"] > 0
    assert record["cpu_scope"] == scope


@pytest.mark.parametrize("transport", list(MODES))
def test_wrk_measures_the_http_floor_like_a_library(transport: str) -> None:
    if shutil.which(WRK) is None:
        pytest.fail(f"wrk not found ({WRK}): the HTTP benchmark needs it (apt-get install wrk)")
    with HttpRunner(FLOOR, transport) as runner:
        records = [
            runner.run(workload, load, duration=0.1, warmup=0.01)
            for workload, load in [*((w, "x1") for w in WORKLOADS), ("call", "x16")]
        ]
        records.append(runner.run("call", "s100x20", duration=0.5, warmup=0.01))
    for record in records:
        _assert_figures(record, FLOOR, transport, "server")
    # Calls are made only on sessions that opened (initialize, then the notification's 202);
    # on a busy machine a short window may close before any of the 100 completed its 20 calls.
    assert "sessions" in records[-1] and "open_p50_us" in records[-1]


@pytest.mark.parametrize(
    ("transport", "scope"), [("in-memory", "client+server"), ("stdio", "server")]
)
def test_the_worker_measures_the_in_memory_and_stdio_floors_with_the_same_harness(
    transport: str, scope: str
) -> None:
    cells = [(w, "x1") for w in WORKLOADS] + [("call", "x32")]
    if transport == "in-memory":
        cells.append(("call", "s100x20"))
    with WorkerRunner(FLOOR, transport) as runner:
        records = [runner.run(w, load, duration=0.05, warmup=0.01) for w, load in cells]
        refused = runner.run("call", "x16", duration=0.05, warmup=0.01)
        ready = runner.wait_ready()
    for record in records:
        _assert_figures(record, FLOOR, transport, scope)
    assert "x16 call is not a cell of" in refused["error"]
    assert ready["backend"] == "trio" and ready["protocol_version"] is None
