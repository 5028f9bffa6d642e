"""The transport of one Streamable HTTP session: POST bodies in, frames routed to SSE streams.

A Streamable HTTP session is many HTTP exchanges feeding one :class:`~mcptrio.runtime.session.
Session`. :class:`HttpSession` is that session's :class:`~mcptrio.runtime.transport.Transport`:

- **In.** Each POST hands its body to the session itself, in the POST's own task
  (:meth:`Session.deliver <mcptrio.runtime.session.Session.deliver>`): a session at its
  in-flight limit makes POSTs wait there, which is the design's backpressure. Nothing is queued
  for the session's reader, so :meth:`HttpSession.receive` only waits for the session's end.
- **Out.** Every frame the session sends is routed to exactly one stream (never broadcast), by
  what the session says it is (:class:`~mcptrio.runtime.transport.FrameKind`) and the request
  it relates to, never by its bytes:

  1. an answer goes to the stream of the POST that carried the request it answers;
  2. a request or notification related to a request that is still being answered goes on that
     request's stream;
  3. anything else goes to the standalone stream, which a GET carries. With no GET connected,
     those messages wait there (at most ``unrelated_buffer``, oldest dropped first).

  A response nobody waits for any more (its POST stream was abandoned before it could be
  resumed) is dropped with a debug log: the spec forbids responses on the standalone stream.

Handlers reach the HTTP-specific controls through their session's transport, which implements
:class:`HttpStreamControl`::

    transport = ctx.session.transport
    if isinstance(transport, HttpStreamControl):
        transport.close_sse_stream(ctx.request_id, retry_ms=500)   # SSE polling (2025-11-25)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, runtime_checkable

import trio

from ....protocol.base import RequestId
from ....runtime.parking import ParkingSpot
from ....runtime.session import Session
from ....runtime.transport import Frame, FrameKind, Outgoing, TransportAbilities
from ....stores.event_store import EventStore
from .security import Principal
from .sse_head_timer import SseHeadTimer
from .sse_stream import KEEP_ALIVE_INTERVAL, OutboundStream

__all__ = ["STANDALONE_STREAM_ID", "HttpSession", "HttpStreamControl", "SessionEnded"]

log = logging.getLogger("mcptrio.http")

#: The stream id of the standalone (GET) stream; request streams are numbered from 1.
STANDALONE_STREAM_ID = "0"

# How long the session's writer waits for room on a request's stream before it starts dropping
# that stream's oldest undelivered messages (its client went away and did not come back).
_STALL_TIMEOUT = 30.0
# Request streams a session keeps for resumption while no connection writes them.
_MAX_DETACHED_STREAMS = 64


class SessionEnded(Exception):
    """The session ended (deleted, expired or shut down) before the exchange could use it."""


@runtime_checkable
class HttpStreamControl(Protocol):
    """What a handler may ask of the Streamable HTTP transport it is answered over."""

    def close_sse_stream(self, request_id: RequestId, *, retry_ms: int | None = None) -> bool:
        """Close the connection carrying ``request_id``'s SSE stream, not the stream itself.

        The client reconnects (after ``retry_ms``, sent as ``retry:`` first) with a GET and
        ``Last-Event-ID`` and gets the rest. Returns ``False`` when the request has no stream
        that can be resumed (it is answered as JSON, or it already ended).
        """
        ...

    def close_standalone_stream(self, *, retry_ms: int | None = None) -> bool:
        """Close the connection carrying the standalone (GET) stream; ``False`` if none."""
        ...


@dataclass(slots=True, weakref_slot=True, eq=False, repr=False)
class HttpSession:
    """One Streamable HTTP session's transport. See the module docstring."""

    session_id: str
    _: KW_ONLY
    event_store: EventStore | None
    principal: Principal | None = None
    stream_buffer: int = 256
    #: Messages the standalone stream holds while no GET carries it (oldest dropped first).
    unrelated_buffer: int = 256
    retry_ms: int | None = None
    #: Seconds a streamed response may stay quiet before a ``: keep-alive`` comment.
    keep_alive_interval: float = KEEP_ALIVE_INTERVAL
    #: The MCP session this transport feeds; set by whoever creates both.
    session: Session | None = field(default=None, init=False)
    # A server holds thousands of these: what only some sessions ever need (the standalone
    # stream, the head timer) is made when first needed.
    # Where a task calling receive() waits for the end; made by the first such call (the
    # session's own reader never calls it: see abilities()).
    _reader: ParkingSpot | None = field(default=None, init=False)
    _standalone: OutboundStream | None = field(default=None, init=False)
    #: Live request streams by id (not yet drained); the standalone one is apart.
    streams: dict[str, OutboundStream] = field(default_factory=dict, init=False)
    _by_request: dict[RequestId, OutboundStream] = field(default_factory=dict, init=False)
    _next_stream_id: int = field(default=1, init=False)
    # Set by close(): the session is ending (its transport is not closed yet). No cancel
    # scope of its own around the session: Session.close cancels the session's nursery,
    # and a scope more would be kept by every idle session.
    _closing: bool = field(default=False, init=False)
    _ended: bool = field(default=False, init=False)
    last_activity: float = field(default_factory=trio.current_time, init=False)
    #: HTTP exchanges using the session right now (it is not idle while any is open).
    exchanges: int = field(default=0, init=False)
    _head_timer: SseHeadTimer | None = field(default=None, init=False)

    @property
    def standalone(self) -> OutboundStream:
        """The standalone stream (carried by a GET); made on first use."""
        stream = self._standalone
        if stream is None:
            stream = self._standalone = OutboundStream(
                STANDALONE_STREAM_ID, self.unrelated_buffer, drop_oldest=True
            )
            if self._ended:
                stream.finish()
        return stream

    def stream(self, stream_id: str) -> OutboundStream | None:
        """The live stream ``stream_id`` (the standalone one included), if any."""
        if stream_id == STANDALONE_STREAM_ID:
            return self.standalone
        return self.streams.get(stream_id)

    @property
    def revision(self) -> str | None:
        """The revision the session negotiated, once it has."""
        return None if self.session is None else self.session.revision

    @property
    def primes(self) -> bool:
        """Whether request streams open with a priming event (2025-11-25 SSE polling)."""
        features = None if self.session is None else self.session.features
        return self.event_store is not None and features is not None and features.sse_polling

    @property
    def is_ended(self) -> bool:
        # Closing counts: DELETE ends the session before its transport is closed.
        return self._ended or self._closing

    def close(self) -> None:
        """End the session (DELETE, expiry, shutdown); its tasks are cancelled."""
        self._closing = True
        if self.session is not None:
            self.session.close()

    # ---------------------------------------------------------------- Transport

    async def receive(self) -> Frame:
        """Wait for the end: POSTs hand their frames to the session themselves."""
        # A parking spot, not a trio.Event or a channel, which would cost hundreds of bytes
        # more; the session's own reader does not wait here (hands_in_every_frame).
        await trio.lowlevel.checkpoint_if_cancelled()
        while not self._ended:
            reader = self._reader
            if reader is None:
                reader = self._reader = ParkingSpot()
            await reader.park()
        raise trio.EndOfChannel

    def abilities(self) -> TransportAbilities:
        # Every frame comes in a POST's own task, and the session ends only through close()
        # (DELETE, expiry, shutdown): the session's reader need not wait in receive().
        return TransportAbilities(
            send_nowait=self.send_nowait,
            request_ended_unanswered=self.drop_unanswered,
            hands_in_every_frame=True,
        )

    def send_nowait(self, frame: Outgoing) -> bool:
        return self._route(frame) is None

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            while (full := self._route(frame)) is not None:
                with trio.move_on_after(_STALL_TIMEOUT) as waited:
                    await full.wait_for_room()
                if waited.cancelled_caught:
                    log.warning(
                        "SSE stream %s of session %s has had no reader for %.0f s: dropping its"
                        " oldest undelivered message",
                        full.stream_id,
                        self.session_id,
                        _STALL_TIMEOUT,
                    )
                    del full.pending[0]

    async def aclose(self) -> None:
        if self._ended:
            return
        self._ended = True
        if self._reader is not None:
            self._reader.wake()
        for stream in self.streams.values():
            stream.finish()
        if self._standalone is not None:
            self._standalone.finish()
        self._by_request.clear()

    def _route(self, frame: Outgoing) -> OutboundStream | None:
        """Queue ``frame`` on its stream, by what the session says it is; the stream that has
        no room for it, if any."""
        kind = frame.kind
        related = frame.related
        if kind is FrameKind.ANSWER:
            stream = None if related is None else self._by_request.get(related)
            if stream is None:
                log.debug("dropped an answer nobody waits for: %r", related)
                return None
            # An answer settles its stream: a POST carries one request, or one batch whose
            # answers go out together once every member has ended. Answers never wait for
            # room: there is at most one per POST.
            stream.push(frame.data)
            owed = stream.owed
            if owed:
                by_request = self._by_request
                for rid in owed:
                    if by_request.get(rid) is stream:
                        del by_request[rid]
                owed.clear()
            stream.finish()
            return None
        if kind is None:
            log.error("dropped a frame that says not what it is: %r", frame.data[:200])
            return None
        found = None if related is None else self._by_request.get(related)
        stream = self.standalone if found is None else found
        if not stream.drop_oldest and not stream.has_room():
            return stream
        stream.push_related(frame.data)
        return None

    # ---------------------------------------------------------------- exchanges

    def touch(self) -> None:
        self.last_activity = trio.current_time()
        if not self._by_request and self.exchanges == 0:
            # A dict keeps the table it grew to: an idle session need not keep one sized for
            # the requests it once had in flight (an empty literal allocates no table).
            self._by_request = {}

    def owns_any(self, request_ids: Iterable[RequestId]) -> bool:
        """Whether any of ``request_ids`` is still being answered on a stream of this session."""
        # A set operation, not any() over a generator: no generator object per POST.
        return not self._by_request.keys().isdisjoint(request_ids)

    def open_request_stream(self, request_ids: Sequence[RequestId]) -> OutboundStream:
        """A new stream for the answers to ``request_ids`` (and messages related to them)."""
        stream_id = self._next_stream_id
        self._next_stream_id = stream_id + 1
        stream = OutboundStream(str(stream_id), self.stream_buffer, owed=request_ids)
        by_request = self._by_request
        for rid in request_ids:
            by_request[rid] = stream
        self.streams[stream.stream_id] = stream
        return stream

    def release_stream(self, stream: OutboundStream) -> None:
        """The POST that opened ``stream`` is done with it.

        A drained stream is forgotten (a resume replays it from the event store). One that no
        client can resume (no event id was ever written) is abandoned: later messages related
        to its requests go to the standalone stream, and their answers are dropped. At most
        64 resumable streams are kept with no connection writing them; past that the oldest
        is abandoned too.
        """
        if stream.drained:
            self.streams.pop(stream.stream_id, None)
        elif not stream.resumable:
            self._abandon(stream)
        else:
            # Kept for a resume. A client that drops streams and never comes back must not make
            # the session hoard them: past the limit the oldest detached one is given up.
            detached = [s for s in self.streams.values() if not s.attached]
            if len(detached) > _MAX_DETACHED_STREAMS:
                log.warning(
                    "session %s holds %d streams no client reads: giving up the oldest",
                    self.session_id,
                    len(detached),
                )
                self._abandon(detached[0])

    def _abandon(self, stream: OutboundStream) -> None:
        self.streams.pop(stream.stream_id, None)
        owed = stream.owed
        if owed:
            for rid in owed:
                if self._by_request.get(rid) is stream:
                    del self._by_request[rid]
            owed.clear()
        stream.pending.clear()
        stream.finish()

    def head_timer(self, delay: float) -> SseHeadTimer | None:
        """The timer that fires ``on_activity`` of streams whose POST is still unanswered
        ``delay`` s after it armed them (made on first use, its task started by the first
        stream armed, and again after it has ended for want of streams; ``None`` once the
        session has ended). One per session: the first ``delay`` asked for is kept."""
        session = self.session
        if session is None or self.is_ended:
            return None
        timer = self._head_timer
        if timer is None:
            timer = self._head_timer = SseHeadTimer(delay, session.start_actor)
        return timer

    def drop_unanswered(self, rid: RequestId) -> None:
        """``rid`` ended without an answer (cancelled): its stream no longer waits for one."""
        stream = self._by_request.pop(rid, None)
        if stream is not None and stream.owed is not None:
            stream.owed.discard(rid)
            if not stream.owed:
                stream.finish()

    def answer_owed(self, rid: RequestId) -> bool:
        """Whether the session still owes an answer to incoming request ``rid``."""
        session = self.session
        return session is not None and session.owes_answer(rid)

    # ---------------------------------------------------------------- HttpStreamControl

    def close_sse_stream(self, request_id: RequestId, *, retry_ms: int | None = None) -> bool:
        stream = self._by_request.get(request_id)
        if stream is None or self.event_store is None:
            return False
        if not (stream.resumable or stream.pending or self.primes):
            # Nothing with an id could reach the client first, so it could not resume.
            return False
        stream.request_close(self.retry_ms if retry_ms is None else retry_ms)
        return True

    def close_standalone_stream(self, *, retry_ms: int | None = None) -> bool:
        stream = self._standalone
        if stream is None or not stream.attached:
            return False
        stream.request_close(self.retry_ms if retry_ms is None else retry_ms)
        return True
