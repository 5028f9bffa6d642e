"""The sending side of a session: a bounded buffer, one writer task, and a way around both.

Everything a session sends (answers, requests, notifications, the protocol layer's own replies)
goes through its :class:`Outbox`, in order:

- **Straight to the transport** when the transport takes frames without waiting (its
  :class:`~mcptrio.runtime.transport.TransportAbilities` has ``send_nowait``) and nothing is
  queued ahead: no hop through the writer task.
- **Carried by the requesting task** (:meth:`Outbox.exchange`) for a request, when the
  transport can send it and deliver its answer in the caller's task (``exchange``: an HTTP
  client's POST) and nothing is queued ahead: the POST runs in the task that waits for its
  answer, not in a task of its own started for it.
- **Unencoded**, for an answer, when the transport is in process and carries results
  (``send_carried_nowait``) and nothing is queued ahead (:meth:`Outbox.put_carried_nowait`);
  anything that cannot go that way is encoded first.
- **Else into the buffer** (``send_buffer`` frames, 256 by default, and ``send_buffer_bytes``
  bytes, 8 MiB by default), which the writer task drains, writing whatever has gathered (up to
  64 frames) in one ``Transport.send``. The byte budget is checked before a frame goes in, so a
  frame larger than the rest of it still gets in while anything is free, and the buffer holds
  at most one frame past it.
- **The buffer and the writer exist only once needed.** A server holds thousands of idle
  sessions, and an HTTP session's frames nearly always take the direct path: the buffer (a
  memory channel) is opened by the first frame that must wait in it, and the writer task is
  started then, in the session's nursery (or when the session starts, if it had not yet). Both
  then stay for the session's life.
- **When the buffer is full** (either way), :meth:`Outbox.put` waits for room. Nothing else
  queues frames: the reader waits there too (for a reply the protocol layer made, say), so a
  peer that sends and never reads stops being read, and its flood waits in its own pipe or
  socket, not in our memory.

This is an internal part of :class:`~mcptrio.runtime.session.Session`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ..protocol.codec import CarriedResult
from ..protocol.errors import ConnectionClosed
from .on_demand_nursery import TaskStarter
from .transport import Outgoing, Transport, TransportAbilities

__all__ = ["Outbox"]

_WRITE_COALESCE = 64


class Outbox:
    """A session's outgoing frames; see the module docstring."""

    __slots__ = (
        "_buffer",
        "_byte_limit",
        "_bytes",
        "_carry",
        "_closed",
        "_direct",
        "_drain",
        "_exchange",
        "_nursery",
        "_on_broken",
        "_queued",
        "_room",
        "_room_waiters",
        "_size",
        "_transport",
    )

    def __init__(
        self,
        transport: Transport,
        abilities: TransportAbilities,
        size: int,
        byte_limit: int = 8 << 20,
    ) -> None:
        self._transport = transport
        self._size = size
        # Opened by the first frame that must wait (see the module docstring).
        self._buffer: trio.MemorySendChannel[Outgoing] | None = None
        self._drain: trio.MemoryReceiveChannel[Outgoing] | None = None
        # Where the writer runs (the session's nursery), once the session runs.
        self._nursery: TaskStarter | None = None
        self._on_broken: Callable[[], object] | None = None
        # Bytes of the frames in the buffer (and in the writer's hands), and the tasks waiting
        # for them to drain below the limit (in a parking lot made when one first waits).
        self._bytes = 0
        self._byte_limit = byte_limit
        self._room: trio.lowlevel.ParkingLot | None = None
        self._room_waiters = 0
        self._direct = abilities.send_nowait
        self._exchange = abilities.exchange
        self._carry = abilities.send_carried_nowait
        # Frames handed to the writer and not yet written: the direct path may only be taken
        # when this is zero, or it would overtake them.
        self._queued = 0
        self._closed = False

    @property
    def buffered(self) -> int:
        """Frames waiting in the buffer for the writer."""
        buffer = self._buffer
        return 0 if buffer is None else buffer.statistics().current_buffer_used

    def attach(self, nursery: TaskStarter, on_broken: Callable[[], object]) -> None:
        """The session runs in ``nursery``: the writer runs there once it is needed (now, if
        frames already wait); ``on_broken()`` if the transport breaks while it writes."""
        self._nursery = nursery
        self._on_broken = on_broken
        if self._drain is not None:
            nursery.start_soon(self._run_writer, self._drain, on_broken)

    def _open_buffer(self) -> trio.MemorySendChannel[Outgoing]:
        """The buffer, opened now (and the writer started) by the first frame that waits."""
        self._buffer, self._drain = trio.open_memory_channel[Outgoing](self._size)
        if self._closed:
            self._buffer.close()
        elif self._nursery is not None:
            assert self._on_broken is not None
            self._nursery.start_soon(self._run_writer, self._drain, self._on_broken)
        return self._buffer

    @property
    def buffered_bytes(self) -> int:
        """Bytes of the frames in the buffer, or taken by the writer and not yet written."""
        return self._bytes

    @property
    def carries_results(self) -> bool:
        """Whether answers may be handed over unencoded (:meth:`put_carried_nowait`)."""
        return self._carry is not None

    def put_carried_nowait(self, answer: CarriedResult) -> bool:
        """Hand ``answer`` to the transport unencoded, when nothing is queued ahead and it
        takes it now; ``False`` (nothing done) otherwise: the caller sends its frame."""
        carry = self._carry
        return carry is not None and self._queued == 0 and not self._closed and carry(answer)

    async def exchange(self, request: Outgoing) -> bool:
        """Have the transport send ``request`` and deliver its answer in this task, when it
        can and nothing is queued ahead; ``False`` (nothing sent, no checkpoint) otherwise."""
        exchange = self._exchange
        if exchange is None or self._queued or self._closed:
            return False
        return await exchange(request)

    @property
    def has_room(self) -> bool:
        """Whether :meth:`put_nowait` would take a frame now (the buffer has room for it)."""
        return not self._closed and self._bytes < self._byte_limit and self._queued < self._size

    def put_nowait(self, outgoing: Outgoing) -> bool:
        """Take ``outgoing`` without waiting or checkpointing; ``False`` if the buffer is full
        (or the session has ended)."""
        direct = self._direct
        if direct is not None and self._queued == 0 and not self._closed and direct(outgoing):
            return True
        if self._bytes >= self._byte_limit:
            return False
        buffer = self._buffer
        if buffer is None:
            buffer = self._open_buffer()
        try:
            buffer.send_nowait(outgoing)
        except (trio.WouldBlock, trio.ClosedResourceError):
            return False
        self._queued += 1
        self._bytes += len(outgoing.data)
        return True

    async def put(self, outgoing: Outgoing) -> None:
        """Take ``outgoing``, waiting for room in the buffer; :class:`ConnectionClosed` once the
        session has ended. A checkpoint unless the transport took the frame at once."""
        direct = self._direct
        if direct is not None and self._queued == 0 and not self._closed and direct(outgoing):
            return
        self._queued += 1
        size = len(outgoing.data)
        try:
            while self._bytes >= self._byte_limit and not self._closed:
                room = self._room
                if room is None:
                    room = self._room = trio.lowlevel.ParkingLot()
                self._room_waiters += 1
                try:
                    await room.park()
                finally:
                    self._room_waiters -= 1
            buffer = self._buffer
            if buffer is None:
                buffer = self._open_buffer()
            # Counted before the wait for a frame's room, so that waiters woken together do
            # not all pass the byte check on the same drained bytes.
            self._bytes += size
            try:
                await buffer.send(outgoing)
            except BaseException:
                self._bytes -= size
                raise
        except trio.ClosedResourceError:
            self._queued -= 1
            raise ConnectionClosed("The session has ended") from None
        except BaseException:
            self._queued -= 1
            raise

    def close(self) -> None:
        """Take nothing more: ``put`` raises :class:`ConnectionClosed`, ``put_nowait`` says
        ``False``."""
        self._closed = True
        if self._buffer is not None:
            self._buffer.close()
        if self._room is not None:
            self._room.unpark_all()

    async def _run_writer(
        self, drain: trio.MemoryReceiveChannel[Outgoing], on_broken: Callable[[], object]
    ) -> None:
        """Write buffered frames until closed; ``on_broken()`` if the transport breaks."""
        send: Callable[[list[Outgoing]], Awaitable[None]] = self._transport.send
        receive_nowait = drain.receive_nowait
        try:
            async for first in drain:
                batch = [first]
                size = len(first.data)
                while len(batch) < _WRITE_COALESCE:
                    try:
                        outgoing = receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    batch.append(outgoing)
                    size += len(outgoing.data)
                await send(batch)
                self._queued -= len(batch)
                self._bytes -= size
                if self._room_waiters:
                    assert self._room is not None
                    self._room.unpark_all()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            on_broken()
