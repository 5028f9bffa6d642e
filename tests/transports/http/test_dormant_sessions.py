"""A handshake-era Streamable HTTP session holds no task while nothing runs in it: it is woken by
its next request, goes dormant again, and ends as any session does (see
docs/explanation/cancellation-and-backpressure.md, "A dormant HTTP session")."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing
from http_client_for_tests import TestConnection, open_test_connection
from test_streamable_http import (
    call_body,
    get_headers,
    initialize,
    make_server,
    messages_of,
    serve,
    session_headers,
    stream,
)

import mcptrio
from mcptrio.protocol.sse import SseParser
from mcptrio.runtime.on_demand_nursery import LINGER
from mcptrio.stores.event_store import InMemoryEventStore
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity

FRONT_END = "builtin-httptools"
#: Long enough for a woken session to find its nursery empty and let go of it.
SETTLE = LINGER * 3


def task_count() -> int:
    """Every task of this run, found from the root task down its nurseries."""
    count = 0
    todo = [trio.lowlevel.current_root_task()]
    while todo:
        task = todo.pop()
        count += 1
        for nursery in task.child_nurseries:
            todo.extend(nursery.child_tasks)
    return count


async def call_waiting_tool(conn: TestConnection, session_id: str, rid: int) -> None:
    """A call whose handler waits: it runs in a request actor, in the session's nursery."""
    response = await conn.request(
        "POST",
        "/mcp",
        headers=session_headers(session_id, "2025-11-25"),
        body=call_body(rid, "sleepy", {"seconds": 0.01}),
    )
    assert response.status == 200
    assert response.json()["result"]["content"][0]["text"] == "woke"


def sessions_of(app: McpHttpApp) -> list[mcptrio.runtime.Session]:
    found = []
    for transport in app.registry.sessions.values():
        assert transport.session is not None
        found.append(transport.session)
    return found


async def test_idle_sessions_hold_no_task_once_their_requests_have_ended(
    autojump_clock: trio.testing.MockClock,
) -> None:
    app = McpHttpApp(make_server())
    with trio.fail_after(600):
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            first = await initialize(conn)
            await call_waiting_tool(conn, first, 2)
            await trio.sleep(SETTLE)
            with_one = task_count()
            woken = []
            for rid in range(20):
                session_id = await initialize(conn)
                await call_waiting_tool(conn, session_id, rid)
                woken.append(session_id)
            # Just answered, their nurseries are still open: what the test would count.
            assert task_count() > with_one
            assert not all(session.dormant for session in sessions_of(app))
            await trio.sleep(SETTLE)
            assert task_count() == with_one
            assert all(session.dormant for session in sessions_of(app))
            # And each wakes again for its next request.
            for rid, session_id in enumerate(woken, start=100):
                await call_waiting_tool(conn, session_id, rid)


async def test_a_session_that_never_needed_a_task_never_had_one() -> None:
    app = McpHttpApp(make_server())
    with trio.fail_after(10):
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            await initialize(conn)
            await trio.testing.wait_all_tasks_blocked()
            before = task_count()
            for _ in range(10):
                session_id = await initialize(conn)
                # Answered at once, in the POST's task: the session is not woken.
                response = await conn.request(
                    "POST",
                    "/mcp",
                    headers=session_headers(session_id, "2025-11-25"),
                    body=call_body(2, "add", {"a": 1, "b": 2}),
                )
                assert response.json()["result"]["content"][0]["text"] == "3"
            await trio.testing.wait_all_tasks_blocked()
            assert task_count() == before
            assert all(session.dormant for session in sessions_of(app))


async def test_delete_ends_a_dormant_session_and_forgets_its_events(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = InMemoryEventStore()
    app = McpHttpApp(make_server(), event_store=store)
    with trio.fail_after(60):
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            session_id = await initialize(conn)
            await call_waiting_tool(conn, session_id, 2)
            await trio.sleep(SETTLE)
            (session,) = sessions_of(app)
            assert session.dormant
            forgotten: list[str] = []
            forget = store.forget_session

            async def spy(sid: str) -> None:
                forgotten.append(sid)
                await forget(sid)

            store.forget_session = spy  # type: ignore[method-assign]
            headers = session_headers(session_id, "2025-11-25")
            assert (await conn.request("DELETE", "/mcp", headers=headers)).status == 204
            with trio.fail_after(5):
                await session.closed.wait()
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(3, "add", {"a": 1, "b": 1})
            )
            assert response.status == 404
            await trio.testing.wait_all_tasks_blocked()
            assert forgotten == [session_id]
            assert app.session_count == 0


async def test_a_dormant_session_idle_past_its_timeout_expires(
    autojump_clock: trio.testing.MockClock,
) -> None:
    security = HttpSecurity(session_idle_timeout=60.0)
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(600):
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            session_id = await initialize(conn)
            await call_waiting_tool(conn, session_id, 2)
            await trio.sleep(SETTLE)
            (session,) = sessions_of(app)
            assert session.dormant
            await trio.sleep(120)
            assert session.closed.is_set()
            assert app.session_count == 0
        # (The first connection's keep-alive ran out meanwhile.)
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            response = await conn.request(
                "POST",
                "/mcp",
                headers=session_headers(session_id, "2025-11-25"),
                body=call_body(3, "add", {"a": 1, "b": 1}),
            )
            assert response.status == 404


async def test_stopping_the_endpoint_ends_its_dormant_and_woken_sessions(
    autojump_clock: trio.testing.MockClock,
) -> None:
    app = McpHttpApp(make_server())
    with trio.fail_after(60):
        async with serve(FRONT_END, app) as url, open_test_connection(url) as conn:
            dormant_id = await initialize(conn)
            await call_waiting_tool(conn, dormant_id, 2)
            await trio.sleep(SETTLE)
            woken_id = await initialize(conn)
            await call_waiting_tool(conn, woken_id, 2)
            sessions = sessions_of(app)
            assert [s.dormant for s in sessions] == [True, False]
        assert all(s.closed.is_set() for s in sessions)
        assert app.session_count == 0


async def test_a_list_change_wakes_a_dormant_session_to_tell_its_get_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = make_server()
    app = McpHttpApp(server)
    with trio.fail_after(60):
        async with (
            serve(FRONT_END, app) as url,
            open_test_connection(url) as conn,
            open_test_connection(url, timeout=60) as listener,
        ):
            session_id = await initialize(conn)
            async with stream(
                listener, "GET", "/mcp", headers=get_headers(session_id, "2025-11-25")
            ) as events:
                assert events.status == 200
                await trio.sleep(SETTLE)
                (session,) = sessions_of(app)
                # A GET stream is written by its connection's task: the session stays dormant.
                assert session.dormant

                @server.tool()
                async def added() -> str:
                    return "new"

                received: list[Any] = []
                parser = SseParser()
                while not received:
                    chunk = await events.next_chunk()
                    assert chunk is not None
                    received += messages_of(parser.feed(chunk))
                assert [m["method"] for m in received] == ["notifications/tools/list_changed"]
                await trio.sleep(SETTLE)
                assert session.dormant
