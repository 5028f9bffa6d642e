"""The built-in server's defences against slow, idle, oversized and too many clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import h11
import pytest
import trio
from front_ends_for_tests import open_front_end
from http_client_for_tests import TestConnection, open_test_connection
from test_answers_in_post_task import open_small_window_connection
from test_front_ends import EchoApp
from test_streamable_http import (
    call_body,
    get_headers,
    initialize,
    open_session,
    request_body,
    serve,
    session_headers,
    stream,
)

import mcptrio
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp

BUILTIN = ["builtin-h11", "builtin-httptools"]
pytestmark = pytest.mark.parametrize("front_end", BUILTIN)
PING = request_body(9, "ping", {})


@asynccontextmanager
async def open_echo_connection(
    front_end: str, **limits: Any
) -> AsyncIterator[tuple[str, TestConnection]]:
    """``EchoApp`` served on ``front_end`` with ``limits``; yields its URL and one connection."""
    async with (
        open_front_end(front_end, EchoApp(), **limits) as url,
        open_test_connection(url) as conn,
    ):
        yield url, conn


async def ping_status(url: str, headers: list[tuple[str, str]]) -> int:
    """The status of a ping POSTed on a new connection (200 once a slot is free for it)."""
    async with open_test_connection(url) as caller:
        answer = await caller.request("POST", "/mcp", headers=headers, body=PING)
    return answer.status


async def test_slow_request_head_is_cut_off_after_the_header_timeout(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, header_timeout=0.3) as (_, conn):
            started = trio.current_time()
            await conn.send_raw(b"GET / HTTP/1.1\r\nhost: x\r\n")
            for _ in range(3):
                await trio.sleep(0.1)
                await conn.send_raw(b"x-slow: 1\r\n")
            status = await conn.raw_status()
            elapsed = trio.current_time() - started
    assert status == 408
    assert 0.3 <= elapsed < 2


async def test_silent_new_connection_is_closed_after_the_header_timeout(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, header_timeout=0.3) as (_, conn):
            assert await conn.receive_raw() == b""


async def test_idle_keep_alive_connection_is_closed(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, keep_alive_timeout=0.3) as (_, conn):
            assert (await conn.request("GET", "/one")).status == 200
            started = trio.current_time()
            assert await conn.receive_raw() == b""
            assert trio.current_time() - started < 2


async def test_oversized_request_head_gets_431(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, max_head_size=1024) as (_, conn):
            await conn.send_raw(b"GET / HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * 4000 + b"\r\n\r\n")
            assert await conn.raw_status() == 431


async def test_unread_large_body_closes_after_the_response(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, discard_body_limit=100) as (url, conn):
            response = await conn.request("POST", "/limit", body=b"x" * 5000)
            assert response.status == 413
            assert response.header("connection") == b"close"
            async with open_test_connection(url) as conn:
                small = await conn.request("POST", "/no-read", body=b"x" * 50)
                assert small.status == 200
                assert (await conn.request("GET", "/again")).status == 200


async def test_an_idle_connection_gives_its_slot_to_a_client_with_a_request(
    front_end: str,
) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, max_connections=1) as (url, first):
            assert (await first.request("GET", "/first")).status == 200
            # first now idles on its keep-alive connection, holding the only slot.
            async with open_test_connection(url) as second:
                assert (await second.request("GET", "/second")).status == 200
            assert await first.receive_raw() == b""


async def test_a_slow_head_gives_its_slot_to_a_client_with_a_request(front_end: str) -> None:
    with trio.fail_after(5):
        async with open_echo_connection(front_end, max_connections=1) as (url, slow):
            await slow.send_raw(b"GET / HTTP/1.1\r\nhost: x\r\n")
            await trio.sleep(0.1)
            async with open_test_connection(url) as second:
                assert (await second.request("GET", "/second")).status == 200
            assert await slow.receive_raw() == b""


async def test_a_client_finding_every_slot_busy_gets_503_with_retry_after(front_end: str) -> None:
    app = EchoApp()
    with trio.fail_after(5):
        async with (
            open_front_end(front_end, app, max_connections=1, retry_after=7) as url,
            open_test_connection(url) as busy,
        ):
            async with busy.stream("GET", "/forever") as events:
                assert await events.next_chunk()
                async with open_test_connection(url) as refused:
                    answer = await refused.request("GET", "/refused")
                    assert answer.status == 503
                    assert answer.header("retry-after") == b"7"
                    assert answer.header("connection") == b"close"
            assert app.requests == 1


async def test_a_client_at_its_own_limit_is_refused_while_others_are_served(
    front_end: str,
) -> None:
    app = EchoApp()
    with trio.fail_after(5):
        async with (
            open_front_end(front_end, app, max_connections_per_client=1) as url,
            open_test_connection(url) as busy,
            busy.stream("GET", "/forever") as events,
        ):
            assert await events.next_chunk()
            async with open_test_connection(url) as same_client:
                assert (await same_client.request("GET", "/again")).status == 503
            port = int(url.rsplit(":", 1)[1])
            other = await trio.open_tcp_stream("127.0.0.1", port, local_address="127.0.0.2")
            async with other:
                await other.send_all(b"GET /other HTTP/1.1\r\nhost: x\r\n\r\n")
                assert (await other.receive_some(1000)).startswith(b"HTTP/1.1 200")


async def test_a_get_stream_gives_its_slot_to_a_client_with_a_request(front_end: str) -> None:
    app = McpHttpApp(mcptrio.Server("slots"))
    revision = "2025-06-18"
    with trio.fail_after(10):
        async with serve(front_end, app, max_connections=1) as url:
            async with open_test_connection(url) as setup:
                session_id = await initialize(setup, revision)
            async with (
                open_test_connection(url) as listener,
                listener.stream("GET", "/mcp", headers=get_headers(session_id, revision)) as events,
            ):
                assert events.status == 200
                assert await ping_status(url, session_headers(session_id, revision)) == 200
                # The stream was cut for it: the client may reopen it.
                with pytest.raises(h11.RemoteProtocolError):
                    while await events.next_chunk() is not None:
                        pass


async def test_an_sse_writer_stops_after_the_write_timeout_while_its_handler_runs(
    front_end: str,
) -> None:
    big = "x" * 2_000_000
    server = mcptrio.Server("big-progress")

    @server.tool()
    async def send_big_progress(ctx: Context) -> str:
        await ctx.report_progress(0, 1, message=big)
        await trio.sleep_forever()
        return "never"

    app = McpHttpApp(server)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(app.run)
            async with (
                open_front_end(front_end, app, write_timeout=0.1) as url,
                open_test_connection(url) as conn,
                open_small_window_connection(url) as stalled,
            ):
                try:
                    session_id = await initialize(conn, "2025-06-18")
                    headers = session_headers(session_id, "2025-06-18")
                    body = call_body(1, "send_big_progress", {}, token="t")
                    async with stream(stalled, "POST", "/mcp", headers=headers, body=body) as sse:
                        assert sse.status == 200
                        # The client reads nothing for well over the write timeout...
                        await trio.sleep(0.4)
                        received = 0
                        with trio.move_on_after(0.4):
                            while received < len(big) // 2:
                                piece = await stalled.socket_stream.receive_some(65536)
                                if not piece:
                                    break
                                received += len(piece)
                        # ...so the writer gave up: only what the socket buffers held arrives.
                        assert received < len(big) // 2
                finally:
                    # The sessions end first: the handler runs in its POST's connection task.
                    nursery.cancel_scope.cancel()


async def test_a_post_whose_client_left_gives_back_its_slot_while_its_handler_waits(
    front_end: str,
) -> None:
    server = mcptrio.Server("asks")
    waiting = trio.Semaphore(0)

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(0, 1)
        waiting.release()
        await trio.sleep(600)
        return "late"

    # JSON answers, as serve_http gives by default: the progress notification turns the answer
    # into a stream, and the handler runs on, shielded, in the POST's task.
    app = McpHttpApp(server, json_response=True)
    revision = "2025-06-18"
    # serve ends the sessions first: the handlers run in their POSTs' tasks.
    with trio.fail_after(10):
        async with serve(front_end, app, max_connections=2) as url:
            _, headers = await open_session(url, revision)
            for rid in range(4):
                async with open_test_connection(url) as leaving:
                    body = call_body(rid, "slow", {}, token=f"t{rid}")
                    async with stream(leaving, "POST", "/mcp", headers=headers, body=body):
                        await waiting.acquire()
            # Four handlers still run, none of them on a slot.
            assert await ping_status(url, headers) == 200


async def test_a_json_post_whose_client_left_gives_back_its_slot_while_its_handler_runs(
    front_end: str,
) -> None:
    server = mcptrio.Server("slow")
    running = trio.Semaphore(0)
    finished: list[int] = []
    all_finished = trio.Event()

    @server.tool()
    async def slow(n: int) -> str:
        # No progress, no log: nothing turns the JSON answer into a stream.
        running.release()
        await trio.sleep(1.5)
        finished.append(n)
        if len(finished) == 3:
            all_finished.set()
        return "late"

    app = McpHttpApp(server, json_response=True)
    revision = "2025-11-25"
    app.registry.departure_watch.delay = 0.1
    with trio.fail_after(10):
        async with serve(front_end, app, max_connections=2) as url:
            _, headers = await open_session(url, revision)
            for rid in range(3):
                async with open_test_connection(url) as leaving:
                    body = call_body(rid, "slow", {"n": rid})
                    # The request only: its answer is never read.
                    await leaving._send_request("POST", "/mcp", headers, body)
                    await running.acquire()
                # Gone before its answer: the watch hands the slot back within its delay.
                await trio.sleep(0.3)
            assert await ping_status(url, headers) == 200
            assert finished == []
            # Disconnection is not cancellation in this era: the calls run to their end.
            await all_finished.wait()
    assert sorted(finished) == [0, 1, 2]
