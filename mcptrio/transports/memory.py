"""An in-process transport pair: two ends joined by bounded memory channels.

What one end sends, the other receives, frame for frame. Used for in-process servers
(``open_client(server)``), for tests, and as the reference every other transport is checked
against. Each direction holds at most ``buffer`` frames; a sender past that waits, which is the
same backpressure a full pipe or socket gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import trio

from .base import DEFAULT_MAX_FRAME_SIZE, Frame, Outgoing, OversizedFrame

__all__ = ["MemoryTransport", "memory_transport_pair"]


class MemoryTransport:
    """One end of an in-memory transport pair; see :func:`memory_transport_pair`."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[bytes],
        receive_channel: trio.MemoryReceiveChannel[bytes],
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    ) -> None:
        self._send_channel = send_channel
        self._receive_channel = receive_channel
        self.max_frame_size = max_frame_size

    async def receive(self) -> Frame:
        # A frame already waiting is handed over without yielding, as a stream transport hands
        # over the rest of one read: the session then takes every frame the peer sent since it
        # last ran in one step, instead of one per scheduler pass. That is bounded (by the
        # channel's buffer, which nothing refills while this task runs); only a receive that has
        # to wait is a checkpoint.
        try:
            frame = self._receive_channel.receive_nowait()
        except trio.WouldBlock:
            try:
                frame = await self._receive_channel.receive()
            except trio.ClosedResourceError:
                raise trio.EndOfChannel from None
        except trio.ClosedResourceError:
            raise trio.EndOfChannel from None
        if len(frame) > self.max_frame_size:
            return OversizedFrame(self.max_frame_size)
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            await self._send_channel.send(frame.data)

    def send_nowait(self, frame: Outgoing) -> bool:
        """Hand one frame over if the peer's buffer has room; never blocks."""
        try:
            self._send_channel.send_nowait(frame.data)
        except trio.WouldBlock:
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    async def aclose(self) -> None:
        await self._send_channel.aclose()
        await self._receive_channel.aclose()


def memory_transport_pair(
    *, buffer: int = 256, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: ``(client_end, server_end)``."""
    a_send, b_receive = trio.open_memory_channel[bytes](buffer)
    b_send, a_receive = trio.open_memory_channel[bytes](buffer)
    return (
        MemoryTransport(a_send, a_receive, max_frame_size=max_frame_size),
        MemoryTransport(b_send, b_receive, max_frame_size=max_frame_size),
    )
