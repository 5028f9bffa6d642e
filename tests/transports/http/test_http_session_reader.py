"""The reader of a Streamable HTTP session: POSTs hand their frames to the session themselves,
so the transport's ``receive`` only waits for the session's end."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcptrio.transports.http.endpoints.http_session import HttpSession


async def test_closing_ends_a_waiting_reader() -> None:
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
            assert not ended
            await transport.aclose()
    assert ended == [True]
    assert transport.is_ended


async def test_a_cancelled_reader_can_wait_again() -> None:
    transport = HttpSession("s", event_store=None)
    with trio.move_on_after(0.01):
        await transport.receive()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(transport.aclose)
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()
