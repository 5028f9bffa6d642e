"""A flood of frames on one session neither starves other tasks nor stops the session ending."""

from __future__ import annotations

import json

import trio

import mcptrio
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.memory import memory_transport_pair


async def test_a_flood_of_frames_does_not_starve_other_tasks_and_the_session_still_ends() -> None:
    server = mcptrio.Server("review-flood")
    client_end, server_end = memory_transport_pair(buffer=64)
    ticks = 0
    answers = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    async def flood() -> None:
        for i in range(5000):
            frame = json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode()
            await client_end.send([Outgoing(frame)])

    async def drain() -> None:
        nonlocal answers
        while answers < 5000:
            await client_end.receive()
            answers += 1

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(tick)
            await nursery.start(server.serve_session, server_end)
            async with trio.open_nursery() as peers:
                peers.start_soon(flood)
                peers.start_soon(drain)
            assert answers == 5000
            # Frames come in runs of at most one buffer per step: the ticker ran meanwhile.
            assert ticks > 5000 // 64
            nursery.cancel_scope.cancel()
