"""Session.deliver: a frame handed in by the task it arrived in (as an HTTP POST does)."""

from __future__ import annotations

import contextvars
import json
from collections.abc import Generator, Sequence
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
import mcptrio.runtime
from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.types import CallToolResult, TextContent
from mcptrio.runtime.context import RequestContext
from mcptrio.runtime.transport import Frame, Outgoing, TransportAbilities

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


class HandedInTransport:
    """A transport whose frames are all handed in: ``receive`` only waits for the end."""

    def __init__(self) -> None:
        self.sent: list[dict[str, object]] = []
        self.ended = trio.Event()

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(send_nowait=self.send_nowait)

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


async def test_a_request_that_may_wait_runs_in_an_actor_of_the_sessions_own(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tasks: list[trio.lowlevel.Task] = []
    transport = HandedInTransport()
    session = server_with_tools(tasks).session(transport)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await session.deliver(INITIALIZE)
            await session.deliver(message(method="notifications/initialized"))
            await session.deliver(call(1, "where"))
            # Started by the time deliver returns, not answered: it runs in a task of the
            # session's nursery, not in the one that handed the frame in, and what the handler
            # set in its context stays there.
            assert transport.sent[-1]["id"] == 0
            await trio.sleep(1)
            assert transport.sent[-1]["id"] == 1
            assert len(tasks) == 1
            assert tasks[0] is not trio.lowlevel.current_task()
            assert tasks[0].parent_nursery is session_nursery(session)
            assert marker.get() == "unset"
            nursery.cancel_scope.cancel()


def session_nursery(session: mcptrio.runtime.Session) -> trio.Nursery | None:
    """The nursery the session runs its tasks in (the run() task's child)."""
    return session._nursery


async def test_a_session_at_its_in_flight_limit_makes_the_caller_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tasks: list[trio.lowlevel.Task] = []
    transport = HandedInTransport()
    session = server_with_tools(tasks, max_in_flight=1).session(transport)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await session.deliver(INITIALIZE)
            await session.deliver(message(method="notifications/initialized"))
            async with trio.open_nursery() as posts:
                posts.start_soon(session.deliver, call(1, "where"))
                posts.start_soon(session.deliver, call(2, "where"))
                await trio.testing.wait_all_tasks_blocked()
                # One handler runs; the other caller waits for its slot.
                assert len(tasks) == 1
                assert session.statistics().in_flight_incoming == 1
            await trio.sleep(1)
            assert len(tasks) == 2
            assert sorted(m["id"] for m in transport.sent if m.get("id") in (1, 2)) == [1, 2]
            nursery.cancel_scope.cancel()


async def test_handing_a_frame_to_a_session_that_is_not_running_raises_connection_closed() -> None:
    session = server_with_tools([]).session(HandedInTransport())
    with pytest.raises(mcptrio.ConnectionClosed):
        await session.deliver(INITIALIZE)


class RefusingTransport(HandedInTransport):
    """A transport that never takes a frame without waiting: everything goes by ``send``."""

    def send_nowait(self, frame: Outgoing) -> bool:
        return False


async def open_session(
    nursery: trio.Nursery, session: mcptrio.runtime.Session
) -> mcptrio.runtime.Session:
    await nursery.start(session.run)
    await session.deliver(INITIALIZE)
    await session.deliver(message(method="notifications/initialized"))
    return session


def eager_tools() -> mcptrio.Server:
    server = mcptrio.Server("eager", max_in_flight=1)

    @server.tool()
    async def now() -> str:
        return "now"

    @server.tool()
    async def unwritable() -> CallToolResult:
        # A result JSON cannot carry: its answer fails as it is encoded.
        return CallToolResult(content=[], structured_content={"value": object()})

    return server


async def test_an_answer_at_once_the_transport_cannot_take_now_is_sent_by_the_writer() -> None:
    transport = RefusingTransport()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            session = await open_session(nursery, eager_tools().session(transport))
            await session.deliver(call(1, "now"))
            # The answer waits in the outbox's buffer for the writer, and the one slot is free
            # again: the next call is answered too, after it.
            await session.deliver(call(2, "now"))
            await trio.testing.wait_all_tasks_blocked()
            assert [m.get("id") for m in transport.sent][-2:] == [1, 2]
            assert session.statistics().in_flight_incoming == 0
            nursery.cancel_scope.cancel()


async def test_an_answer_at_once_that_cannot_be_encoded_is_answered_32603() -> None:
    transport = HandedInTransport()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            session = await open_session(nursery, eager_tools().session(transport))
            await session.deliver(call(1, "unwritable"))
            error = transport.sent[-1]["error"]
            assert isinstance(error, dict) and error["code"] == -32603
            assert error["message"].startswith("TypeError")
            await session.deliver(call(2, "now"))
            assert transport.sent[-1]["id"] == 2
            nursery.cancel_scope.cancel()


class Ready:
    """An awaitable that is no coroutine, ready at once with ``result``."""

    def __init__(self, result: Result) -> None:
        self.result = result

    def __await__(self) -> Generator[Any, Any, Result]:
        return self.result
        yield  # a generator that never yields


async def test_a_handler_answering_with_an_awaitable_that_is_no_coroutine_is_answered_at_once() -> (
    None
):
    transport = HandedInTransport()
    answered: list[trio.lowlevel.Task] = []

    def handle(rctx: RequestContext, request: Request[Any]) -> Ready:
        answered.append(trio.lowlevel.current_task())
        return Ready(CallToolResult(content=[TextContent(text="ready")]))

    session = mcptrio.runtime.Session(
        eager_tools().connection(),
        transport,
        handle_request=handle,
        answers_at_once=lambda request: True,
    )
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await open_session(nursery, session)
            await session.deliver(call(1, "any"))
            assert transport.sent[-1] == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"content": [{"type": "text", "text": "ready"}]},
            }
            assert answered == [trio.lowlevel.current_task()]
            nursery.cancel_scope.cancel()
