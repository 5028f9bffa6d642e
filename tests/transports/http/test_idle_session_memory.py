"""What an idle Streamable HTTP session keeps: its task waits in no frame of its transport, and
a thousand of them stay within a memory budget (see docs/explanation/cancellation-and-
backpressure.md, "What an idle session keeps")."""

from __future__ import annotations

import gc
import tracemalloc

import trio
import trio.testing
from http_client_for_tests import open_test_connection
from test_streamable_http import initialize, make_server, serve

import mcptrio
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.http_session import HttpSession
from mcptrio.transports.http.endpoints.security import HttpSecurity

#: Python allocations an idle session may keep. Generous (the figures are in
#: docs/benchmarks.md), so that it never flakes, yet it fails if an idle session keeps a task of
#: its own again (a task and a nursery, a writer, a notifier, a reader waiting in its transport).
IDLE_SESSION_BUDGET_BYTES = 6 * 1024
SESSIONS = 1000


def await_frame_names(task: trio.lowlevel.Task) -> list[str]:
    return [frame.f_code.co_name for frame, _ in task.iter_await_frames()]


async def test_an_idle_session_waits_in_no_frame_of_its_transport_and_ends_when_closed() -> None:
    server = mcptrio.Server("idle")
    transport = HttpSession("s", event_store=None)
    session = transport.session = server.session(transport)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await trio.testing.wait_all_tasks_blocked()
            (task,) = nursery.child_tasks
            frames = await_frame_names(task)
            assert "run" in frames
            assert "receive" not in frames
            assert "_read" not in frames
            # The one way such a transport ends: its session is closed (DELETE, expiry).
            transport.close()
        assert session.is_ended
        assert transport.is_ended


async def test_a_thousand_idle_sessions_stay_within_their_memory_budget() -> None:
    app = McpHttpApp(make_server(), security=HttpSecurity(max_sessions=SESSIONS + 10))
    session_ids: list[str] = []
    with trio.fail_after(120):
        async with serve("builtin-httptools", app) as url, open_test_connection(url) as conn:
            session_ids.append(await initialize(conn))
            await trio.testing.wait_all_tasks_blocked()
            # One frame per trace: enough for a total, and cheap enough for a thousand.
            tracemalloc.start(1)
            try:
                gc.collect()
                before = tracemalloc.take_snapshot()
                for _ in range(SESSIONS):
                    session_ids.append(await initialize(conn))
                await trio.testing.wait_all_tasks_blocked()
                gc.collect()
                after = tracemalloc.take_snapshot()
            finally:
                tracemalloc.stop()
            assert len(app.registry.sessions) == SESSIONS + 1
    # The test's own list of ids is counted too: on the budget's side.
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown / SESSIONS <= IDLE_SESSION_BUDGET_BYTES, f"{grown / SESSIONS:.0f} B per session"
