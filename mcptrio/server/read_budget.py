"""The bytes of resource contents a server prepares at once: :class:`ReadBudget`.

A ``resources/read`` holds its contents in memory several times over while it is prepared (the
bytes a handler read, their text or base64 form, the contents made of them), so concurrent
reads of a large resource add up: one client could grow a server by hundreds of megabytes with
a few dozen reads of one large file. Each server has one budget (``Server(max_read_bytes=...)``,
24 MiB by default: the largest file a skill may publish, 16 MiB, fits as base64) and every read
that waits on its handler takes its contents' bytes from it until its contents are made:

- **before the handler runs**, the size the resource declares (a published skill file's, or
  ``size=`` given at registration), since reading is where the memory goes;
- **once the handler has answered**, the contents' size as they go on the wire (the text's
  length, four thirds of binary data's): a read that needs more than it holds gives back what it
  holds and waits for the whole, so that no read waits while holding bytes another needs;
- a read that needs more than **the whole budget** is refused (-32603, naming the resource,
  its size and the setting): it could never be served, and waiting would only hold its turn.

Waiters are served in the order they came (a large read is not overtaken for ever by small
ones), and wait under their request's cancel scope: a client that cancels, or leaves, stops
waiting and takes nothing. A read that has its bytes at once does not wait at all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

import trio

from ..protocol.errors import InternalError

__all__ = ["DEFAULT_MAX_READ_BYTES", "ReadBudget", "Reservation"]

DEFAULT_MAX_READ_BYTES: Final = 24 << 20


@dataclass(eq=False, slots=True)
class _Waiter:
    nbytes: int
    granted: trio.Event = field(default_factory=trio.Event)


class ReadBudget:
    """The bytes of resource contents being prepared at once, for one server (module docstring)."""

    __slots__ = ("_waiting", "held", "max_bytes")

    def __init__(self, max_bytes: int = DEFAULT_MAX_READ_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_read_bytes must be at least 1, not {max_bytes}")
        self.max_bytes = max_bytes
        #: The bytes the reads now being prepared hold.
        self.held = 0
        self._waiting: deque[_Waiter] = deque()

    @property
    def waiting(self) -> int:
        """How many reads wait for their bytes."""
        return len(self._waiting)

    @asynccontextmanager
    async def reserve(self, nbytes: int, uri: str) -> AsyncIterator[Reservation]:
        """Hold ``nbytes`` for the read of ``uri`` while the block runs (waiting for them if
        need be); :meth:`Reservation.grow_to` takes more."""
        reservation = Reservation(self, uri)
        try:
            await reservation.grow_to(nbytes)
            yield reservation
        finally:
            self._release(reservation.nbytes)
            reservation.nbytes = 0

    async def _acquire(self, nbytes: int, *, first: bool) -> None:
        if not self._waiting and self.held + nbytes <= self.max_bytes:
            self.held += nbytes
            return
        waiter = _Waiter(nbytes)
        if first:
            self._waiting.appendleft(waiter)
        else:
            self._waiting.append(waiter)
        # Ahead of the queue, it may fit at once.
        self._grant()
        try:
            await waiter.granted.wait()
        except BaseException:
            if waiter.granted.is_set():
                self._release(nbytes)
            else:
                self._waiting.remove(waiter)
                self._grant()
            raise

    def _release(self, nbytes: int) -> None:
        if nbytes:
            self.held -= nbytes
            self._grant()

    def _grant(self) -> None:
        waiting = self._waiting
        while waiting and self.held + waiting[0].nbytes <= self.max_bytes:
            waiter = waiting.popleft()
            self.held += waiter.nbytes
            waiter.granted.set()


class Reservation:
    """The bytes one read holds of its server's :class:`ReadBudget`."""

    __slots__ = ("_budget", "nbytes", "uri")

    def __init__(self, budget: ReadBudget, uri: str) -> None:
        self._budget = budget
        self.uri = uri
        self.nbytes = 0

    async def grow_to(self, nbytes: int) -> None:
        """Hold at least ``nbytes`` (waiting for them if need be); ``InternalError`` if that is
        more than the whole budget."""
        budget = self._budget
        if nbytes <= self.nbytes:
            return
        if nbytes > budget.max_bytes:
            raise InternalError(
                f"Resource {self.uri} is {nbytes} bytes, more than this server prepares at once"
                f" (Server(max_read_bytes={budget.max_bytes}))",
                {"uri": self.uri, "size": nbytes, "maxReadBytes": budget.max_bytes},
            )
        if not budget.waiting and budget.held - self.nbytes + nbytes <= budget.max_bytes:
            budget.held += nbytes - self.nbytes
            self.nbytes = nbytes
            return
        # Give back what is held before waiting: a waiter that holds bytes could wait on one
        # that waits on it. A read that held some goes ahead of the queue, since its contents
        # are already in memory; a new one takes its turn.
        held, self.nbytes = self.nbytes, 0
        budget._release(held)
        await budget._acquire(nbytes, first=held > 0)
        self.nbytes = nbytes
