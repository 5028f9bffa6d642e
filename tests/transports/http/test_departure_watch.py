"""When the connection of a slow JSON answer starts being watched for its client leaving."""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing
from test_streamable_http import initialize_body

import mcptrio
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.departure_watch import DepartureWatch


class Responder:
    """Records when the watch asks it to watch its connection."""

    def __init__(self) -> None:
        self.watched_at: float | None = None

    def watch_for_departure(self) -> None:
        self.watched_at = trio.current_time()


def arm(watch: DepartureWatch, responder: Responder) -> None:
    loose: Any = watch
    loose.arm(responder)


async def test_a_post_unanswered_after_two_delays_is_watched_and_an_answered_one_never(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = DepartureWatch(1.0)
    slow, fast = Responder(), Responder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        start = trio.current_time()
        arm(watch, slow)
        arm(watch, fast)
        await trio.sleep(1.5)
        watch.disarm(fast)  # type: ignore[arg-type]
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    # Armed just before the first tick: aged by it, watched at the second.
    assert slow.watched_at == start + 2.0
    assert fast.watched_at is None


async def test_an_idle_watch_is_woken_by_the_next_post(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = DepartureWatch(1.0)
    responder = Responder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        await trio.sleep(10.25)
        armed_at = trio.current_time()
        arm(watch, responder)
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    assert responder.watched_at == armed_at + 2.0


# ------------------------------------------------------------------ armed by the POST


class _Post:
    """A JSON POST to the MCP endpoint, handed to the app in process."""

    method = "POST"
    path = "/mcp"
    query_string = b""
    client = ("127.0.0.1", 5000)
    scheme = "http"

    def __init__(self, body: bytes, session_id: bytes | None = None) -> None:
        self.headers = [
            (b"host", b"127.0.0.1"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            (b"mcp-protocol-version", b"2025-06-18"),
        ]
        if session_id is not None:
            self.headers.append((b"mcp-session-id", session_id))
        self.body = body

    async def read_body(self, limit: int) -> bytes:
        return self.body


class _Exchange(Responder):
    """Records the response, and when its connection was asked to be watched."""

    def __init__(self) -> None:
        super().__init__()
        self.status: int | None = None
        self.headers: Any = ()
        self.body = b""

    async def send_response(self, status: int, headers: Any, body: bytes = b"") -> None:
        self.status, self.headers, self.body = status, headers, body

    def on_client_gone(self, callback: Any) -> None:
        pass

    def allow_eviction(self) -> None:
        pass


def _call(rid: int, name: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}
    ).encode()


async def test_a_json_post_waiting_for_a_slot_is_watched_and_one_answered_at_once_never(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A POST is armed after delivering its request only when delivering cannot wait; one that
    # waits for the session's only slot must be watched while it waits, as a slow answer is.
    release = trio.Event()
    server = mcptrio.Server("watched", max_in_flight=1)

    @server.tool()
    async def slow() -> str:
        await release.wait()
        return "slow"

    @server.tool()
    async def fast() -> str:
        return "fast"

    app = McpHttpApp(server)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(app.run)
            opened = _Exchange()
            await app.handle_http(_Post(initialize_body("2025-06-18")), opened)
            session_id = dict(opened.headers)[b"mcp-session-id"]
            answered = _Exchange()
            await app.handle_http(_Post(_call(2, "fast"), session_id), answered)
            assert answered.status == 200
            holder, waiter = _Exchange(), _Exchange()
            nursery.start_soon(app.handle_http, _Post(_call(3, "slow"), session_id), holder)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(app.handle_http, _Post(_call(4, "fast"), session_id), waiter)
            await trio.sleep(1)
            assert holder.watched_at is not None
            assert waiter.watched_at is not None
            assert waiter.status is None
            release.set()
            await trio.sleep(1)
            assert json.loads(waiter.body)["result"]["content"][0]["text"] == "fast"
            nursery.cancel_scope.cancel()
    assert answered.watched_at is None
