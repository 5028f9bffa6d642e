"""Session.handle_frame: a frame handed in by the task it arrived in (as an HTTP POST does)."""

from __future__ import annotations

import contextvars
import json
from collections.abc import Sequence

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.runtime.transport import Frame, Outgoing

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


class HandedInTransport:
    """A transport whose frames are all handed in: ``receive`` only waits for the end."""

    def __init__(self) -> None:
        self.sent: list[dict[str, object]] = []
        self.ended = trio.Event()

    async def receive(self) -> Frame:
        await self.ended.wait()
        raise trio.EndOfChannel

    async def send(self, frames: Sequence[Outgoing]) -> None:
        self.sent.extend(json.loads(frame.data) for frame in frames)

    def send_nowait(self, frame: Outgoing) -> bool:
        self.sent.append(json.loads(frame.data))
        return True

    async def aclose(self) -> None:
        self.ended.set()


def message(**fields: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


INITIALIZE = message(
    id=0,
    method="initialize",
    params={
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "poster", "version": "1"},
    },
)


def call(rid: int, name: str) -> bytes:
    return message(id=rid, method="tools/call", params={"name": name, "arguments": {}})


def server_with_tools(tasks: list[trio.lowlevel.Task], max_in_flight: int = 256) -> mcptrio.Server:
    server = mcptrio.Server("handed-in", max_in_flight=max_in_flight)

    @server.tool()
    async def where() -> str:
        tasks.append(trio.lowlevel.current_task())
        marker.set("set by the handler")
        await trio.sleep(0.01)
        return "here"

    return server


async def test_a_lone_request_is_answered_in_the_task_that_hands_it_in() -> None:
    tasks: list[trio.lowlevel.Task] = []
    transport = HandedInTransport()
    session = server_with_tools(tasks).session(transport)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await session.handle_frame(INITIALIZE)
            await session.handle_frame(message(method="notifications/initialized"))
            await session.handle_frame(call(1, "where"))
            # Answered by the time handle_frame returns, in this very task, and what the
            # handler set in its context stayed there.
            assert transport.sent[-1]["id"] == 1
            assert tasks == [trio.lowlevel.current_task()]
            assert marker.get() == "unset"
            nursery.cancel_scope.cancel()


async def test_a_session_at_its_in_flight_limit_makes_the_caller_wait() -> None:
    tasks: list[trio.lowlevel.Task] = []
    transport = HandedInTransport()
    session = server_with_tools(tasks, max_in_flight=1).session(transport)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await session.handle_frame(INITIALIZE)
            await session.handle_frame(message(method="notifications/initialized"))
            async with trio.open_nursery() as posts:
                posts.start_soon(session.handle_frame, call(1, "where"))
                posts.start_soon(session.handle_frame, call(2, "where"))
                await trio.testing.wait_all_tasks_blocked()
                # One handler runs; the other caller waits for its slot.
                assert len(tasks) == 1
                assert session.statistics().in_flight_incoming == 1
            assert len(tasks) == 2
            assert sorted(m["id"] for m in transport.sent if m.get("id") in (1, 2)) == [1, 2]
            nursery.cancel_scope.cancel()


async def test_handing_a_frame_to_a_session_that_is_not_running_raises_connection_closed() -> None:
    session = server_with_tools([]).session(HandedInTransport())
    with pytest.raises(mcptrio.ConnectionClosed):
        await session.handle_frame(INITIALIZE)
