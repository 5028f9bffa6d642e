"""The 2024-11-05 HTTP+SSE transport, served beside Streamable HTTP on the same port."""

from __future__ import annotations

import json
from typing import Any

import trio
from http_client_for_tests import open_test_connection
from test_streamable_http import (
    JSON_BODY,
    call_body,
    initialize_body,
    make_server,
    notification_body,
    served_connection,
    stream,
    wait_until,
)

from mcptrio.protocol.sse import SseEvent, SseParser
from mcptrio.transports.http.endpoints.app import McpHttpApp

SSE_ACCEPT = [("accept", "text/event-stream")]


async def next_events(response: Any, parser: SseParser, count: int) -> list[SseEvent]:
    events: list[SseEvent] = []
    while len(events) < count:
        chunk = await response.next_chunk()
        assert chunk is not None, "the stream ended early"
        events += parser.feed(chunk)
    return events


async def test_the_sse_stream_announces_its_endpoint_and_carries_every_answer(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server())
        async with (
            served_connection(front_end, app) as (url, listener),
            open_test_connection(url) as poster,
            stream(listener, "GET", "/sse", headers=SSE_ACCEPT) as events,
        ):
            assert events.status == 200
            assert events.header("content-type") == b"text/event-stream"
            parser = SseParser()
            (endpoint,) = await next_events(events, parser, 1)
            assert endpoint.event == "endpoint"
            assert endpoint.data.startswith("/messages?session_id=")
            session_id = endpoint.data.split("=", 1)[1]
            assert len(session_id) == 32
            accepted = await poster.request(
                "POST", endpoint.data, headers=[JSON_BODY], body=initialize_body("2024-11-05")
            )
            assert (accepted.status, accepted.body) == (202, b"Accepted")
            (answer,) = await next_events(events, parser, 1)
            assert answer.event == "message"
            assert json.loads(answer.data)["result"]["protocolVersion"] == "2024-11-05"
            await poster.request(
                "POST",
                endpoint.data,
                headers=[JSON_BODY],
                body=notification_body("notifications/initialized"),
            )
            await poster.request(
                "POST",
                endpoint.data,
                headers=[JSON_BODY],
                body=call_body(2, "chatty", {"n": 2}, "t"),
            )
            messages = [json.loads(e.data) for e in await next_events(events, parser, 3)]
            assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
            assert messages[2]["result"]["content"][0]["text"] == "done"
            assert app.session_count == 1


async def test_posting_to_an_unknown_or_gone_session_gets_404(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server())
        async with served_connection(front_end, app) as (url, poster):
            unknown = await poster.request(
                "POST",
                "/messages?session_id=" + "0" * 32,
                headers=[JSON_BODY],
                body=initialize_body("2024-11-05"),
            )
            assert unknown.status == 404
            missing = await poster.request(
                "POST", "/messages", headers=[JSON_BODY], body=initialize_body("2024-11-05")
            )
            assert missing.status == 400
            async with (
                open_test_connection(url) as listener,
                stream(listener, "GET", "/sse", headers=SSE_ACCEPT) as events,
            ):
                (endpoint,) = await next_events(events, SseParser(), 1)
            # The client went away: the session ends with its stream.
            await wait_until(lambda: app.session_count == 0)
            gone = await poster.request(
                "POST", endpoint.data, headers=[JSON_BODY], body=initialize_body("2024-11-05")
            )
            assert gone.status == 404


async def test_bad_posts_get_their_status_and_the_session_carries_on(front_end: str) -> None:
    with trio.fail_after(10):
        async with (
            served_connection(front_end) as (url, listener),
            open_test_connection(url) as poster,
            stream(listener, "GET", "/sse", headers=SSE_ACCEPT) as events,
        ):
            parser = SseParser()
            (endpoint,) = await next_events(events, parser, 1)
            target = endpoint.data
            malformed = await poster.request("POST", target, headers=[JSON_BODY], body=b"{nope")
            assert malformed.status == 400
            assert malformed.json()["error"]["code"] == -32700
            wrong_type = await poster.request(
                "POST", target, headers=[("content-type", "text/plain")], body=b"{}"
            )
            assert wrong_type.status == 415
            wrong_method = await poster.request("GET", target)
            assert wrong_method.status == 405
            await poster.request(
                "POST", target, headers=[JSON_BODY], body=initialize_body("2024-11-05")
            )
            (answer,) = await next_events(events, parser, 1)
            assert "result" in json.loads(answer.data)


async def test_legacy_endpoints_can_be_renamed_or_turned_off(front_end: str) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), sse_path="/events", messages_path="/inbox")
        async with (
            served_connection(front_end, app) as (_, listener),
            stream(listener, "GET", "/events", headers=SSE_ACCEPT) as events,
        ):
            (endpoint,) = await next_events(events, SseParser(), 1)
            assert endpoint.data.startswith("/inbox?session_id=")
        off = McpHttpApp(make_server(), legacy_sse=False)
        async with served_connection(front_end, off) as (_, conn):
            response = await conn.request("GET", "/sse", headers=SSE_ACCEPT)
            assert response.status == 404
