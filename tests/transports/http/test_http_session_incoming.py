"""The incoming queue of a Streamable HTTP session (what POSTs hand to the session's reader)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcptrio.transports.http.endpoints.http_session import HttpSession, SessionEnded


async def test_frames_reach_the_reader_in_order_and_a_full_queue_makes_posts_wait() -> None:
    transport = HttpSession("s", event_store=None, incoming_buffer=2)
    delivered: list[bytes] = []

    async def post(frame: bytes) -> None:
        await transport.deliver(frame)
        delivered.append(frame)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            for frame in (b"1", b"2", b"3"):
                nursery.start_soon(post, frame)
                await trio.testing.wait_all_tasks_blocked()
            # Two fit; the third POST waits for room.
            assert delivered == [b"1", b"2"]
            assert transport.has_queued_frames
            assert await transport.receive() == b"1"
            await trio.testing.wait_all_tasks_blocked()
            assert delivered == [b"1", b"2", b"3"]
            assert await transport.receive() == b"2"
            assert await transport.receive() == b"3"
            assert not transport.has_queued_frames


async def test_a_parked_reader_gets_the_next_frame() -> None:
    transport = HttpSession("s", event_store=None)
    received: list[bytes] = []

    async def reader() -> None:
        received.append(bytes(await transport.receive()))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            await transport.deliver(b"frame")
    assert received == [b"frame"]


async def test_closing_refuses_waiting_and_later_posts_and_ends_the_reader() -> None:
    transport = HttpSession("s", event_store=None, incoming_buffer=1)
    await transport.deliver(b"queued")
    refused: list[bytes] = []

    async def waiting_post() -> None:
        with pytest.raises(SessionEnded):
            await transport.deliver(b"waits for room")
        refused.append(b"waits for room")

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiting_post)
            await trio.testing.wait_all_tasks_blocked()
            await transport.aclose()
    assert refused == [b"waits for room"]
    with pytest.raises(SessionEnded):
        await transport.deliver(b"late")
    # What was still queued is dropped with the session.
    with pytest.raises(trio.EndOfChannel):
        await transport.receive()
    assert transport.is_ended


async def test_closing_ends_a_parked_reader() -> None:
    transport = HttpSession("s", event_store=None)
    ended: list[bool] = []

    async def reader() -> None:
        with pytest.raises(trio.EndOfChannel):
            await transport.receive()
        ended.append(True)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            await transport.aclose()
    assert ended == [True]


async def test_a_cancelled_reader_can_receive_again() -> None:
    transport = HttpSession("s", event_store=None)
    with trio.move_on_after(0.01):
        await transport.receive()
    await transport.deliver(b"after")
    with trio.fail_after(5):
        assert await transport.receive() == b"after"
