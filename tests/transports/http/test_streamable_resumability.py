"""Resumable SSE streams: event ids, replay on ``Last-Event-ID``, SSE polling, the event store."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
import trio
from http_client_for_tests import open_test_connection
from test_streamable_http import (
    call_body,
    get_headers,
    initialize,
    make_server,
    messages_of,
    open_session,
    serve,
    served_connection,
    session_headers,
    stream,
)

import mcptrio
from mcptrio.protocol.sse import SseParser
from mcptrio.server.context import Context
from mcptrio.stores.event_store import InMemoryEventStore, UnknownEventId
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.http_session import HttpSession, HttpStreamControl

# ---------------------------------------------------------------------- the event store


async def test_event_ids_name_their_stream_and_replay_only_that_stream() -> None:
    store = InMemoryEventStore()
    a1 = await store.store("s", "1", b"a1")
    b1 = await store.store("s", "2", b"b1")
    a2 = await store.store("s", "1", b"a2")
    assert (a1, b1, a2) == ("1-1", "2-1", "1-2")
    replay = await store.replay_after("s", a1)
    assert replay.stream_id == "1"
    assert replay.events == [("1-2", b"a2")]
    assert replay.missed == 0
    assert (await store.replay_after("s", a2)).events == []


@pytest.mark.parametrize("bad", ["", "x", "1-", "-1", "1-x", "9-1", "1-99", "1-1-1"])
async def test_unknown_or_malformed_event_ids_are_refused(bad: str) -> None:
    store = InMemoryEventStore()
    await store.store("s", "1", b"m")
    with pytest.raises(UnknownEventId):
        await store.replay_after("s", bad)
    with pytest.raises(UnknownEventId):
        await store.replay_after("other-session", "1-1")


async def test_the_store_evicts_the_oldest_events_and_says_what_a_replay_missed() -> None:
    store = InMemoryEventStore(max_events_per_session=3)
    ids = [await store.store("s", "1", b"%d" % i) for i in range(5)]
    assert store.event_count("s") == 3
    replay = await store.replay_after("s", ids[0])
    assert replay.missed == 1
    assert [m for _, m in replay.events] == [b"2", b"3", b"4"]
    await store.forget_session("s")
    assert store.event_count("s") == 0


async def test_the_store_holds_nothing_for_streams_whose_events_were_all_evicted() -> None:
    # A long session opens a stream per request: the store must not keep one entry per stream.
    store = InMemoryEventStore(max_events_per_session=4)
    first = await store.store("s", "1", b"a")
    for stream_id in range(2, 20_002):
        await store.store("s", str(stream_id), b"x")
    assert store.event_count("s") == 4
    assert len(store._sessions["s"].streams) <= 4
    assert len(store._sessions["s"].retired) <= 4096
    recent = await store.replay_after("s", "20000-1")
    assert recent.events == [] and recent.missed == 0
    # A stream evicted long ago is unknown; one evicted recently still reports what it missed.
    with pytest.raises(UnknownEventId):
        await store.replay_after("s", first)
    evicted = await store.replay_after("s", "19990-1")
    assert evicted.events == [] and evicted.missed == 0
    # A retired stream that stores again continues its ids rather than reusing them.
    assert await store.store("s", "19990", b"late") == "19990-2"


# ---------------------------------------------------------------------- over HTTP


def resumable_server() -> mcptrio.Server:
    server = make_server()

    @server.tool()
    async def polled(ctx: Context) -> str:
        """Two progress messages, then the server closes the connection, then one more."""
        await ctx.report_progress(1)
        await ctx.report_progress(2)
        transport = ctx.session.transport
        assert isinstance(transport, HttpStreamControl)
        assert transport.close_sse_stream(ctx.request_id, retry_ms=10)
        await trio.sleep(0.2)
        await ctx.report_progress(3)
        return "polled"

    @server.tool()
    async def flood(n: int, ctx: Context) -> str:
        for i in range(n):
            await ctx.report_progress(i)
        return "flooded"

    return server


async def read_events(response: Any, parser: SseParser, until: Any) -> list[Any]:
    """SSE events from ``response`` until ``until(events)`` holds or the body ends."""
    events: list[Any] = []
    while not until(events):
        chunk = await response.next_chunk()
        if chunk is None:
            break
        events += parser.feed(chunk)
    return events


async def resume(url: str, session_id: str, revision: str, last_event_id: str) -> list[Any]:
    """What a GET with ``Last-Event-ID``, on a new connection, reads to the end of the stream."""
    headers = get_headers(session_id, revision, last_event_id)
    async with (
        open_test_connection(url) as conn,
        stream(conn, "GET", "/mcp", headers=headers) as resumed,
    ):
        return await read_events(resumed, SseParser(), lambda _: False)


async def test_the_server_closes_a_polled_stream_and_get_resumes_it(front_end: str) -> None:
    with trio.fail_after(10):
        async with served_connection(front_end, McpHttpApp(resumable_server())) as (_, conn):
            session_id = await initialize(conn, "2025-11-25")
            headers = session_headers(session_id, "2025-11-25")
            async with stream(
                conn, "POST", "/mcp", headers=headers, body=call_body(4, "polled", {}, "tok")
            ) as response:
                assert response.header("content-type") == b"text/event-stream"
                parser = SseParser()
                first = await read_events(response, parser, lambda _: False)
            # Priming event (id, empty data, retry), two progress, then retry: and the end.
            assert first[0].data == "" and first[0].id is not None
            progress = [m["params"]["progress"] for m in messages_of(first)]
            assert progress == [1, 2], first
            assert parser.retry == 10
            after = get_headers(session_id, "2025-11-25", parser.last_event_id)
            async with stream(conn, "GET", "/mcp", headers=after) as resumed:
                assert resumed.status == 200
                rest = messages_of(await read_events(resumed, SseParser(), lambda _: False))
            assert rest[0]["params"]["progress"] == 3
            assert rest[1]["id"] == 4
            assert rest[1]["result"]["content"][0]["text"] == "polled"


async def test_a_dropped_post_stream_runs_on_and_is_resumed_with_get(front_end: str) -> None:
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(resumable_server())) as url:
            session_id, headers = await open_session(url, "2025-06-18")
            async with (
                open_test_connection(url) as conn,
                stream(
                    conn,
                    "POST",
                    "/mcp",
                    headers=headers,
                    body=call_body(1, "flood", {"n": 50}, "t"),
                ) as response,
            ):
                parser = SseParser()
                seen = await read_events(response, parser, lambda e: len(e) >= 3)
                # The connection is gone (the client kept only three events, as if the rest
                # had been lost on the way); the request is not cancelled.
            seen = seen[:3]
            last = seen[-1].id
            assert last is not None
            rest = await resume(url, session_id, "2025-06-18", last)
            progress = [m["params"]["progress"] for m in messages_of([*seen, *rest])[:-1]]
            assert progress == list(range(50))
            assert messages_of(rest)[-1]["result"]["content"][0]["text"] == "flooded"
            # Resuming after the stream ended replays what followed the id, then ends.
            replayed = await resume(url, session_id, "2025-06-18", last)
            assert [e.id for e in replayed] == [e.id for e in rest]


async def test_a_resume_never_replays_another_streams_messages(front_end: str) -> None:
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(resumable_server())) as url:
            async with open_test_connection(url) as conn:
                session_id = await initialize(conn, "2025-11-25")
                headers = session_headers(session_id, "2025-11-25")
                firsts = []
                for rid in (1, 2):
                    response = await conn.request(
                        "POST", "/mcp", headers=headers, body=call_body(rid, "flood", {"n": 3}, "t")
                    )
                    events = SseParser().feed(response.body)
                    firsts.append(events)
                resumed = await conn.request(
                    "GET", "/mcp", headers=get_headers(session_id, "2025-11-25", firsts[0][1].id)
                )
            replayed = SseParser().feed(resumed.body)
            assert [e.id for e in replayed] == [e.id for e in firsts[0][2:]]
            assert messages_of(replayed)[-1]["id"] == 1


async def test_the_get_stream_is_resumed_too(front_end: str) -> None:
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(resumable_server())) as url:
            session_id, headers = await open_session(url, "2025-11-25")
            async with open_test_connection(url) as conn:
                await conn.request(
                    "POST", "/mcp", headers=headers, body=call_body(1, "announce", {})
                )
            async with (
                open_test_connection(url) as listener,
                stream(
                    listener, "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
                ) as events,
            ):
                parser = SseParser()
                await read_events(events, parser, lambda e: any(x.data for x in e))
            async with open_test_connection(url) as conn:
                for rid in (2, 3):
                    await conn.request(
                        "POST", "/mcp", headers=headers, body=call_body(rid, "announce", {})
                    )
                after = get_headers(session_id, "2025-11-25", parser.last_event_id)
                async with stream(conn, "GET", "/mcp", headers=after) as resumed:
                    later = await read_events(resumed, SseParser(), lambda e: len(e) >= 2)
            assert [m["params"]["progressToken"] for m in messages_of(later)] == ["unrelated"] * 2


@pytest.mark.parametrize("front_end", ["builtin-h11", "builtin-httptools"])
async def test_every_one_of_10000_messages_arrives_exactly_once_across_random_cuts(
    front_end: str,
) -> None:
    total = 10_000
    rng = random.Random(20251125)
    with trio.fail_after(60):
        async with serve(front_end, McpHttpApp(resumable_server())) as url:
            session_id, headers = await open_session(url, "2025-11-25")
            received: list[Any] = []
            last_id: str | None = None
            cuts = 0
            done = False
            while not done:
                budget = rng.randint(1, 4000)
                async with open_test_connection(url) as conn:
                    if last_id is None:
                        opened = stream(
                            conn,
                            "POST",
                            "/mcp",
                            headers=headers,
                            body=call_body(1, "flood", {"n": total}, "t"),
                        )
                    else:
                        opened = stream(
                            conn,
                            "GET",
                            "/mcp",
                            headers=get_headers(session_id, "2025-11-25", last_id),
                        )
                    async with opened as response:
                        assert response.status == 200
                        parser = SseParser()
                        while budget > 0:
                            chunk = await response.next_chunk()
                            if chunk is None:
                                done = True
                                break
                            # Cut inside a chunk now and then: the partial event is lost on
                            # the wire and must come back in the replay.
                            if len(chunk) > 1 and rng.random() < 0.3:
                                chunk = chunk[: rng.randint(1, len(chunk) - 1)]
                                budget = 0
                            for event in parser.feed(chunk):
                                if event.data:
                                    received.append(json.loads(event.data))
                                # Only a dispatched event's id counts: the parser has seen the
                                # id line of a cut event too, but that event was lost.
                                if event.id is not None:
                                    last_id = event.id
                                budget -= 1
                cuts += 1
    progress = [m["params"]["progress"] for m in received if m.get("method")]
    assert progress == list(range(total))
    assert received[-1]["result"]["content"][0]["text"] == "flooded"
    assert cuts > 3


async def test_a_session_keeps_a_bounded_number_of_unread_streams_for_resumption() -> None:
    transport = HttpSession("s", event_store=InMemoryEventStore())
    for rid in range(100):
        request_stream = transport.open_request_stream([rid])
        request_stream.resumable = True  # as if an event id had reached the client
        transport.release_stream(request_stream)
    kept = [s for s in transport.streams.values() if s is not transport.standalone]
    assert len(kept) == 64
    assert kept[-1].stream_id == "100"
    # The answer to an abandoned request has nowhere to go and is dropped, not misrouted.
    assert not transport.owns_any([0])
    assert transport.owns_any([99])
