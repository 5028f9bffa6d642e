"""SSE answers that are complete at once go out as one whole ``text/event-stream`` response.

With ``json_response=False`` (or when a request sends more than its answer), a POST's head waits
a moment for the first message. When everything the request will send is there by then, the
events are written as one response with a ``Content-Length``: the same events, with the same ids,
stored for resumption as a streamed answer's are. A slower request still gets its head (and its
priming event) after that moment, and its messages as they come.
"""

from __future__ import annotations

import trio
from test_streamable_http import (
    call_body,
    get_headers,
    initialize,
    make_server,
    messages_of,
    served_connection,
    session_headers,
    sse_events,
    stream,
)

from mcptrio.protocol.sse import SseParser
from mcptrio.transports.http.endpoints.app import McpHttpApp

from schema_validation import validate_message


async def test_a_prompt_sse_answer_is_one_whole_response_and_can_be_resumed(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), json_response=False)
        async with served_connection(front_end, app) as (_, conn):
            session_id = await initialize(conn, "2025-11-25")
            headers = session_headers(session_id, "2025-11-25")
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(2, "add", {"a": 1, "b": 2})
            )
            assert response.status == 200
            assert response.header("content-type") == b"text/event-stream"
            assert response.header("content-length") == str(len(response.body)).encode()
            events = sse_events(response.body)
            # The priming event (an id, empty data, the retry delay), then the answer.
            assert events[0].data == "" and events[0].id and events[0].retry == 1000
            assert events[1].id and events[1].id != events[0].id
            [answer] = messages_of(events)
            assert answer["id"] == 2
            assert answer["result"]["content"] == [{"type": "text", "text": "3"}]
            validate_message(answer, "2025-11-25", "server")
            # Stored as a streamed answer is: a client that lost it gets it again.
            async with stream(
                conn, "GET", "/mcp", headers=get_headers(session_id, "2025-11-25", events[0].id)
            ) as resumed:
                assert resumed.status == 200
                replayed = messages_of(sse_events(await resumed.read_all()))
            assert replayed == [answer]


async def test_progress_and_answer_ready_together_go_out_as_one_response(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), json_response=False)
        async with served_connection(front_end, app) as (_, conn):
            session_id = await initialize(conn, "2025-06-18")
            headers = session_headers(session_id, "2025-06-18")
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(3, "chatty", {"n": 2}, token="tok")
            )
            assert response.header("content-type") == b"text/event-stream"
            messages = messages_of(sse_events(response.body))
            assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
            assert messages[2]["id"] == 3


async def test_a_slow_sse_answer_gets_its_head_and_priming_event_before_the_answer(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        app = McpHttpApp(make_server(), json_response=False)
        async with served_connection(front_end, app) as (_, conn):
            session_id = await initialize(conn, "2025-11-25")
            headers = session_headers(session_id, "2025-11-25")
            async with stream(
                conn, "POST", "/mcp", headers=headers, body=call_body(4, "sleepy", {"seconds": 1.0})
            ) as response:
                assert response.status == 200
                assert response.header("content-type") == b"text/event-stream"
                assert response.header("content-length") is None
                parser = SseParser()
                with trio.fail_after(0.8):
                    first = await response.next_chunk()
                assert first is not None
                [priming] = parser.feed(first)
                assert priming.data == "" and priming.id
                rest = messages_of(parser.feed(await response.read_all()))
            assert rest[0]["id"] == 4
            assert rest[0]["result"]["content"] == [{"type": "text", "text": "woke"}]
