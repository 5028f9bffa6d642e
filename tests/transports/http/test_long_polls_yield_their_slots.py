"""Long-lived POSTs give their connection slot up when another client needs it (issue 38, item 3).

A stateless-era ``subscriptions/listen`` stream and a handshake-era ``tasks/result`` long poll
wait on the server, not on their client, for as long as they stay open: one client holding
``max_connections`` of them turned every other client away with 503. Like a GET stream, such a
POST is cut when its slot is needed, once it waits and its client can take it up again (the
listen is sent again; the poll's stream, which opened with an event id, is resumed with
``Last-Event-ID``).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

import h11
import trio
from http_client_for_tests import StreamingResponse, open_test_connection
from test_stateless_era_http import headers, listen, message, meta
from test_stateless_era_http import make_server as make_stateless_server
from test_streamable_http import (
    get_headers,
    initialize,
    request_body,
    session_headers,
    sse_events,
    wait_until,
)

from mcptrio import Server
from mcptrio.transports.http.engine.server_limits import ServerLimits

SLOTS = 4
REV = "2025-11-25"


async def cut(stream: StreamingResponse) -> bool:
    """Whether ``stream`` was cut (closed without its end) before anything more came, within a
    second."""
    with trio.move_on_after(1):
        try:
            return await stream.next_chunk() is None
        except (h11.RemoteProtocolError, trio.BrokenResourceError):
            return True
    return False


async def test_listen_streams_of_one_client_leave_room_for_another_clients_call() -> None:
    server = make_stateless_server()
    limits = ServerLimits(max_connections=SLOTS)
    params = {"_meta": meta(), "notifications": {"toolsListChanged": True}}
    call = {"_meta": meta(), "name": "add", "arguments": {"a": 1, "b": 2}}
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(server.serve_http, "127.0.0.1", 0, limits=limits))
            async with AsyncExitStack() as stack:
                streams = []
                for rid in range(SLOTS):
                    conn = await stack.enter_async_context(open_test_connection(url))
                    stream = await stack.enter_async_context(listen(conn, params, rid))
                    await stream.next_chunk()
                    streams.append(stream)
                async with open_test_connection(url) as other:
                    answer = await other.request(
                        "POST",
                        "/mcp",
                        headers=headers("tools/call", "add"),
                        body=message("tools/call", call, SLOTS),
                    )
                # The oldest listen stream gave its slot up.
                oldest_cut = await cut(streams[0])
            nursery.cancel_scope.cancel()
    assert answer.status == 200
    assert answer.json()["result"]["structuredContent"] == {"result": 3}
    assert oldest_cut


def make_task_server(release: trio.Event) -> Server:
    server = Server("long-polls", version="1.0")

    @server.tool(task="required")
    async def hold() -> str:
        """Answers once the test lets it."""
        await release.wait()
        return "released"

    return server


async def test_task_result_polls_of_one_client_leave_room_and_the_cut_one_resumes() -> None:
    release = trio.Event()
    server = make_task_server(release)
    limits = ServerLimits(max_connections=SLOTS)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(server.serve_http, "127.0.0.1", 0, limits=limits))
            async with open_test_connection(url) as setup:
                session_id = await initialize(setup, REV)
                session = session_headers(session_id, REV)
                created = await setup.request(
                    "POST",
                    "/mcp",
                    headers=session,
                    body=request_body(
                        1, "tools/call", {"name": "hold", "arguments": {}, "task": {"ttl": 60_000}}
                    ),
                )
            task_id = created.json()["result"]["task"]["taskId"]
            async with AsyncExitStack() as stack:
                polls = []
                for rid in range(10, 10 + SLOTS):
                    conn = await stack.enter_async_context(open_test_connection(url))
                    body = request_body(rid, "tasks/result", {"taskId": task_id})
                    # Today's JSON answer sends nothing until the task ends: the poll's head and
                    # priming event must come while it waits.
                    with trio.fail_after(2):
                        poll = await stack.enter_async_context(
                            conn.stream("POST", "/mcp", headers=session, body=body)
                        )
                        primed = sse_events(await poll.next_chunk() or b"")
                    assert poll.header("content-type") == b"text/event-stream"
                    polls.append((poll, primed[0].id))
                async with open_test_connection(url) as other:
                    listed = await other.request(
                        "POST", "/mcp", headers=session, body=request_body(2, "tools/list")
                    )
                oldest, last_event_id = polls[0]
                oldest_cut = await cut(oldest)
                release.set()
                # The poll cut resumes on a new connection and gets the task's result there.
                async with open_test_connection(url) as again:
                    resumed = await again.request(
                        "GET", "/mcp", headers=get_headers(session_id, REV, last_event_id)
                    )
                others = [await poll.read_all() for poll, _ in polls[1:]]
            nursery.cancel_scope.cancel()
    assert listed.status == 200
    assert oldest_cut
    answers = [json.loads(e.data) for e in sse_events(resumed.body) if e.data]
    assert [a["result"]["content"][0]["text"] for a in answers] == ["released"]
    for rid, received in enumerate(others, start=11):
        found = [json.loads(e.data) for e in sse_events(received) if e.data]
        assert [(a["id"], a["result"]["content"][0]["text"]) for a in found] == [(rid, "released")]


async def test_streams_of_calls_still_running_are_never_cut_for_a_slot() -> None:
    server = make_stateless_server()
    limits = ServerLimits(max_connections=SLOTS)
    call = {"_meta": meta(), "name": "slow", "arguments": {"delay": 3.0}}
    streaming: list[int] = []
    answers: list[list[Any]] = []

    async def slow_call(url: str, rid: int) -> None:
        async with (
            open_test_connection(url) as conn,
            conn.stream(
                "POST",
                "/mcp",
                headers=headers("tools/call", "slow"),
                body=message("tools/call", call, rid),
            ) as stream,
        ):
            streaming.append(rid)
            events = sse_events(await stream.read_all())
        answers.append([json.loads(e.data) for e in events if e.data])

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(server.serve_http, "127.0.0.1", 0, limits=limits))
            async with trio.open_nursery() as calls:
                for rid in range(SLOTS):
                    calls.start_soon(slow_call, url, rid)
                await wait_until(lambda: len(streaming) == SLOTS)
                async with open_test_connection(url) as other:
                    refused = await other.request(
                        "POST",
                        "/mcp",
                        headers=headers("tools/list"),
                        body=message("tools/list", {"_meta": meta()}, SLOTS),
                    )
            nursery.cancel_scope.cancel()
    assert refused.status == 503
    assert [found[-1]["result"]["content"][0]["text"] for found in answers] == ["slept 3.0"] * 4
