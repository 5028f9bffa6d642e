"""The event store behind resumable SSE streams.

Every SSE event a Streamable HTTP server writes is stored first, under an id the store makes up,
so that a client that lost the connection can come back with ``Last-Event-ID`` and have the rest
of *that* stream replayed (never another stream's events). The HTTP endpoint stores an event
before it writes it; whatever the client missed is therefore in the store.

Event ids are ``"<stream id>-<sequence>"``: the sequence counts from 1 within the stream, so an id
names its stream (which the 2025-11-25 spec asks for) and tells where a gap is. Stream ids are
made by the endpoint and contain no ``-``.

:class:`InMemoryEventStore` keeps at most ``max_events_per_session`` events per session and
evicts the oldest past that. A replay that starts before the oldest event still held says so
(:attr:`Replay.missed`) and replays what is left: the spec lets a server replay what it can, and
a client that gets most of a stream is better off than one refused outright.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["EventStore", "InMemoryEventStore", "Replay", "UnknownEventId", "parse_event_id"]


class UnknownEventId(LookupError):
    """A ``Last-Event-ID`` that names no stream of the session (or is not an id at all)."""


@dataclass(frozen=True, slots=True)
class Replay:
    """What a resuming client gets: the stream it was on, and that stream's later events."""

    stream_id: str
    events: list[tuple[str, bytes]]
    #: How many events after the requested one were evicted before they could be replayed.
    missed: int = 0


class EventStore(Protocol):
    """Keeps the SSE events of every session, for replay on ``Last-Event-ID``."""

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str:
        """Append ``message`` to ``stream_id`` of ``session_id``; return its event id."""
        ...

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        """The events of ``last_event_id``'s stream after it; :class:`UnknownEventId` if none."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """Drop everything kept for ``session_id`` (it ended)."""
        ...


def parse_event_id(event_id: str) -> tuple[str, int]:
    """Split ``"<stream>-<seq>"``; :class:`UnknownEventId` if it is not of that form."""
    stream_id, sep, seq = event_id.rpartition("-")
    if not sep or not stream_id or not seq.isascii() or not seq.isdigit():
        raise UnknownEventId(event_id)
    return stream_id, int(seq)


# Lists, not deques, and no (seq, message) pairs: a server holds a log for every session with
# an SSE stream (a GET's priming event is enough), so the empty log must be small (an empty
# deque is several times an empty list). Evicting from the front of a list moves at most
# ``max_events_per_session`` pointers.


@dataclass(slots=True)
class _Stream:
    next_seq: int = 1
    # The messages held, oldest first; their seqs are consecutive, up to ``next_seq - 1``.
    messages: list[bytes] = field(default_factory=list)

    @property
    def first_seq(self) -> int:
        """The seq of the oldest message held (``next_seq`` when none is)."""
        return self.next_seq - len(self.messages)


@dataclass(slots=True)
class _SessionLog:
    streams: dict[str, _Stream] = field(default_factory=dict)
    # The stream of every event held, oldest first: eviction takes from here.
    order: list[str] = field(default_factory=list)
    # Streams whose every event was evicted are dropped from ``streams`` (a long session opens
    # a stream per request: keeping them all would grow without bound). Their next sequence
    # number is kept here, newest last, for at most _RETIRED_STREAMS of them, so that a replay
    # can still say how much it missed and a stream that stores again continues its ids.
    retired: dict[str, int] = field(default_factory=dict)


_RETIRED_STREAMS = 4096


class InMemoryEventStore:
    """An :class:`EventStore` in this process's memory, bounded per session.

    ``max_events_per_session`` bounds the events held per session across all its streams; the
    oldest are evicted first. Nothing here awaits, so storing never yields to other tasks.
    """

    def __init__(self, *, max_events_per_session: int = 4096) -> None:
        if max_events_per_session < 1:
            raise ValueError("max_events_per_session must be at least 1")
        self.max_events_per_session = max_events_per_session
        self._sessions: dict[str, _SessionLog] = {}

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str:
        return self.store_nowait(session_id, stream_id, message)

    def store_nowait(self, session_id: str, stream_id: str, message: bytes) -> str:
        """:meth:`store` without the await (this store never has to wait)."""
        log = self._sessions.get(session_id)
        if log is None:
            log = self._sessions[session_id] = _SessionLog()
        stream = log.streams.get(stream_id)
        if stream is None:
            stream = log.streams[stream_id] = _Stream(log.retired.pop(stream_id, 1))
        seq = stream.next_seq
        stream.next_seq = seq + 1
        stream.messages.append(message)
        order = log.order
        order.append(stream_id)
        if len(order) > self.max_events_per_session:
            evicted_id = order.pop(0)
            evicted = log.streams[evicted_id]
            del evicted.messages[0]
            if not evicted.messages:
                del log.streams[evicted_id]
                log.retired[evicted_id] = evicted.next_seq
                if len(log.retired) > _RETIRED_STREAMS:
                    del log.retired[next(iter(log.retired))]
        return f"{stream_id}-{seq}"

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        stream_id, seq = parse_event_id(last_event_id)
        log = self._sessions.get(session_id)
        stream = None if log is None else log.streams.get(stream_id)
        if stream is None:
            next_seq = None if log is None else log.retired.get(stream_id)
            if next_seq is None or seq >= next_seq:
                raise UnknownEventId(last_event_id)
            return Replay(stream_id, [], next_seq - 1 - seq)
        if seq >= stream.next_seq:
            raise UnknownEventId(last_event_id)
        first = stream.first_seq
        start = max(seq + 1 - first, 0)
        missed = max(first - (seq + 1), 0)
        replayed = [
            (f"{stream_id}-{first + i}", m) for i, m in enumerate(stream.messages[start:], start)
        ]
        return Replay(stream_id, replayed, missed)

    async def forget_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def event_count(self, session_id: str) -> int:
        """How many events are held for ``session_id``."""
        log = self._sessions.get(session_id)
        return 0 if log is None else len(log.order)
