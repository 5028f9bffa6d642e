"""The records of calls run at most once: :class:`CallRecords` and its in-memory store.

A request marked with a call key (see :mod:`mcptrio.server.call_once`) is run by the first worker
that claims its key; a re-issue of it finds the record and gets what the first run left, never a
second run. A record is one of these values::

    RUNNING      b"R"           claimed: a worker is running the call
    LAPSED       b"X"           (read, never stored) running, but its worker's lease ran out:
                                it died, or stalled, mid-call
    INTERRUPTED  b"U"           the run was cancelled before it finished
    ANSWERED     b"D" + JSON    finished: the result
    REFUSED      b"E" + JSON    finished: the error answer (``code``, ``message``, ``data``)
    TOO_LARGE    b"L" + size    finished, its answer over ``max_answer_bytes``, not kept

A finished or interrupted record is kept ``retention`` seconds, then forgotten (a re-issue
after that runs the call again; clients re-issue within seconds). A running record in Redis has
a lease of ``lease`` seconds that its worker renews while the call runs
(:mod:`.redis_call_records`); in one process the record lives as long as the process.

The in-memory store serves one process: every request of its calls comes to it. It keeps at
most ``max_records`` finished records (the oldest go first).
"""

from __future__ import annotations

from typing import Final, Protocol

import trio

__all__ = [
    "ANSWERED",
    "INTERRUPTED",
    "LAPSED",
    "REFUSED",
    "RUNNING",
    "TOO_LARGE",
    "CallRecords",
    "MemoryCallRecords",
]

RUNNING: Final = b"R"
LAPSED: Final = b"X"
INTERRUPTED: Final = b"U"
ANSWERED: Final = b"D"
REFUSED: Final = b"E"
TOO_LARGE: Final = b"L"


class CallRecords(Protocol):
    """Where the records of run-once calls live (see the module docstring)."""

    #: Seconds a worker's claim on a running call lasts unless renewed.
    lease: float
    #: The largest answer kept for a re-issue, in bytes of JSON.
    max_answer_bytes: int

    async def claim(self, key: str) -> bytes | None:
        """Claim ``key`` for a run: ``None`` when this caller now runs it, else its record."""
        ...

    async def renew(self, key: str) -> None:
        """Renew the lease of a claimed ``key`` (every ``lease / 3`` seconds while it runs)."""
        ...

    async def settle(self, key: str, record: bytes) -> None:
        """Keep ``record`` (finished or interrupted) for ``key``; waiters see it."""
        ...

    async def release(self, key: str) -> None:
        """Forget ``key``: the call left nothing to keep (its next request runs it)."""
        ...

    async def wait(self, key: str) -> bytes | None:
        """The record of ``key`` once it is no longer running (or its lease lapsed); ``None``
        when it is gone (released), and the caller claims it again."""
        ...


class MemoryCallRecords:
    """:class:`CallRecords` for one process."""

    def __init__(
        self,
        *,
        retention: float = 600.0,
        max_records: int = 10_000,
        max_answer_bytes: int = 1 << 20,
    ) -> None:
        if retention <= 0 or max_records < 1 or max_answer_bytes < 0:
            raise ValueError("retention and max_records must be positive")
        self.retention = retention
        self.max_records = max_records
        self.max_answer_bytes = max_answer_bytes
        self.lease = float("inf")
        #: Finished and interrupted records and when each is forgotten, oldest first.
        self._kept: dict[str, tuple[bytes, float]] = {}
        #: The calls running now, each with the event set when it stops.
        self._running: dict[str, trio.Event] = {}

    def __len__(self) -> int:
        return len(self._kept) + len(self._running)

    def _record(self, key: str) -> bytes | None:
        if key in self._running:
            return RUNNING
        kept = self._kept.get(key)
        if kept is None:
            return None
        if kept[1] <= trio.current_time():
            del self._kept[key]
            return None
        return kept[0]

    async def claim(self, key: str) -> bytes | None:
        await trio.lowlevel.checkpoint()
        record = self._record(key)
        if record is None:
            self._running[key] = trio.Event()
        return record

    async def renew(self, key: str) -> None:
        await trio.lowlevel.checkpoint()

    async def settle(self, key: str, record: bytes) -> None:
        now = trio.current_time()
        self._kept.pop(key, None)
        self._kept[key] = (record, now + self.retention)
        while len(self._kept) > self.max_records or (
            self._kept and next(iter(self._kept.values()))[1] <= now
        ):
            del self._kept[next(iter(self._kept))]
        self._stopped(key)
        await trio.lowlevel.checkpoint()

    async def release(self, key: str) -> None:
        self._kept.pop(key, None)
        self._stopped(key)
        await trio.lowlevel.checkpoint()

    def _stopped(self, key: str) -> None:
        event = self._running.pop(key, None)
        if event is not None:
            event.set()

    async def wait(self, key: str) -> bytes | None:
        event = self._running.get(key)
        if event is not None:
            await event.wait()
        else:
            await trio.lowlevel.checkpoint()
        return self._record(key)
