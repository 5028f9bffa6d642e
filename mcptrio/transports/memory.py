"""An in-process transport pair: two ends joined by two bounded pipes, one per direction.

What one end sends, the other receives, frame for frame (the same ``bytes`` objects: nothing is
copied). Used for in-process servers (``open_client(server)``), for tests, and as the reference
every other transport is checked against. Each direction holds at most ``buffer`` frames; a
sender past that waits, which is the same backpressure a full pipe or socket gives.

With ``carry_results`` (what ``open_client(server)`` and ``mcptrio.testing`` ask for; a bare
pair is a wire), a result is handed over unencoded, in either era: the receiving session
converts it into the type it expects instead of decoding it, so a large result costs no pass
over its bytes (the official SDK's in-memory transport makes none either; see
``docs/explanation/payload-cost.md``). Requests, notifications, errors, batches and results
JSON would not read back as themselves are always frames.

Each direction is a :class:`_Pipe`: a deque with a :class:`~mcptrio.runtime.parking.ParkingSpot`
for its receiver and one for its sender (a session receives from one task and sends from one
other, so each side has at most one waiter). It does what a Trio memory channel would here, with
less per frame: a channel keeps sets of waiters and statistics a pipe with one reader and one
writer does not need.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import trio

from ..protocol.codec import CarriedResult
from ..runtime.parking import ParkingSpot
from ..runtime.transport import (
    DEFAULT_MAX_FRAME_SIZE,
    Frame,
    Outgoing,
    TransportAbilities,
    oversized_frame,
)

__all__ = ["MemoryTransport", "memory_transport_pair"]


class _Pipe:
    """One direction of a pair: bounded, with closing as Trio's memory channels close."""

    __slots__ = ("frames", "limit", "receive_closed", "receiver", "send_closed", "sender")

    def __init__(self, limit: int) -> None:
        self.frames: deque[bytes | CarriedResult] = deque()
        self.limit = limit
        self.receiver = ParkingSpot()
        self.sender = ParkingSpot()
        self.send_closed = False
        self.receive_closed = False


class MemoryTransport:
    """One end of an in-memory transport pair; see :func:`memory_transport_pair`."""

    def __init__(
        self,
        outgoing: _Pipe,
        incoming: _Pipe,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        carry_results: bool = False,
    ) -> None:
        self._out = outgoing
        self._in = incoming
        self.max_frame_size = max_frame_size
        #: Whether results are handed over unencoded (see the module docstring).
        self.carries_results = carry_results

    async def receive(self) -> Frame | CarriedResult:
        # A frame already waiting is handed over without yielding, as a stream transport hands
        # over the rest of one read: the session then takes every frame the peer sent since it
        # last ran in one step, instead of one per scheduler pass. That is bounded (by the
        # buffer, which nothing refills while this task runs); only a receive that has to wait
        # is a checkpoint.
        pipe = self._in
        while not pipe.frames:
            if pipe.receive_closed or pipe.send_closed:
                await trio.lowlevel.checkpoint()
                raise trio.EndOfChannel
            await pipe.receiver.park()
        frame = pipe.frames.popleft()
        pipe.sender.wake()
        # A carried result is not limited: the limit guards against a peer's frames, and one
        # in process is the application's own code, whose values are already in memory.
        if type(frame) is bytes and len(frame) > self.max_frame_size:
            return oversized_frame(self.max_frame_size, frame)
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        pipe = self._out
        for frame in frames:
            while True:
                if pipe.send_closed:
                    raise trio.ClosedResourceError("this end of the transport is closed")
                if pipe.receive_closed:
                    raise trio.BrokenResourceError("the other end of the transport is closed")
                if len(pipe.frames) < pipe.limit:
                    break
                await pipe.sender.park()
            pipe.frames.append(frame.data)
            pipe.receiver.wake()
        await trio.lowlevel.checkpoint()

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(
            send_nowait=self.send_nowait,
            send_carried_nowait=self.send_carried_nowait if self.carries_results else None,
        )

    def send_nowait(self, frame: Outgoing) -> bool:
        """Hand one frame over if the peer's buffer has room; never blocks."""
        return self._put_nowait(frame.data)

    def send_carried_nowait(self, answer: CarriedResult) -> bool:
        """Hand a result over unencoded if the peer's buffer has room; never blocks."""
        return self._put_nowait(answer)

    def _put_nowait(self, item: bytes | CarriedResult) -> bool:
        pipe = self._out
        if pipe.send_closed or pipe.receive_closed or len(pipe.frames) >= pipe.limit:
            return False
        pipe.frames.append(item)
        pipe.receiver.wake()
        return True

    async def aclose(self) -> None:
        # As closing both memory channels of an end: the peer reads what was sent, then the end;
        # what the peer sent and this end did not read is dropped, and its sender is told.
        out, incoming = self._out, self._in
        out.send_closed = True
        out.receiver.wake()
        incoming.receive_closed = True
        incoming.frames.clear()
        incoming.sender.wake()
        incoming.receiver.wake()
        await trio.lowlevel.checkpoint()


def memory_transport_pair(
    *, buffer: int = 256, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, carry_results: bool = False
) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: ``(client_end, server_end)``; with ``carry_results`` each
    end's session hands its results over unencoded (see the module docstring)."""
    if buffer < 1:
        raise ValueError("buffer must be at least 1")
    to_server, to_client = _Pipe(buffer), _Pipe(buffer)
    limit = max_frame_size
    return (
        MemoryTransport(to_server, to_client, max_frame_size=limit, carry_results=carry_results),
        MemoryTransport(to_client, to_server, max_frame_size=limit, carry_results=carry_results),
    )
