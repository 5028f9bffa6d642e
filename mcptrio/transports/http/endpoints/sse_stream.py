"""One logical SSE stream of a Streamable HTTP session, and the loop that writes it.

A *stream* outlives the HTTP connections that carry it: the session routes messages to it
whether or not a client is connected, they wait in :attr:`OutboundStream.pending`, and whichever
connection is attached (the POST that opened it, or a GET resuming it with ``Last-Event-ID``)
writes them. :func:`write_stream` stores each message in the event store *before* writing it,
under the id it is written with, so a message taken off ``pending`` is never lost: if the write
fails the client resumes from its last id and the store replays it.

A later connection takes a stream over from an earlier one (which is then presumed dead: a
client only resumes a stream it lost); the earlier writer is cancelled and the new one waits
until it has let go, so two connections never write one stream.

Backpressure: a request's stream holds at most ``capacity`` undelivered messages; past that the
session's writer waits for room (see ``HttpSession``). The standalone (GET) stream never makes
the session wait: past ``capacity`` it drops its oldest undelivered message, with a warning.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterable
from typing import Protocol

import trio

from ....protocol.base import RequestId
from ....protocol.sse import encode_event
from ....stores.event_store import EventStore
from ..engine.exchange import HttpResponder

__all__ = [
    "OutboundStream",
    "StreamSession",
    "drain_events",
    "priming_event",
    "sse_event",
    "sse_event_parts",
    "write_stream",
]

log = logging.getLogger("mcptrio.http")

# How long a new connection waits for the writer it took a stream over from to let go.
_TAKEOVER_TIMEOUT = 5.0

#: Seconds a streamed SSE response may stay silent before a keep-alive comment is written, by
#: default (``McpHttpApp(keep_alive_interval=...)``).
KEEP_ALIVE_INTERVAL = 15.0
#: The keep-alive: an SSE comment line, which clients ignore.
KEEP_ALIVE = b": keep-alive\n\n"


class StreamSession(Protocol):
    """What writing a session's streams needs of the session (``HttpSession`` is one)."""

    @property
    def session_id(self) -> str: ...

    @property
    def event_store(self) -> EventStore | None:
        """Where events are stored before they are written (``None``: no resumption)."""
        ...

    @property
    def primes(self) -> bool:
        """Whether a new stream starts with a priming event (an id and empty data)."""
        ...

    @property
    def retry_ms(self) -> int | None:
        """The ``retry:`` sent with the priming event."""
        ...

    @property
    def keep_alive_interval(self) -> float:
        """Seconds a streamed response may stay quiet before a keep-alive comment."""
        ...


def sse_event(message: bytes, event_id: str | None) -> bytes:
    """One SSE ``message`` event; the fast path for JSON, which never holds a raw line break."""
    parts = sse_event_parts(message, event_id)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def sse_event_parts(message: bytes, event_id: str | None) -> tuple[bytes, ...]:
    """:func:`sse_event` in the parts a write may take one after the other: for JSON, which
    never holds a raw line break, the message itself is one of them, uncopied (framing a large
    answer by copying it would be most of what writing it costs, in time and in memory)."""
    if b"\n" in message or b"\r" in message or not message:
        return (encode_event(message, event_id=event_id),)
    if event_id is None:
        return (b"data: ", message, b"\n\n")
    return (b"id: %b\ndata: " % event_id.encode(), message, b"\n\n")


def priming_event(event_id: str, retry_ms: int | None) -> bytes:
    """The priming event of a stream: its first id, empty data, and the retry delay if any."""
    if "\n" in event_id or "\r" in event_id or "\0" in event_id:
        return encode_event(b"", event_id=event_id, retry_ms=retry_ms)  # raises ValueError
    if retry_ms is None:
        return b"id: %s\ndata: \n\n" % event_id.encode()
    return b"id: %s\nretry: %d\ndata: \n\n" % (event_id.encode(), retry_ms)


class OutboundStream:
    """Messages routed to one SSE stream, waiting for a connection to write them."""

    __slots__ = (
        "_detached",
        "_space",
        "_waiter",
        "_waiters",
        "capacity",
        "close_requested",
        "drop_oldest",
        "dropped",
        "finished",
        "on_activity",
        "owed",
        "pending",
        "resumable",
        "retry_ms",
        "stream_id",
        "writer",
    )

    def __init__(
        self,
        stream_id: str,
        capacity: int,
        *,
        drop_oldest: bool = False,
        owed: Iterable[RequestId] | None = None,
    ) -> None:
        self.stream_id = stream_id
        self.capacity = capacity
        self.drop_oldest = drop_oldest
        # A list, not a deque: a session's streams hold a few messages at a time, and an empty
        # deque is much larger than an empty list (a GET stream keeps one for its whole life,
        # a POST makes one).
        self.pending: list[bytes] = []
        #: The request ids (of a POST stream) still waiting for their answer; ``None`` on a
        #: stream that carries no answer (the standalone one), which would otherwise keep an
        #: empty set for its whole life.
        self.owed: set[RequestId] | None = None if owed is None else set(owed)
        #: No more messages will be routed here; the stream ends once ``pending`` is written.
        self.finished = False
        #: An event id of this stream has been written, so a client can resume it.
        self.resumable = False
        #: The server asked to close the connection (not the stream): SSE polling.
        self.close_requested = False
        self.retry_ms: int | None = None
        #: Messages dropped for want of room (standalone stream only).
        self.dropped = 0
        self.writer: trio.CancelScope | None = None
        #: Called once, when a message other than an answer is queued or a close is requested:
        #: a POST answered in its own task starts writing its stream then (see
        #: ``StreamableHttpEndpoint``).
        self.on_activity: Callable[[], None] | None = None
        # Made by a connection taking the stream over, set when the previous writer lets go.
        self._detached: trio.Event | None = None
        # The tasks parked in wait(), woken directly by whoever routes, finishes or closes: a
        # JSON answer costs one park and one reschedule, no Event.
        # One waiter (the usual case: the stream's writer, or the POST waiting for its JSON
        # answer) parks in ``_waiter`` with a bound method to abort; more go in the list, each
        # with a closure (which an open stream would otherwise keep for its whole life).
        self._waiter: trio.lowlevel.Task | None = None
        self._waiters: list[trio.lowlevel.Task] | None = None
        self._space: trio.Event | None = None

    def __repr__(self) -> str:
        return f"<OutboundStream {self.stream_id} pending={len(self.pending)}>"

    # ------------------------------------------------------------ routing side

    def has_room(self) -> bool:
        return len(self.pending) < self.capacity

    def push(self, data: bytes) -> None:
        """Queue ``data`` (the caller checked :meth:`has_room`, or it is an answer)."""
        if self.drop_oldest and len(self.pending) >= self.capacity:
            del self.pending[0]
            self.dropped += 1
            log.warning(
                "standalone SSE stream full (%d messages undelivered): dropped the oldest",
                self.capacity,
            )
        self.pending.append(data)
        if self._waiter is not None or self._waiters:
            self._wake()

    def push_related(self, data: bytes) -> None:
        """Queue a message that is not an answer (it may need a writer started)."""
        self.push(data)
        self.fire_activity()

    def fire_activity(self) -> None:
        """Call the ``on_activity`` hook, once."""
        hook = self.on_activity
        if hook is not None:
            self.on_activity = None
            hook()

    def finish(self) -> None:
        """No more messages come: the stream ends once what is pending is written."""
        self.finished = True
        if self._waiter is not None or self._waiters:
            self._wake()

    def request_close(self, retry_ms: int | None) -> None:
        """Ask the attached connection to close after what is pending (the stream lives on)."""
        self.close_requested = True
        self.retry_ms = retry_ms
        if self._waiter is not None or self._waiters:
            self._wake()
        self.fire_activity()

    async def wait_for_room(self) -> None:
        """Wait until a message is taken off ``pending``."""
        if self.has_room() or self.finished:
            return
        if self._space is None:
            self._space = trio.Event()
        await self._space.wait()

    # ------------------------------------------------------------ writing side

    async def wait(self) -> None:
        """Wait until something is pending, the stream finished, or a close was requested."""
        if self.pending or self.finished or self.close_requested:
            return
        task = trio.lowlevel.current_task()
        if self._waiter is None:
            self._waiter = task
            await trio.lowlevel.wait_task_rescheduled(self._abort_waiter)
            return
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
        waiters.append(task)

        def abort(_: object) -> trio.lowlevel.Abort:
            waiters.remove(task)
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def _abort_waiter(self, _: object) -> trio.lowlevel.Abort:
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter)
        waiters, self._waiters = self._waiters, None
        for task in waiters or ():
            trio.lowlevel.reschedule(task)

    def took(self) -> None:
        """Messages were taken off ``pending``: wake a router waiting for room."""
        if self._space is not None:
            self._space.set()
            self._space = None

    async def attach(self) -> trio.CancelScope:
        """Become the stream's writer, taking over from a previous one; returns its scope."""
        previous = self.writer
        if previous is not None:
            detached = self._detached
            if detached is None:
                detached = self._detached = trio.Event()
            previous.cancel()
            with trio.move_on_after(_TAKEOVER_TIMEOUT):
                await detached.wait()
        scope = trio.CancelScope()
        self.writer = scope
        return scope

    @property
    def taken_over(self) -> bool:
        """Whether a newer connection waits to take the stream over from its writer."""
        return self._detached is not None

    def renew_writer(self, spent: trio.CancelScope) -> trio.CancelScope:
        """A fresh scope for the writer whose scope ``spent`` ended on its own deadline."""
        scope = trio.CancelScope()
        if self.writer is spent:
            self.writer = scope
        return scope

    def detach(self, scope: trio.CancelScope) -> None:
        if self.writer is scope:
            self.writer = None
            detached = self._detached
            if detached is not None:
                self._detached = None
                detached.set()

    @property
    def attached(self) -> bool:
        return self.writer is not None

    @property
    def drained(self) -> bool:
        """Finished and fully written: nothing more will ever be written on it."""
        return self.finished and not self.pending


async def write_stream(
    stream: OutboundStream,
    responder: HttpResponder,
    session: StreamSession,
    *,
    resume_after: str | None = None,
    evictable: bool = False,
) -> None:
    """Write ``stream`` of ``session`` on ``responder`` (whose stream is started) until it ends
    or breaks.

    With ``resume_after`` (a ``Last-Event-ID``), the stream's stored events after that id are
    written first; they are read only once this connection has taken the stream over, so that
    nothing the previous writer stored meanwhile is missed. Otherwise, when the session
    ``primes``, an event with an id and empty data (and its ``retry_ms``, if set) comes first,
    so the client can resume even before the first message. The response is ended when the stream
    is drained, or when the server asked to close the connection (after a ``retry:`` line). A
    client that goes away ends the write quietly: what was not written stays pending or stored.
    With ``evictable``, the stream may be cut for a slot once it is open (its priming event
    written, when there is one): its client can take it up again (see ``allow_eviction``).
    """
    session_id, event_store = session.session_id, session.event_store
    interval = session.keep_alive_interval
    store_nowait = getattr(event_store, "store_nowait", None)
    if not callable(store_nowait):
        store_nowait = None
    pending = stream.pending
    scope = await stream.attach()
    opened = ended = False
    # One loop, in this function's frame (no coroutine of its own for the pump: an open GET
    # stream waits for most of its life, and every frame on its stack is kept meanwhile).
    try:
        while not ended:
            with scope:
                try:
                    if opened:
                        # Re-entered after a quiet interval (see below).
                        await responder.send_chunk(KEEP_ALIVE)
                    else:
                        opened = True
                        await _open(stream, responder, session, resume_after)
                        if evictable:
                            responder.allow_eviction()
                    while True:
                        if pending:
                            chunks: list[bytes] = []
                            # Store before writing, shielded: a message taken off ``pending``
                            # must reach the store even if the connection is cancelled
                            # meanwhile, or a resume would miss it.
                            with trio.CancelScope(shield=True):
                                await _take_pending(
                                    stream, session_id, event_store, store_nowait, chunks
                                )
                            await responder.send_chunk(*chunks)
                            continue
                        if stream.finished:
                            ended = True
                            await responder.end_stream()
                            break
                        if stream.close_requested:
                            ended = True
                            stream.close_requested = False
                            if stream.retry_ms is not None:
                                await responder.send_chunk(b"retry: %d\n\n" % stream.retry_ms)
                            await responder.end_stream()
                            break
                        # A quiet stream (a listen stream, a long call) gets a comment now and
                        # then: proxies keep it open, and a client that went away is noticed at
                        # the write. The writer's own scope carries the deadline (no scope per
                        # wait, which an idle stream would keep while it waits); left in place if
                        # the wait is cancelled, so that a deadline is told from a takeover.
                        scope.deadline = trio.current_time() + interval
                        await stream.wait()
                        scope.deadline = math.inf
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
            if not ended and not _quiet_too_long(stream, scope):
                break
            if not ended:
                # Quiet for the interval: the deadline ended the scope, which is spent. A new
                # scope, with a keep-alive comment first in it.
                scope = stream.renew_writer(scope)
    finally:
        stream.detach(scope)
    if scope.cancelled_caught:
        # Taken over by a newer connection (or the session ended): close this response if
        # the connection is still there.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await responder.end_stream()


async def drain_events(stream: OutboundStream, session: StreamSession) -> bytes:
    """Everything ``stream`` holds, as one SSE body, for a stream that is already finished.

    The events are what :func:`write_stream` would write (the priming event first when the
    session ``primes``), and they are stored first in the same way, so a client that loses the
    response resumes it with ``Last-Event-ID`` as it would resume a streamed one. Taking the
    messages is not interrupted by cancellation (they must reach the store once off
    ``pending``).
    """
    event_store = session.event_store
    store_nowait = getattr(event_store, "store_nowait", None)
    if event_store is None or callable(store_nowait):
        # The in-memory store answers at once: nothing can interrupt the drain.
        return await _drain(stream, session, store_nowait)
    with trio.CancelScope(shield=True):
        body = await _drain(stream, session, None)
    return body


async def _drain(
    stream: OutboundStream,
    session: StreamSession,
    store_nowait: Callable[[str, str, bytes], str] | None,
) -> bytes:
    session_id, event_store = session.session_id, session.event_store
    stream_id = stream.stream_id
    chunks: list[bytes] = []
    if session.primes and event_store is not None:
        if store_nowait is not None:
            event_id = store_nowait(session_id, stream_id, b"")
        else:
            event_id = await event_store.store(session_id, stream_id, b"")
        stream.resumable = True
        chunks.append(priming_event(event_id, session.retry_ms))
    await _take_pending(stream, session_id, event_store, store_nowait, chunks)
    return b"".join(chunks)


async def _take_pending(
    stream: OutboundStream,
    session_id: str,
    event_store: EventStore | None,
    store_nowait: Callable[[str, str, bytes], str] | None,
    chunks: list[bytes],
) -> None:
    """Move every message ``stream`` holds onto ``chunks`` as an SSE event, each stored first
    (``store_nowait``, when given, is the store's synchronous form)."""
    pending = stream.pending
    stream_id = stream.stream_id
    while pending:
        message = pending[0]
        event_id: str | None = None
        if event_store is not None:
            if store_nowait is not None:
                event_id = store_nowait(session_id, stream_id, message)
            else:
                event_id = await event_store.store(session_id, stream_id, message)
            stream.resumable = True
        del pending[0]
        chunks.extend(sse_event_parts(message, event_id))
    stream.took()


async def _open(
    stream: OutboundStream,
    responder: HttpResponder,
    session: StreamSession,
    resume_after: str | None,
) -> None:
    """What a stream's response starts with: the replay after ``resume_after``, or the priming
    event (see :func:`write_stream`)."""
    session_id, event_store = session.session_id, session.event_store
    if resume_after is not None and event_store is not None:
        replay = await event_store.replay_after(session_id, resume_after)
        if replay.events:
            await responder.send_chunk(b"".join(sse_event(m, e) for e, m in replay.events))
    elif session.primes and event_store is not None:
        with trio.CancelScope(shield=True):
            event_id = await event_store.store(session_id, stream.stream_id, b"")
        stream.resumable = True
        await responder.send_chunk(priming_event(event_id, session.retry_ms))


def _quiet_too_long(stream: OutboundStream, scope: trio.CancelScope) -> bool:
    """Whether ``scope`` ended because its deadline passed while the stream was quiet (not
    because a newer connection takes the stream over)."""
    return (
        scope.cancelled_caught
        and stream.writer is scope
        and not stream.taken_over
        and trio.current_time() >= scope.deadline
    )
