"""The owner's messages for one exchange a worker forwarded, waiting for its client.

Messages are put here by the mailbox reader that every exchange of the worker shares, so
putting one never waits: past :data:`MAX_FRAMES` messages or :data:`MAX_BYTES` bytes the
exchange is given up instead (its client is not reading). The forwarding task takes them out
one by one. The exchange also ends here when its owner is known to have gone, or cannot be
reached: the relay's owner watch says so, once a second at most, for every exchange waiting on
that owner (a timer per exchange cost the forwarding path a cancel scope per message).
"""

from __future__ import annotations

import enum
from collections import deque
from typing import Final

import trio

from .messages import Chunk, RelayMessage

__all__ = ["MAX_BYTES", "MAX_FRAMES", "Inbound", "InboundEnd", "RelayedExchangeFailed"]

#: Messages of one exchange that may wait for a slow client on the forwarding worker.
MAX_FRAMES: Final = 256
#: Bytes of one exchange that may wait for a slow client on the forwarding worker.
MAX_BYTES: Final = 8 * 1024 * 1024


class RelayedExchangeFailed(Exception):
    """A forwarded exchange broke after its response had started; the connection is dropped."""


class InboundEnd(enum.Enum):
    """Why no more messages will come for an exchange."""

    OWNER_GONE = "the session's worker has gone"
    UNREACHABLE = "the session's worker cannot be reached"
    OVERFLOWED = "the client is not reading its response"


class Inbound:
    """Messages from ``owner`` for one forwarded exchange; see the module docstring."""

    __slots__ = ("_lot", "_messages", "bytes", "end", "owner")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._messages: deque[RelayMessage] = deque()
        self._lot = trio.lowlevel.ParkingLot()
        self.bytes = 0
        self.end: InboundEnd | None = None

    def deliver(self, message: RelayMessage) -> None:
        """Keep ``message`` for the client (never waits)."""
        if self.end is not None:
            return
        size = len(message.data) if isinstance(message, Chunk) else 0
        if len(self._messages) >= MAX_FRAMES or self.bytes + size > MAX_BYTES:
            self.finish(InboundEnd.OVERFLOWED)
            return
        self.bytes += size
        self._messages.append(message)
        self._lot.unpark()

    def finish(self, end: InboundEnd) -> None:
        """No more messages will come, because of ``end``."""
        if self.end is None:
            self.end = end
            self._lot.unpark_all()

    async def next(self) -> RelayMessage | InboundEnd:
        """The next message; or, once those that came are taken, why no more will come. A
        client that fell behind gets its end at once: what waits for it is given up."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self.end is InboundEnd.OVERFLOWED:
                return self.end
            if self._messages:
                message = self._messages.popleft()
                if isinstance(message, Chunk):
                    self.bytes -= len(message.data)
                return message
            if self.end is not None:
                return self.end
            await self._lot.park()
