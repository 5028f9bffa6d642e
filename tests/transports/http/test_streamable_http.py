"""Streamable HTTP, on every front end: sessions, JSON or SSE answers, routing, batches, DELETE.

Also home of the helpers the other Streamable HTTP test modules import (``serve``,
``initialize``, ``session_headers``...). Loopback only, port 0, a deadline on every test.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from front_ends_for_tests import open_front_end
from http_client_for_tests import TestConnection, open_test_connection

import mcptrio
from mcptrio.protocol.sse import SseEvent, SseParser
from mcptrio.protocol.types import PingRequest, ProgressNotification
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp

from schema_validation import validate_message

ACCEPT_BOTH = ("accept", "application/json, text/event-stream")
JSON_BODY = ("content-type", "application/json")
POST_HEADERS = [ACCEPT_BOTH, JSON_BODY]


# ---------------------------------------------------------------------- helpers


def make_server() -> mcptrio.Server:
    """A server with the tools these tests need."""
    server = mcptrio.Server("http-test")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def chatty(n: int, ctx: Context) -> str:
        """Sends ``n`` progress notifications for the caller's token, then answers."""
        for i in range(n):
            await ctx.report_progress(i, n)
        return "done"

    @server.tool()
    async def announce(ctx: Context) -> str:
        """Sends one notification unrelated to any request, then answers."""
        note = ProgressNotification(progress_token="unrelated", progress=1)
        await ctx.session.notify(note)
        return "announced"

    @server.tool()
    async def ask_client(ctx: Context) -> str:
        """Pings the client as part of the call (a server-to-client request)."""
        await ctx.send_request(PingRequest(), timeout=10)
        return "pinged"

    @server.tool()
    async def sleepy(seconds: float) -> str:
        await trio.sleep(seconds)
        return "woke"

    return server


@asynccontextmanager
async def serve(front_end: str, app: McpHttpApp, **limits: Any) -> AsyncIterator[str]:
    """Run ``app`` (its ``run`` and a front end with ``limits``); yields the base URL.

    Both stop together, as ``serve_http`` stops them: a handler answering a POST runs in that
    POST's task, so a front end stopped alone would wait for it.
    """
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        async with open_front_end(front_end, app, **limits) as url:
            try:
                yield url
            finally:
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def served_connection(
    front_end: str, app: McpHttpApp | None = None
) -> AsyncIterator[tuple[str, TestConnection]]:
    """``app`` (by default one over :func:`make_server`) run as :func:`serve` runs it, and one
    connection to it; yields the base URL and the connection."""
    async with (
        serve(front_end, app or McpHttpApp(make_server())) as url,
        open_test_connection(url) as conn,
    ):
        yield url, conn


def request_body(rid: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def notification_body(method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def initialize_body(revision: str, rid: int = 1) -> bytes:
    return request_body(
        rid,
        "initialize",
        {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    )


def call_body(
    rid: int | str, name: str, arguments: dict[str, Any], token: str | None = None
) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return request_body(rid, "tools/call", params)


def session_headers(session_id: str, revision: str) -> list[tuple[str, str]]:
    return [*POST_HEADERS, ("mcp-session-id", session_id), ("mcp-protocol-version", revision)]


def get_headers(
    session_id: str, revision: str, last_event_id: str | None = None
) -> list[tuple[str, str]]:
    headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session_id),
        ("mcp-protocol-version", revision),
    ]
    if last_event_id is not None:
        headers.append(("last-event-id", last_event_id))
    return headers


async def initialize(conn: TestConnection, revision: str = "2025-11-25") -> str:
    """Initialize a session over ``conn``; returns its id."""
    response = await conn.request(
        "POST", "/mcp", headers=POST_HEADERS, body=initialize_body(revision)
    )
    assert response.status == 200, response
    session_id = response.header("mcp-session-id")
    assert session_id is not None
    initialized = await conn.request(
        "POST",
        "/mcp",
        headers=session_headers(session_id.decode(), revision),
        body=notification_body("notifications/initialized"),
    )
    assert initialized.status == 202
    return session_id.decode()


async def open_session(url: str, revision: str) -> tuple[str, list[tuple[str, str]]]:
    """Initialize a session on a connection of its own, closed after; returns its id and the
    headers of its requests."""
    async with open_test_connection(url) as conn:
        session_id = await initialize(conn, revision)
    return session_id, session_headers(session_id, revision)


def sse_events(data: bytes) -> list[SseEvent]:
    return SseParser().feed(data)


def messages_of(events: Sequence[SseEvent]) -> list[Any]:
    return [json.loads(e.data) for e in events if e.data]


async def wait_until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    """Wait (polling) for something the server does after it has answered."""
    with trio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110
            await trio.sleep(0.01)


def stream(conn: TestConnection, method: str, target: str, **kwargs: Any) -> Any:
    # ``TestConnection`` keeps its socket in an attribute named like this method.
    return TestConnection.stream(conn, method, target, **kwargs)


# ---------------------------------------------------------------------- tests


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_creates_a_session_with_a_random_visible_ascii_id(
    front_end: str, revision: str
) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server())
        async with served_connection(front_end, app) as (_, conn):
            response = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body(revision)
            )
            assert response.status == 200
            assert response.header("content-type") == b"application/json"
            answer = response.json()
            assert answer["result"]["protocolVersion"] == revision
            validate_message(answer, revision, "InitializeResult")
            session_id = response.header("mcp-session-id")
            assert session_id is not None and len(session_id) == 32
            assert all(0x21 <= c <= 0x7E for c in session_id)
            other = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body(revision)
            )
            assert other.header("mcp-session-id") != session_id
            assert app.session_count == 2


async def test_a_failed_initialize_gets_no_session(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server())
        async with served_connection(front_end, app) as (_, conn):
            bad = request_body(1, "initialize", {"protocolVersion": 5})
            response = await conn.request("POST", "/mcp", headers=POST_HEADERS, body=bad)
            assert response.status == 200
            assert response.json()["error"]["code"] == -32602
            assert response.header("mcp-session-id") is None
            await wait_until(lambda: app.session_count == 0)


async def test_notifications_get_202_and_no_body(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            session_id = await initialize(conn)
            headers = session_headers(session_id, "2025-11-25")
            response = await conn.request(
                "POST",
                "/mcp",
                headers=headers,
                body=notification_body("notifications/roots/list_changed"),
            )
            assert (response.status, response.body) == (202, b"")


async def test_a_request_is_answered_as_json_when_nothing_else_comes_first(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(7, "add", {"a": 2, "b": 3})
            )
            assert response.status == 200
            assert response.header("content-type") == b"application/json"
            answer = response.json()
            assert answer["id"] == 7
            assert answer["result"]["structuredContent"] == {"result": 5}
            validate_message(answer, "2025-06-18", "CallToolResult")


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
async def test_related_messages_turn_the_answer_into_an_sse_stream(
    front_end: str, revision: str
) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            session_id = await initialize(conn, revision)
            headers = session_headers(session_id, revision)
            async with stream(
                conn,
                "POST",
                "/mcp",
                headers=headers,
                body=call_body(3, "chatty", {"n": 3}, token="tok"),
            ) as response:
                assert response.status == 200
                assert response.header("content-type") == b"text/event-stream"
                events = sse_events(await response.read_all())
        ids = [e.id for e in events]
        assert all(ids) and len(set(ids)) == len(ids)
        if revision >= "2025-11-25":
            # The priming event: an id, empty data, and the reconnection delay.
            assert events[0].data == "" and events[0].retry == 1000
            events = events[1:]
        messages = messages_of(events)
        assert [m.get("method") for m in messages[:3]] == ["notifications/progress"] * 3
        assert [m["params"]["progress"] for m in messages[:3]] == [0, 1, 2]
        assert messages[3] == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "done"}]},
        }
        for message in messages:
            validate_message(message, revision, "server")


async def test_json_response_false_always_streams(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), json_response=False)
        async with served_connection(front_end, app) as (_, conn):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with stream(
                conn, "POST", "/mcp", headers=headers, body=call_body(2, "add", {"a": 1, "b": 1})
            ) as response:
                assert response.header("content-type") == b"text/event-stream"
                events = sse_events(await response.read_all())
            assert [m["id"] for m in messages_of(events)] == [2]


async def test_unrelated_messages_wait_for_the_get_stream_and_never_go_on_a_post(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        async with (
            served_connection(front_end) as (url, conn),
            open_test_connection(url) as listener,
        ):
            session_id = await initialize(conn)
            headers = session_headers(session_id, "2025-11-25")
            # No GET stream yet: the notification waits for one.
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(2, "announce", {})
            )
            assert response.header("content-type") == b"application/json"
            assert response.json()["result"]["content"][0]["text"] == "announced"
            async with stream(
                listener, "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
            ) as events:
                assert events.status == 200
                assert events.header("content-type") == b"text/event-stream"
                received: list[Any] = []
                parser = SseParser()
                while not any(m.get("params", {}).get("progressToken") for m in received):
                    chunk = await events.next_chunk()
                    assert chunk is not None
                    received += messages_of(parser.feed(chunk))
                assert received == [
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": "unrelated", "progress": 1},
                    }
                ]
                # A second one while the GET is open arrives live.
                await conn.request(
                    "POST", "/mcp", headers=headers, body=call_body(3, "announce", {})
                )
                more: list[Any] = []
                while not more:
                    chunk = await events.next_chunk()
                    assert chunk is not None
                    more = messages_of(parser.feed(chunk))
                assert more[0]["method"] == "notifications/progress"


async def test_a_second_concurrent_get_stream_gets_409(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (url, a), open_test_connection(url) as b:
            session_id = await initialize(a)
            async with stream(
                a, "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
            ) as first:
                assert first.status == 200
                second = await b.request(
                    "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
                )
                assert second.status == 409


async def test_a_server_request_travels_on_the_post_stream_and_its_answer_is_posted(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (url, conn), open_test_connection(url) as other:
            session_id = await initialize(conn)
            headers = session_headers(session_id, "2025-11-25")
            async with stream(
                conn, "POST", "/mcp", headers=headers, body=call_body(5, "ask_client", {})
            ) as response:
                parser = SseParser()
                ping = None
                while ping is None:
                    chunk = await response.next_chunk()
                    assert chunk is not None
                    for message in messages_of(parser.feed(chunk)):
                        ping = message
                assert ping["method"] == "ping"
                answer = {"jsonrpc": "2.0", "id": ping["id"], "result": {}}
                posted = await other.request(
                    "POST", "/mcp", headers=headers, body=json.dumps(answer).encode()
                )
                assert posted.status == 202
                rest = messages_of(parser.feed(await response.read_all()))
            assert rest[-1]["result"]["content"][0]["text"] == "pinged"


async def test_concurrent_requests_in_one_session_each_get_their_own_answer(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (url, conn):
            headers = session_headers(await initialize(conn), "2025-11-25")
            answers: dict[int, Any] = {}

            async def call(rid: int) -> None:
                async with open_test_connection(url) as c:
                    body = call_body(rid, "add", {"a": rid, "b": 100})
                    response = await c.request("POST", "/mcp", headers=headers, body=body)
                    answers[rid] = response.json()

            async with trio.open_nursery() as nursery:
                for rid in range(1, 6):
                    nursery.start_soon(call, rid)
            for rid, answer in answers.items():
                assert answer["id"] == rid
                assert answer["result"]["structuredContent"] == {"result": rid + 100}


async def test_a_cancelled_request_ends_its_stream_without_an_answer(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (url, conn), open_test_connection(url) as other:
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            async with trio.open_nursery() as nursery:
                result: list[Any] = []

                async def slow_call() -> None:
                    response = await conn.request(
                        "POST",
                        "/mcp",
                        headers=headers,
                        body=call_body(9, "sleepy", {"seconds": 30}),
                    )
                    result.append(response)

                nursery.start_soon(slow_call)
                await trio.sleep(0.2)
                cancel = notification_body(
                    "notifications/cancelled", {"requestId": 9, "reason": "no longer needed"}
                )
                posted = await other.request("POST", "/mcp", headers=headers, body=cancel)
                assert posted.status == 202
            (response,) = result
            assert response.status == 200
            assert b'"result"' not in response.body
            # The session is still fine.
            again = await other.request(
                "POST", "/mcp", headers=headers, body=call_body(9, "add", {"a": 1, "b": 2})
            )
            assert again.json()["result"]["structuredContent"] == {"result": 3}


async def test_delete_ends_the_session_and_its_id_then_gets_404(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server())
        async with served_connection(front_end, app) as (_, conn):
            session_id = await initialize(conn)
            headers = session_headers(session_id, "2025-11-25")
            deleted = await conn.request("DELETE", "/mcp", headers=headers)
            assert deleted.status == 204
            for method, body in (("POST", call_body(2, "add", {"a": 1, "b": 1})), ("DELETE", b"")):
                response = await conn.request(method, "/mcp", headers=headers, body=body)
                assert response.status == 404
            response = await conn.request(
                "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
            )
            assert response.status == 404
            await wait_until(lambda: app.session_count == 0)


async def test_other_methods_get_405_with_allow(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            response = await conn.request("PUT", "/mcp", headers=POST_HEADERS, body=b"{}")
            assert response.status == 405
            assert response.header("allow") == b"GET, POST, DELETE"


async def test_a_2025_03_26_batch_is_answered_as_one_array(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            session_id = await initialize(conn, "2025-03-26")
            batch = b"[%s,%s,%s]" % (
                call_body(1, "add", {"a": 1, "b": 2}),
                notification_body("notifications/roots/list_changed"),
                request_body(2, "ping"),
            )
            response = await conn.request(
                "POST", "/mcp", headers=session_headers(session_id, "2025-03-26"), body=batch
            )
            assert response.status == 200
            answers = response.json()
            validate_message(answers, "2025-03-26")
            assert sorted(a["id"] for a in answers) == [1, 2]
            only_notes = b"[%s]" % notification_body("notifications/roots/list_changed")
            response = await conn.request(
                "POST", "/mcp", headers=session_headers(session_id, "2025-03-26"), body=only_notes
            )
            assert response.status == 202


async def test_a_batch_outside_2025_03_26_gets_400_invalid_request(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            session_id = await initialize(conn, "2025-06-18")
            batch = b"[%s]" % request_body(1, "ping")
            response = await conn.request(
                "POST", "/mcp", headers=session_headers(session_id, "2025-06-18"), body=batch
            )
            assert response.status == 400
            assert response.json()["error"]["code"] == -32600
            assert "id" not in response.json()


async def test_stateless_mode_answers_every_post_with_a_fresh_session(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), stateless=True)
        async with served_connection(front_end, app) as (_, conn):
            response = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body("2025-06-18")
            )
            assert response.status == 200
            assert response.header("mcp-session-id") is None
            assert response.json()["result"]["protocolVersion"] == "2025-06-18"
            headers = [*POST_HEADERS, ("mcp-protocol-version", "2025-06-18")]
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(1, "add", {"a": 4, "b": 5})
            )
            assert response.json()["result"]["structuredContent"] == {"result": 9}
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(2, "chatty", {"n": 2}, "t")
            )
            assert response.header("content-type") == b"text/event-stream"
            assert messages_of(sse_events(response.body))[-1]["id"] == 2
            note = await conn.request(
                "POST", "/mcp", headers=headers, body=notification_body("notifications/initialized")
            )
            assert note.status == 202
            get = await conn.request("GET", "/mcp", headers=[("accept", "text/event-stream")])
            assert get.status == 405
            assert app.session_count == 0
