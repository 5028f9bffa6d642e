"""A POST of one request is answered in the POST's own task, with a request actor's rules.

The handler runs in the task of the HTTP exchange that carried it (no hand-off to the session's
reader, no task spawned), yet it behaves as if it ran in the session: the client going away does
not cancel it, ending the session does, ``max_in_flight`` still bounds it, and anything it sends
before its answer is streamed while it runs.
"""

from __future__ import annotations

import trio
from http_client_for_tests import open_test_connection
from test_streamable_http import (
    call_body,
    initialize,
    messages_of,
    serve,
    session_headers,
    sse_events,
    stream,
    wait_until,
)

import mcptrio
from mcptrio.protocol.sse import SseParser
from mcptrio.runtime.context import RequestContext
from mcptrio.transports.http.app import McpHttpApp


def _server(log: list[str], release: trio.Event, *, max_in_flight: int = 256) -> mcptrio.Server:
    server = mcptrio.Server("inline-test", max_in_flight=max_in_flight)

    @server.tool()
    async def wait_for_release(name: str, ctx: RequestContext) -> str:
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
    async def progress_then_wait(ctx: RequestContext) -> str:
        await ctx.report_progress(1, 2)
        await release.wait()
        return "done"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


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
