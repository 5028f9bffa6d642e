"""A legacy SSE session's queue of POSTed frames is bounded in frames and in bytes: a client
whose session does not read on waits, and parks no more than that in the server's memory."""

from __future__ import annotations

import trio
import trio.testing

from mcptrio.transports.http.endpoints.legacy_sse import LegacySseTransport


async def test_posts_past_the_byte_limit_wait_until_the_session_reads() -> None:
    transport = LegacySseTransport("s", None, byte_limit=1000)
    delivered: list[int] = []

    async def post(number: int) -> None:
        assert await transport.deliver(b"x" * 400)
        delivered.append(number)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            for number in range(3):
                nursery.start_soon(post, number)
                await trio.testing.wait_all_tasks_blocked()
            assert len(delivered) == 2
            assert transport.queued_bytes == 800
            assert await transport.receive() == b"x" * 400
            await trio.testing.wait_all_tasks_blocked()
            assert len(delivered) == 3
            assert transport.queued_bytes == 800


async def test_a_frame_larger_than_the_limit_gets_in_alone() -> None:
    transport = LegacySseTransport("s", None, byte_limit=100)
    with trio.fail_after(5):
        assert await transport.deliver(b"y" * 500)
        with trio.move_on_after(0.1) as waited:
            await transport.deliver(b"z")
        assert waited.cancelled_caught
        assert transport.queued_bytes == 500
        assert await transport.receive() == b"y" * 500
        assert await transport.deliver(b"z")


async def test_a_post_waiting_for_room_learns_that_the_session_ended() -> None:
    transport = LegacySseTransport("s", None, byte_limit=100)
    with trio.fail_after(5):
        assert await transport.deliver(b"y" * 100)
        async with trio.open_nursery() as nursery:
            outcome: list[bool] = []

            async def post() -> None:
                outcome.append(await transport.deliver(b"z"))

            nursery.start_soon(post)
            await trio.testing.wait_all_tasks_blocked()
            await transport.aclose()
        assert outcome == [False]
