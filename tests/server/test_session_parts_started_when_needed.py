"""A session keeps no task waiting for work that may never come: its writer starts with the
first frame that must wait for the peer, the server's notifier with the first thing to send
(and ends once it has sent it); what they send arrives as it did when they ran all along."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import trio
import trio.testing

import mcptrio
from mcptrio.protocol.errors import ConnectionClosed
from mcptrio.protocol.types import ToolListChangedNotification
from mcptrio.runtime.session import Session
from mcptrio.runtime.transport import Frame, Outgoing, TransportAbilities
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair


def task_names() -> list[str]:
    names: list[str] = []
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        assert task is not None
        names.append(task.name)
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return names


def count(fragment: str) -> int:
    return sum(fragment in name for name in task_names())


def frame(message: dict[str, object]) -> Outgoing:
    return Outgoing(json.dumps({"jsonrpc": "2.0", **message}).encode())


INITIALIZE: dict[str, object] = {
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "lazy", "version": "1"},
    },
}


async def handshake(peer: MemoryTransport) -> None:
    await peer.send([frame(INITIALIZE), frame({"method": "notifications/initialized"})])
    assert (await receive_json(peer))["id"] == "init"


async def receive_json(peer: MemoryTransport) -> dict[str, object]:
    data = await peer.receive()
    assert isinstance(data, bytes)
    message = json.loads(data)
    assert isinstance(message, dict)
    return message


@asynccontextmanager
async def serving_in_memory(
    server: mcptrio.Server,
) -> AsyncIterator[tuple[MemoryTransport, Session]]:
    """``server`` serves one session over memory for the block; yields the client's end and the
    session."""
    peer, server_end = memory_transport_pair()
    async with trio.open_nursery() as nursery:
        session = await nursery.start(server.serve_session, server_end)
        yield peer, session
        nursery.cancel_scope.cancel()


def server_with_a_tool() -> mcptrio.Server:
    server = mcptrio.Server("lazy")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_an_idle_session_keeps_no_writer_and_no_notifier() -> None:
    server = server_with_a_tool()
    with trio.fail_after(10):
        async with serving_in_memory(server) as (peer, _):
            await handshake(peer)
            await trio.testing.wait_all_tasks_blocked()
            assert count("run_writer") == 0
            assert count("run_notifier") == 0


async def test_an_idle_session_has_no_subscription_table_until_it_subscribes() -> None:
    server = server_with_a_tool()
    with trio.fail_after(10):
        async with serving_in_memory(server) as (peer, session):
            await handshake(peer)
            state = server.session_state(session)
            assert state._subscriptions is None
            assert state.subscriptions == frozenset()
            assert not state.resource_updated("mem://a")
            assert not state.unsubscribe("mem://a")
            state.subscribe("mem://a")
            assert state.subscriptions == {"mem://a"}
            assert state.resource_updated("mem://a")
            assert state.unsubscribe("mem://a")
            assert state.subscriptions == frozenset()


async def test_a_list_change_starts_the_notifier_which_ends_once_it_has_sent() -> None:
    server = server_with_a_tool()
    with trio.fail_after(10):
        async with serving_in_memory(server) as (peer, _):
            await handshake(peer)
            # A burst of changes: one notification per kind, then the notifier ends.
            for index in range(3):
                server.tool(f"more_{index}")(lambda: "x")
            assert (await receive_json(peer))["method"] == "notifications/tools/list_changed"
            await trio.testing.wait_all_tasks_blocked()
            assert count("run_notifier") == 0
            # It starts again for the next change.
            server.remove_tool("more_0")
            assert (await receive_json(peer))["method"] == "notifications/tools/list_changed"
            await trio.testing.wait_all_tasks_blocked()
            assert count("run_notifier") == 0
            with trio.move_on_after(0.2):
                extra = await peer.receive()
                raise AssertionError(f"one notification per burst, got {extra!r} too")


async def test_a_change_made_before_the_session_runs_is_sent_after_the_handshake() -> None:
    server = server_with_a_tool()
    peer, server_end = memory_transport_pair()
    with trio.fail_after(10):
        session = server.session(server_end)
        server.tool("late")(lambda: "x")
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await handshake(peer)
            assert (await receive_json(peer))["method"] == "notifications/tools/list_changed"
            nursery.cancel_scope.cancel()


async def test_a_change_before_the_handshake_is_sent_only_after_it() -> None:
    server = server_with_a_tool()
    with trio.fail_after(10):
        async with serving_in_memory(server) as (peer, session):
            server.tool("early")(lambda: "x")
            await trio.testing.wait_all_tasks_blocked()
            # The notifier waits for the handshake: nothing is sent before initialize.
            with trio.move_on_after(0.2):
                early = await peer.receive()
                raise AssertionError(f"sent before the handshake: {early!r}")
            assert not session.handshake_complete.is_set()
            await handshake(peer)
            assert session.handshake_complete.is_set()
            assert (await receive_json(peer))["method"] == "notifications/tools/list_changed"


class StreamLikeTransport:
    """A transport with no ``send_nowait`` (like stdio's): every frame goes through the
    session's buffer and writer."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.writes = 0
        self._end = trio.Event()

    def abilities(self) -> TransportAbilities:
        return TransportAbilities()

    async def receive(self) -> Frame:
        await self._end.wait()
        raise trio.EndOfChannel

    async def send(self, frames: Sequence[Outgoing]) -> None:
        await trio.lowlevel.checkpoint()
        self.writes += 1
        self.sent.extend(frame.data for frame in frames)

    async def aclose(self) -> None:
        self._end.set()


async def test_the_writer_starts_with_the_first_frame_that_waits_and_keeps_the_order() -> None:
    transport = StreamLikeTransport()
    session = Session(mcptrio.Server("lazy").connection(), transport)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await trio.testing.wait_all_tasks_blocked()
            assert count("run_writer") == 0
            assert session.statistics().queued_outgoing == 0
            for index in range(5):
                await session._outbox.put(Outgoing(b'{"n":%d}' % index))
            await trio.testing.wait_all_tasks_blocked()
            assert count("run_writer") == 1
            assert transport.sent == [b'{"n":%d}' % index for index in range(5)]
            await transport.aclose()
    assert count("run_writer") == 0


async def test_frames_queued_before_the_session_runs_are_written_when_it_starts() -> None:
    transport = StreamLikeTransport()
    session = Session(mcptrio.Server("lazy").connection(), transport)
    assert session._outbox.put_nowait(Outgoing(b'{"early":1}'))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await trio.testing.wait_all_tasks_blocked()
            assert transport.sent == [b'{"early":1}']
            await transport.aclose()


async def test_a_session_closed_before_it_runs_ends_at_once() -> None:
    transport = StreamLikeTransport()
    session = Session(mcptrio.Server("lazy").connection(), transport)
    session.close()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
    assert session.closed.is_set()
    assert session.is_ended
    try:
        await session.notify(ToolListChangedNotification())
    except ConnectionClosed:
        pass
    else:
        raise AssertionError("a closed session took a notification")


async def test_closing_a_running_session_ends_its_run_and_sets_closed() -> None:
    transport = StreamLikeTransport()
    session = Session(mcptrio.Server("lazy").connection(), transport)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            closed = session.closed
            assert not closed.is_set()
            session.close()
            await closed.wait()
    assert transport._end.is_set()
