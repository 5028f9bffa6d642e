"""A POST of one request is answered in the POST's own task, with a request actor's rules.

The handler runs in the task of the HTTP exchange that carried it (no hand-off to the session's
reader, no task spawned), yet it behaves as if it ran in the session: the client going away does
not cancel it, ending the session does, ``max_in_flight`` still bounds it (a request waiting for a
slot is already the session's: it survives its client, and the peer can cancel it), context
variables it sets stay its own, and anything it sends before its answer is streamed while it
runs, a response that ending the session never cuts in half.
"""

from __future__ import annotations

import contextvars
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import trio
from http_client_for_tests import TestConnection, TestResponse, open_test_connection
from test_streamable_http import (
    call_body,
    initialize,
    messages_of,
    notification_body,
    serve,
    session_headers,
    sse_events,
    stream,
    wait_until,
)

import mcptrio
from mcptrio.protocol.sse import SseParser
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp


def _server(log: list[str], release: trio.Event, *, max_in_flight: int = 256) -> mcptrio.Server:
    server = mcptrio.Server("inline-test", max_in_flight=max_in_flight)

    @server.tool()
    async def wait_for_release(name: str, ctx: Context) -> str:
        # With a progress token the answer turns into a live SSE stream right away.
        await ctx.report_progress(0, 1)
        log.append(f"{name} started")
        try:
            await release.wait()
        except trio.Cancelled:
            log.append(f"{name} cancelled")
            raise
        log.append(f"{name} finished")
        return name

    @server.tool()
    async def progress_then_wait(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await release.wait()
        return "done"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def _occupy_the_only_slot(
    nursery: trio.Nursery, conn: TestConnection, headers: list[tuple[str, str]], log: list[str]
) -> None:
    """Start request 1 (``a``), which holds the session's one in-flight slot until released."""
    nursery.start_soon(
        lambda: conn.request(
            "POST", "/mcp", headers=headers, body=call_body(1, "wait_for_release", {"name": "a"})
        )
    )
    await wait_until(lambda: log == ["a started"])


async def test_a_handler_runs_on_after_its_client_goes_away(front_end: str) -> None:
    log: list[str] = []
    release = trio.Event()
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(_server(log, release))) as url:
            async with open_test_connection(url) as conn:
                session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            body = call_body(7, "wait_for_release", {"name": "gone"}, token="t")
            async with open_test_connection(url) as doomed:
                head = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n" + "".join(
                    f"{name}: {value}\r\n" for name, value in headers
                )
                await doomed.send_raw(head.encode() + b"content-length: %d\r\n\r\n" % len(body))
                await doomed.send_raw(body)
                await wait_until(lambda: log == ["gone started"])
                received = b""
                while b"notifications/progress" not in received:
                    received += await doomed.socket_stream.receive_some(65536)
            # The client is gone; that must not cancel the handler.
            await trio.sleep(0.2)
            assert log == ["gone started"]
            release.set()
            await wait_until(lambda: len(log) >= 2)
            assert log == ["gone started", "gone finished"]
            async with open_test_connection(url) as conn:
                again = await conn.request(
                    "POST", "/mcp", headers=headers, body=call_body(8, "add", {"a": 1, "b": 2})
                )
                assert again.json()["result"]["structuredContent"] == {"result": 3}


async def test_deleting_the_session_cancels_a_handler_running_in_its_post(front_end: str) -> None:
    log: list[str] = []
    release = trio.Event()
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(_server(log, release))) as url,
            open_test_connection(url) as conn,
            open_test_connection(url) as other,
        ):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            results: list[int] = []

            async def call() -> None:
                response = await conn.request(
                    "POST",
                    "/mcp",
                    headers=headers,
                    body=call_body(3, "wait_for_release", {"name": "slow"}),
                )
                results.append(response.status)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await wait_until(lambda: log == ["slow started"])
                deleted = await other.request("DELETE", "/mcp", headers=headers)
                assert deleted.status == 204
            assert log == ["slow started", "slow cancelled"]
            # The POST ended (its stream finished with the session) rather than hanging.
            assert len(results) == 1


async def test_max_in_flight_holds_for_requests_answered_in_their_post(front_end: str) -> None:
    log: list[str] = []
    release = trio.Event()
    server = _server(log, release, max_in_flight=1)
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(server)) as url,
            open_test_connection(url) as first,
            open_test_connection(url) as second,
        ):
            session_id = await initialize(first, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            answers: dict[str, object] = {}

            async def call(conn: object, rid: int, name: str) -> None:
                response = await conn.request(  # type: ignore[attr-defined]
                    "POST",
                    "/mcp",
                    headers=headers,
                    body=call_body(rid, "wait_for_release", {"name": name}),
                )
                answers[name] = response.json()["result"]["content"][0]["text"]

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, first, 1, "a")
                await wait_until(lambda: log == ["a started"])
                nursery.start_soon(call, second, 2, "b")
                await trio.sleep(0.3)
                # The second request waits for the first's slot: its handler has not started.
                assert log == ["a started"]
                release.set()
            assert log == ["a started", "a finished", "b started", "b finished"]
            assert answers == {"a": "a", "b": "b"}


async def test_progress_is_streamed_while_the_handler_still_runs(front_end: str) -> None:
    log: list[str] = []
    release = trio.Event()
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(_server(log, release))) as url,
            open_test_connection(url) as conn,
        ):
            session_id = await initialize(conn, "2025-06-18")
            async with stream(
                conn,
                "POST",
                "/mcp",
                headers=session_headers(session_id, "2025-06-18"),
                body=call_body(5, "progress_then_wait", {}, token="tok"),
            ) as response:
                assert response.status == 200
                assert response.header("content-type") == b"text/event-stream"
                parser = SseParser()
                events = []
                while not events:
                    chunk = await response.next_chunk()
                    assert chunk is not None
                    events.extend(parser.feed(chunk))
                [progress] = messages_of(events)
                assert progress["method"] == "notifications/progress"
                release.set()
                rest = messages_of(sse_events(await response.read_all()))
                assert rest[-1]["id"] == 5
                assert rest[-1]["result"]["content"] == [{"type": "text", "text": "done"}]


@asynccontextmanager
async def open_small_window_connection(url: str) -> AsyncIterator[TestConnection]:
    """A connection whose receive buffer is tiny: a large response stalls the server's write."""
    parts = urlsplit(url)
    sock = trio.socket.socket()
    # Set before connecting, so that the advertised window is small from the start.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    await sock.connect((parts.hostname, parts.port))
    socket_stream = trio.SocketStream(sock)
    try:
        yield TestConnection(socket_stream, parts.netloc, timeout=2)
    finally:
        # Shielded, so that a cancellation cannot replace the exception the block raised.
        with trio.CancelScope(shield=True):
            await socket_stream.aclose()


async def test_a_request_waiting_for_a_slot_survives_its_client_going_away(
    front_end: str,
) -> None:
    log: list[str] = []
    release = trio.Event()
    app = McpHttpApp(_server(log, release, max_in_flight=1), json_response=False)
    with trio.fail_after(10):
        async with serve(front_end, app) as url, open_test_connection(url) as first:
            session_id = await initialize(first, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with trio.open_nursery() as nursery:
                await _occupy_the_only_slot(nursery, first, headers, log)
                async with (
                    open_test_connection(url) as doomed,
                    stream(
                        doomed,
                        "POST",
                        "/mcp",
                        headers=headers,
                        body=call_body(2, "wait_for_release", {"name": "b"}),
                    ) as response,
                ):
                    # The SSE head goes out while the request waits for the only slot.
                    assert response.status == 200
                # Its client is gone while it waits: give the server time to notice.
                await trio.sleep(0.2)
                assert log == ["a started"]
                release.set()
            await wait_until(lambda: "b finished" in log)
            assert log == ["a started", "a finished", "b started", "b finished"]


async def test_cancelling_a_request_that_waits_for_a_slot_keeps_it_from_running(
    front_end: str,
) -> None:
    log: list[str] = []
    release = trio.Event()
    app = McpHttpApp(_server(log, release, max_in_flight=1), json_response=False)
    with trio.fail_after(10):
        async with (
            serve(front_end, app) as url,
            open_test_connection(url) as first,
            open_test_connection(url) as second,
            open_test_connection(url) as third,
        ):
            session_id = await initialize(first, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with trio.open_nursery() as nursery:
                await _occupy_the_only_slot(nursery, first, headers, log)
                async with stream(
                    second,
                    "POST",
                    "/mcp",
                    headers=headers,
                    body=call_body(2, "wait_for_release", {"name": "b"}),
                ) as response:
                    # The SSE head goes out while the request waits for the only slot.
                    assert response.status == 200
                    cancel = notification_body(
                        "notifications/cancelled", {"requestId": 2, "reason": "not needed"}
                    )
                    posted = await third.request("POST", "/mcp", headers=headers, body=cancel)
                    assert posted.status == 202
                    release.set()
                    # Its stream ends, with no answer.
                    assert messages_of(sse_events(await response.read_all())) == []
            assert log == ["a started", "a finished"]


async def test_a_request_past_the_sessions_waiting_limit_gets_503_with_retry_after(
    front_end: str,
) -> None:
    log: list[str] = []
    release = trio.Event()
    app = McpHttpApp(_server(log, release, max_in_flight=1), json_response=False)
    with trio.fail_after(10):
        async with (
            serve(front_end, app) as url,
            open_test_connection(url) as first,
            open_test_connection(url) as second,
            open_test_connection(url) as third,
        ):
            session_id = await initialize(first, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with trio.open_nursery() as nursery:
                await _occupy_the_only_slot(nursery, first, headers, log)
                # One may wait (as many as may run)...
                async with stream(
                    second,
                    "POST",
                    "/mcp",
                    headers=headers,
                    body=call_body(2, "wait_for_release", {"name": "b"}),
                ) as waiting:
                    assert waiting.status == 200
                    # ...and the next is refused at once, not left waiting.
                    body = call_body(3, "wait_for_release", {"name": "c"})
                    refused = await third.request("POST", "/mcp", headers=headers, body=body)
                    assert refused.status == 503
                    assert refused.header("retry-after") is not None
                    release.set()
                    assert messages_of(sse_events(await waiting.read_all()))
                # The refused request's id was forgotten: it may be sent again.
                async with open_test_connection(url) as again:
                    answer = await again.request("POST", "/mcp", headers=headers, body=body)
                    assert answer.status == 200
            assert log.count("c started") == 1


tenant: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="nobody")


async def test_context_variables_a_tool_sets_do_not_reach_the_next_request_on_the_connection(
    front_end: str,
) -> None:
    server = mcptrio.Server("context-test")

    @server.tool()
    async def set_tenant(name: str) -> str:
        tenant.set(name)
        return "set"

    @server.tool()
    async def get_tenant() -> str:
        return tenant.get()

    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(server)) as url, open_test_connection(url) as conn:
            session_id = await initialize(conn, "2025-06-18")
            response = await conn.request(
                "POST",
                "/mcp",
                headers=session_headers(session_id, "2025-06-18"),
                body=call_body(1, "set_tenant", {"name": "alice"}),
            )
            assert response.status == 200
            # Another session, on the same kept-alive connection.
            other_session = await initialize(conn, "2025-06-18")
            response = await conn.request(
                "POST",
                "/mcp",
                headers=session_headers(other_session, "2025-06-18"),
                body=call_body(2, "get_tenant", {}),
            )
            assert conn.reused == 5
            assert response.json()["result"]["content"][0]["text"] == "nobody"


async def test_ending_the_session_mid_write_lets_the_sse_answer_finish_whole(
    front_end: str,
) -> None:
    big = "x" * 1_000_000
    progress_sent = trio.Event()
    server = mcptrio.Server("big-progress")

    @server.tool()
    async def send_big_progress(ctx: Context) -> str:
        await ctx.report_progress(0, 1, message=big)
        progress_sent.set()
        await trio.sleep_forever()
        return "never"

    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(server)) as url,
            open_test_connection(url) as conn,
            open_small_window_connection(url) as slow_reader,
        ):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with stream(
                slow_reader,
                "POST",
                "/mcp",
                headers=headers,
                body=call_body(1, "send_big_progress", {}, token="t"),
            ) as response:
                assert response.status == 200
                # The progress event is being written, and cannot fit in the socket buffers.
                first = await response.next_chunk()
                assert first is not None
                await progress_sent.wait()
                deleted = await conn.request("DELETE", "/mcp", headers=headers)
                assert deleted.status == 204
                # The body ends properly (a cut chunk would be a protocol error here).
                body = first + await response.read_all()
            [progress] = messages_of(sse_events(body))
            assert progress["params"]["message"] == big


async def test_delete_ends_a_streaming_answer_whose_writer_waits_for_messages(
    front_end: str,
) -> None:
    log: list[str] = []
    release = trio.Event()
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(_server(log, release))) as url,
            open_test_connection(url) as conn,
            open_test_connection(url) as other,
        ):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with stream(
                conn,
                "POST",
                "/mcp",
                headers=headers,
                body=call_body(1, "wait_for_release", {"name": "slow"}, token="t"),
            ) as response:
                assert response.status == 200
                [progress] = messages_of(sse_events(await response.next_chunk() or b""))
                assert progress["method"] == "notifications/progress"
                await wait_until(lambda: log == ["slow started"])
                deleted = await other.request("DELETE", "/mcp", headers=headers)
                assert deleted.status == 204
                # The writer, idle, ends the body properly and at once: no answer follows.
                assert messages_of(sse_events(await response.read_all())) == []
            assert log == ["slow started", "slow cancelled"]


async def test_delete_while_a_json_answer_is_pending_gets_404_session_ended(
    front_end: str,
) -> None:
    log: list[str] = []
    server = mcptrio.Server("delete-test")

    @server.tool()
    async def slow() -> str:
        log.append("slow started")
        await trio.sleep_forever()
        return "never"

    @server.tool()
    async def linger() -> str:
        log.append("linger started")
        try:
            await trio.sleep_forever()
        finally:
            # Keeps the session's nursery, and so the session's end, waiting a little after
            # DELETE: the POST must not take "not ended yet" for "still going".
            with trio.CancelScope(shield=True):
                await trio.sleep(0.3)
        return "never"

    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(server)) as url,
            open_test_connection(url) as conn,
            open_test_connection(url) as lingering,
            open_test_connection(url) as other,
        ):
            session_id = await initialize(conn, "2025-03-26")
            headers = session_headers(session_id, "2025-03-26")
            answers: dict[str, TestResponse] = {}

            async def call(name: str, via: TestConnection, body: bytes) -> None:
                answers[name] = await via.request("POST", "/mcp", headers=headers, body=body)

            async with trio.open_nursery() as nursery:
                # A batch's requests run as actors in the session's nursery.
                batch = b"[%s]" % call_body(1, "linger", {})
                nursery.start_soon(call, "linger", lingering, batch)
                await wait_until(lambda: log == ["linger started"])
                # A single request is answered inline, in its POST's task.
                nursery.start_soon(call, "slow", conn, call_body(2, "slow", {}))
                await wait_until(lambda: log == ["linger started", "slow started"])
                deleted = await other.request("DELETE", "/mcp", headers=headers)
                assert deleted.status == 204
            for answer in answers.values():
                assert answer.status == 404
                assert answer.header("content-type") == b"application/json"
                assert answer.json()["error"]["message"] == "Session ended"
            assert sorted(answers) == ["linger", "slow"]
