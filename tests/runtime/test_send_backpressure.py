"""A peer that sends and never reads: its session stops reading, and grows neither tasks nor
memory; the server's other sessions carry on."""

from __future__ import annotations

import json
import logging

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.protocol.types import TextContent
from mcptrio.runtime.session import Session
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair

PIPE = 8
#: A session's outgoing buffer, by default.
SEND_BUFFER = 256
#: The most frames the writer takes out of the buffer for one write.
WRITE_BATCH = 64
MAX_IN_FLIGHT = 4
FLOOD = 2000


def all_tasks() -> int:
    def count(task: trio.lowlevel.Task) -> int:
        return 1 + sum(count(child) for n in task.child_nurseries for child in n.child_tasks)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    return count(root)


def frame(message: dict[str, object]) -> Outgoing:
    return Outgoing(json.dumps({"jsonrpc": "2.0", **message}).encode())


async def handshake(peer: MemoryTransport) -> None:
    await peer.send(
        [
            frame(
                {
                    "id": "init",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "flood", "version": "1"},
                    },
                }
            ),
            frame({"method": "notifications/initialized"}),
        ]
    )
    answer = await peer.receive()
    assert isinstance(answer, bytes)
    assert json.loads(answer)["id"] == "init"


async def flood_until_blocked(peer: MemoryTransport, message: dict[str, object]) -> int:
    """Send ``message`` (numbered) until the session stops taking them; how many it took."""
    sent = 0
    while sent < FLOOD:
        with trio.move_on_after(1) as waited:
            await peer.send([frame({**message, "id": sent})])
        if waited.cancelled_caught:
            break
        sent += 1
    return sent


def busy_server() -> mcptrio.Server:
    server = mcptrio.Server("flooded", max_in_flight=MAX_IN_FLIGHT)

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def check_flood_is_bounded(message: dict[str, object]) -> None:
    server = busy_server()
    stalled, stalled_server_end = memory_transport_pair(buffer=PIPE)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            session = await nursery.start(server.serve_session, stalled_server_end)
            await handshake(stalled)
            await trio.testing.wait_all_tasks_blocked()
            tasks_before = all_tasks()

            taken = await flood_until_blocked(stalled, message)

            # What the session took fits in the two pipes, its outgoing buffer, the writer's
            # batch, its in-flight requests and the one request waiting for a slot; the rest
            # waits in the peer, which is blocked.
            assert taken <= 2 * PIPE + SEND_BUFFER + WRITE_BATCH + MAX_IN_FLIGHT + 1
            assert session.statistics().queued_outgoing == SEND_BUFFER
            # No task per frame: at most one request actor per in-flight request, and the
            # writer (started by the first frame that had to wait for the peer).
            assert all_tasks() - tasks_before <= MAX_IN_FLIGHT + 1

            # Another session of the same server is not held up by it.
            async with mcptrio.open_client(server) as client:
                result = await client.call_tool("add", {"a": 1, "b": 2})
                assert result.content[0] == TextContent(text="3")

            # The stalled peer reads at last: everything it sent is answered, in full.
            answered = 0
            while answered < taken:
                await stalled.receive()
                answered += 1
            nursery.cancel_scope.cancel()


async def test_a_peer_flooding_pings_and_never_reading_stops_being_read() -> None:
    # Pings are answered by the protocol layer: no handler, only the outgoing buffer limits them.
    await check_flood_is_bounded({"method": "ping"})


async def test_a_peer_flooding_calls_and_never_reading_stops_being_read() -> None:
    await check_flood_is_bounded(
        {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )


async def test_callers_giving_up_on_a_peer_that_never_reads_are_not_held_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcptrio.session")
    stalled, stalled_server_end = memory_transport_pair(buffer=PIPE)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            session = await nursery.start(busy_server().serve_session, stalled_server_end)
            await handshake(stalled)
            async with trio.open_nursery() as callers:
                # More pings to the client than the pipe, the buffer and the writer's batch
                # hold: the last callers wait for room, the others for their answers.
                for _ in range(2 * PIPE + SEND_BUFFER + WRITE_BATCH + 50):
                    callers.start_soon(session.ping)
                await trio.testing.wait_all_tasks_blocked()
                assert session.statistics().queued_outgoing == SEND_BUFFER
                # Every caller gives up: none waits to tell the peer, whose buffer is full.
                callers.cancel_scope.cancel()
            assert session.statistics().pending_outgoing == 0
            assert "outgoing buffer full: not telling the peer" in caplog.text
            nursery.cancel_scope.cancel()


async def test_the_outgoing_buffer_is_bounded_in_bytes_too() -> None:
    # Large answers (a 100 KB resource, read again and again by a peer that never reads) fill
    # the byte budget long before the frame count: the reader stops there.
    server = mcptrio.Server("big", max_in_flight=MAX_IN_FLIGHT)

    @server.resource("test://big")
    def big() -> str:
        return "x" * 100_000

    limit = 1_000_000
    stalled, stalled_server_end = memory_transport_pair(buffer=PIPE)
    session = Session(
        server.connection(),
        stalled_server_end,
        handle_request=server.handle_request,
        max_in_flight=MAX_IN_FLIGHT,
        send_buffer_bytes=limit,
    )
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            await handshake(stalled)
            read: dict[str, object] = {"method": "resources/read", "params": {"uri": "test://big"}}
            taken = await flood_until_blocked(stalled, read)
            statistics = session.statistics()
            # At most one answer past the budget, and far fewer frames than the 256 allowed.
            assert limit <= statistics.queued_outgoing_bytes < limit + 101_000
            assert statistics.queued_outgoing < 12
            assert taken <= 2 * PIPE + 12 + MAX_IN_FLIGHT + 1
            answered = 0
            while answered < taken:
                await stalled.receive()
                answered += 1
            nursery.cancel_scope.cancel()
