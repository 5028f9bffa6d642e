"""The Session actor: one per connection, owning every task that connection needs.

::

    Session.run()                      the session's nursery (or, started dormant, an
                                       OnDemandNursery: see on_demand_nursery.py)
    ├── writer                         the outbox's buffer -> transport, coalescing bursts
    │                                  (started by the first frame that waits: outbox.py)
    ├── reader (the run() task)        transport -> deliver -> Connection.receive -> events
    ├── actors                         tasks the owner asked for (``actors=``, ``start_actor``)
    ├── request actor (one per incoming request in flight that may wait, in its own
    │                  CancelScope; it parks after answering and takes the next request)
    └── ...

The parts behind it are internal: ``lifecycle.py`` (an incoming request from its delivery to its
answer: slots, placement, cancel scopes, request actors), ``outbox.py`` (the buffer, the writer,
the direct path to the transport) and ``outgoing.py`` (outgoing requests waiting for their
answer).

Behaviour that users can rely on:

- **Cancellation in.** ``notifications/cancelled`` cancels the handler's scope; the handler is
  interrupted at its next checkpoint and no response is sent.
- **Cancellation out.** A caller of :meth:`Session.request` that leaves its cancel scope, or whose
  timeout expires, makes the session send ``notifications/cancelled`` for that request. A timeout
  raises :class:`~mcptrio.protocol.errors.RequestTimeout`. Progress for the request restarts
  the timeout, never past ``max_total_timeout``.
- **Backpressure.** At most ``max_in_flight`` incoming requests run at once; past that the reader
  stops reading the transport until one finishes. Outgoing frames wait in a bounded buffer
  (``send_buffer`` frames and ``send_buffer_bytes`` bytes); when it is full the reader stops
  reading too, until the peer reads.
- **Ending.** When the transport ends (or breaks), every in-flight handler is cancelled, every
  pending outgoing request fails at once with
  :class:`~mcptrio.protocol.errors.ConnectionClosed`, and ``run()`` returns with no task left.
- **Dormant.** A session whose transport hands in every frame (an HTTP session) may be started
  with :meth:`Session.start_dormant` instead of ``run``: it then holds no task while nothing
  runs in it, and its nursery is opened, in a task of the owner's nursery, by the next task it
  starts (a request actor, its writer, an actor); see :mod:`.on_demand_nursery`. Everything
  above holds the same.
- **Frames handed in.** A transport whose incoming frames each arrive in a task of their own
  (an HTTP POST) has that task hand its frame to :meth:`Session.deliver` instead of returning
  it from ``receive``: the frame is taken in that task, as the reader takes the others, and each
  request in it goes through the same lifecycle (:mod:`.lifecycle`). Past ``max_waiting``
  requests waiting for an in-flight slot, a request is refused with
  :class:`~mcptrio.runtime.lifecycle.SessionBusy` (the transport answers it as it can: 503).
- **Errors.** A handler that raises becomes an error response (its ``McpError`` code, else
  -32603) and a log line; the session carries on. Bad input is answered by the protocol layer
  and never ends the session.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import msgspec
import trio

from ..protocol import events as ev
from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.codec import CarriedResult, Envelope
from ..protocol.connection import Connection
from ..protocol.errors import ConnectionClosed, McpError, RequestTimeout
from ..protocol.revisions import Revision
from ..protocol.types import (
    CancelledNotification,
    Implementation,
    PingRequest,
    ProgressNotification,
)
from .lifecycle import IncomingRequests, RequestHandler, SessionBusy
from .on_demand_nursery import OnDemandNursery
from .outbox import Outbox
from .outgoing import PendingRequest, ProgressCallback
from .transport import Delivered, FrameKind, Outgoing, OversizedFrame, Transport

__all__ = [
    "NotificationHandler",
    "RequestHandler",
    "Session",
    "SessionActor",
    "SessionBusy",
    "SessionFactory",
    "SessionStatistics",
]

log = logging.getLogger("mcptrio.session")

ResultT = TypeVar("ResultT", bound=Result)
NotificationHandler = Callable[["Session", Notification], Awaitable[None] | None]
#: A task that lives as long as the session: started in its nursery when it runs.
SessionActor = Callable[["Session"], Awaitable[None]]


def _stop_waiting(_raise_cancel: object) -> trio.lowlevel.Abort:
    return trio.lowlevel.Abort.SUCCEEDED


class Session:
    """One MCP session over one transport. Start it with ``await nursery.start(session.run)``."""

    def __init__(
        self,
        connection: Connection,
        transport: Transport,
        *,
        handle_request: RequestHandler | None = None,
        handle_notification: NotificationHandler | None = None,
        max_in_flight: int = 256,
        send_buffer: int = 256,
        send_buffer_bytes: int = 8 << 20,
        actors: Sequence[SessionActor] = (),
        on_start: Callable[[Session], object] | None = None,
        on_end: Callable[[Session], object] | None = None,
        answers_at_once: Callable[[Request[Any]], bool] | None = None,
    ) -> None:
        self.connection = connection
        self.transport = transport
        self.max_in_flight = max_in_flight
        #: How many requests handed in by their own tasks may wait for an in-flight slot;
        #: ``None``: any number (see :class:`~.incoming.SessionBusy`). A transport whose waiting
        #: tasks may outlive their client's interest sets it.
        self.max_waiting: int | None = None
        self._actors = tuple(actors)
        # Called once the session runs (its actors may be started then) and once it has ended:
        # for an owner that starts tasks only when there is work for them, instead of keeping
        # an actor waiting for the session's whole life.
        self._on_start = on_start
        self._on_end = on_end
        self._handle_notification = handle_notification
        abilities = self._abilities = transport.abilities()
        self._outbox = Outbox(transport, abilities, send_buffer, send_buffer_bytes)
        # answers_at_once(request): whether its handler never waits, so it is answered where
        # it was decoded, with no actor (see lifecycle.py).
        self._incoming = IncomingRequests(
            self,
            self._outbox,
            handle_request,
            answers_at_once,
            abilities.request_ended_unanswered,
        )
        self._pending: dict[RequestId, PendingRequest] = {}
        self._progress: dict[int | str, PendingRequest] = {}
        # Where its tasks start once it runs: the nursery of run(), or an OnDemandNursery.
        self._nursery: trio.Nursery | OnDemandNursery | None = None
        self._closed = False
        # The events behind handshake_complete and closed, made when first asked for: most
        # sessions are never waited on, and a server holds thousands of them.
        self._handshake_done = False
        self._handshake_event: trio.Event | None = None
        self._ended = False
        self._closed_event: trio.Event | None = None
        # What a dormant session's owner awaits once it has ended (see start_dormant).
        self._then: Callable[[Session], Awaitable[None]] | None = None

    @property
    def handshake_complete(self) -> trio.Event:
        """Set once the handshake completes (the revision is negotiated)."""
        event = self._handshake_event
        if event is None:
            event = self._handshake_event = trio.Event()
            if self._handshake_done:
                event.set()
        return event

    @property
    def closed(self) -> trio.Event:
        """Set when the session has ended."""
        event = self._closed_event
        if event is None:
            event = self._closed_event = trio.Event()
            if self._ended:
                event.set()
        return event

    @property
    def revision(self) -> str | None:
        """The revision negotiated by the handshake, once it completed (``None`` before, and in
        the stateless era, where each request names its own)."""
        return self.connection.revision

    @property
    def features(self) -> Revision | None:
        """What the negotiated revision has (``None`` until it is negotiated)."""
        return self.connection.features

    def start_initialized(self, revision: str) -> None:
        """Take the handshake as done at ``revision`` before the session runs (a server
        answering one request of a client that already initialized elsewhere); ``ValueError``
        for a revision this side does not speak."""
        self.connection.start_initialized(revision)

    def resume_handshake(
        self, revision: str, peer_info: Implementation | None, peer_capabilities: Any
    ) -> None:
        """Take up a session whose handshake completed elsewhere (a worker that died), with
        what it negotiated: the peer's info and capabilities gate what is sent as they did
        there. ``ValueError`` for a revision this side does not speak."""
        self.connection.start_initialized(revision)
        self.connection.peer_info = peer_info
        self.connection.peer_capabilities = peer_capabilities
        self._handshake_done = True
        if self._handshake_event is not None:
            self._handshake_event.set()

    def owes_answer(self, rid: RequestId) -> bool:
        """Whether the peer's request ``rid`` is still waiting for its answer."""
        return self.connection.owes_answer(rid)

    @property
    def takes_one_without_waiting(self) -> bool:
        """Whether :meth:`deliver` of one message now returns without a checkpoint: an
        in-flight slot is free for it, and the outgoing buffer has room for what the protocol
        layer may answer itself (the only two waits in :meth:`deliver`)."""
        return self._incoming.has_free_slot and self._outbox.has_room

    @property
    def is_ended(self) -> bool:
        """Whether the session has ended (``closed`` is set), without making its event."""
        return self._ended

    # ------------------------------------------------------------------ actor

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the session until the transport ends or the surrounding scope is cancelled."""
        if self._nursery is not None:
            raise RuntimeError("this session is already running")
        try:
            async with trio.open_nursery() as nursery:
                self._start(nursery, trio.lowlevel.current_task())
                task_status.started()
                try:
                    if self._closed:
                        pass
                    elif self._abilities.hands_in_every_frame:
                        # Nothing to read, and the transport ends only through close(), which
                        # cancels this nursery: wait for that here, in this frame, with no
                        # frame of the transport's (nor trio.sleep_forever's) kept: an idle
                        # session waits so for its life, and each frame is memory it holds.
                        await trio.lowlevel.wait_task_rescheduled(_stop_waiting)
                    else:
                        await self._read()
                finally:
                    self._shut(cancel=True)
        finally:
            await self._end()

    def start_dormant(
        self, host: trio.Nursery, *, then: Callable[[Session], Awaitable[None]] | None = None
    ) -> None:
        """Start the session with no task of its own: its tasks run in a nursery opened in a
        task of ``host`` when the first of them starts, and let go of when none is left (see
        :mod:`.on_demand_nursery`). For a transport that hands in every frame
        (``TransportAbilities.hands_in_every_frame``), whose session has nothing to read.

        The session ends as a running one does: :meth:`close`, its transport breaking, or
        ``host`` being cancelled while a task of it runs there (an owner that stops ends its
        dormant sessions with :meth:`close`, which uses ``host`` to end them). Once it has
        ended (``closed`` set, the transport closed), ``then(session)`` is awaited, in a task of
        ``host`` (one callable for all of an owner's sessions: no closure kept by each).
        ``ValueError`` for a transport whose frames are read.
        """
        if self._nursery is not None:
            raise RuntimeError("this session is already running")
        if not self._abilities.hands_in_every_frame:
            raise ValueError(
                "this session's transport has frames to read: run it with"
                " nursery.start(session.run), not start_dormant"
            )
        self._then = then
        tasks = OnDemandNursery(host, self._end)
        self._start(tasks, None)
        if self._closed:
            tasks.cancel()

    @property
    def dormant(self) -> bool:
        """Whether the session was started dormant and holds no task now (none runs in it)."""
        tasks = self._nursery
        return isinstance(tasks, OnDemandNursery) and not tasks.awake

    def _start(
        self, tasks: trio.Nursery | OnDemandNursery, reader: trio.lowlevel.Task | None
    ) -> None:
        """The session runs: its tasks start in ``tasks``; ``reader`` is its reader's task."""
        self._nursery = tasks
        self._incoming.started(tasks, reader)
        if self._abilities.deliver_to is not None:
            self._abilities.deliver_to(self.deliver)
        self._outbox.attach(tasks, self._transport_broke)
        for actor in self._actors:
            tasks.start_soon(actor, self)
        if self._on_start is not None:
            self._on_start(self)

    async def _end(self) -> None:
        """The session's tasks are done: close the transport, and say it has ended."""
        self._shut(cancel=False)
        with trio.CancelScope(shield=True):
            await self.transport.aclose()
        self._ended = True
        if self._closed_event is not None:
            self._closed_event.set()
        if self._on_end is not None:
            self._on_end(self)
        if self._then is not None:
            await self._then(self)

    def _shut(self, *, cancel: bool) -> None:
        """Fail everything pending and (with ``cancel``) stop every task; idempotent."""
        if not self._closed:
            self._closed = True
            self._outbox.close()
            error = ConnectionClosed("Connection closed before the response arrived")
            for pending in self._pending.values():
                pending.fail(error)
            self._pending.clear()
            self._progress.clear()
            self._incoming.close()
        if cancel:
            tasks = self._nursery
            if isinstance(tasks, OnDemandNursery):
                tasks.cancel()
            elif tasks is not None:
                tasks.cancel_scope.cancel()

    def close(self) -> None:
        """End the session as if its transport had ended: its tasks are cancelled and its
        pending outgoing requests fail; ``run`` then closes the transport and returns. Closed
        before it runs, the session's ``run`` returns at once. Idempotent."""
        self._shut(cancel=True)

    def _transport_broke(self) -> None:
        log.info("transport closed while writing; ending the session")
        self._shut(cancel=True)

    async def _read(self) -> None:
        # No bound methods kept in locals across the wait: an idle session's reader waits for
        # its whole life (a Streamable HTTP session's reader only waits), and each local a
        # waiting frame holds is memory every idle session keeps.
        transport = self.transport
        while True:
            try:
                frame = await transport.receive()
            except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                return
            await self.deliver(frame)

    async def deliver(self, frame: Delivered) -> None:
        """Take one incoming ``frame`` in the calling task: the one way in for every transport.

        A stream transport's frames are delivered by the session's reader, from what
        :meth:`Transport.receive` returns; a transport whose frames each arrive in a task of
        their own (an HTTP POST) delivers them from that task. The frame is decoded and acted
        on here, in the order callers deliver frames; each request in it goes through its
        lifecycle (:mod:`.lifecycle`): answered at once here, or started in a request actor.
        Returns once every request in the frame is answered or started; waits meanwhile while
        the session is at its in-flight limit, or while its outgoing buffer is full (the
        backpressure the reader applies to its transport).

        ``frame`` may also be a frame's one message that the transport already decoded as an
        :class:`~mcptrio.protocol.codec.Envelope` (to route it): it is not decoded again.
        Raises :class:`ConnectionClosed` if the session is not running, and
        :class:`~.lifecycle.SessionBusy` for a request refused at its ``max_waiting``.
        """
        if self._nursery is None or self._closed:
            raise ConnectionClosed("The session is not running")
        connection = self.connection
        if isinstance(frame, bytes):
            events = connection.receive(frame)
        elif isinstance(frame, Envelope):
            events = connection.receive_message(frame)
        elif isinstance(frame, CarriedResult):
            events = connection.receive_carried(frame)
        elif isinstance(frame, OversizedFrame):
            events = connection.oversized(frame.limit, frame.head, frame.tail)
        else:
            self._fail_request(frame.request_id, frame.error)
            return
        for event in events:
            if type(event) is ev.RequestReceived:
                await self._incoming.take(event.id, event.request)
            elif not self._take(event):
                await self._take_waiting(event)

    def _fail_request(self, rid: RequestId, error: McpError) -> None:
        """The transport could not carry request ``rid``: its caller gets ``error``."""
        pending = self._pending.pop(rid, None)
        if pending is None:
            log.debug("the transport failed request %r, which no one waits for", rid)
            return
        self.connection.forget_request(rid)
        pending.fail(error)

    def _take(self, event: ev.Event) -> bool:
        """Act on ``event``, not a request, if that needs no wait; ``False`` if it needs
        :meth:`_take_waiting`."""
        if isinstance(event, ev.ResponseReceived):
            pending = self._pending.pop(event.id, None)
            if pending is not None:
                pending.succeed(event.result)
        elif isinstance(event, ev.Reply):
            return self._outbox.put_nowait(Outgoing(event.data, event.answers, FrameKind.ANSWER))
        elif isinstance(event, ev.NotificationReceived):
            return False
        elif isinstance(event, ev.ErrorReceived):
            pending = self._pending.pop(event.id, None)
            if pending is not None:
                pending.fail(event.error)
        elif isinstance(event, ev.CancelReceived):
            self._incoming.cancel(event.request_id, event.reason)
        elif isinstance(event, ev.HandshakeComplete):
            self._handshake_done = True
            if self._handshake_event is not None:
                self._handshake_event.set()
        elif isinstance(event, ev.UnmatchedResponse):
            log.warning("dropped a response to unknown request id %r", event.id)
        elif isinstance(event, ev.Ignored):
            log.info("ignored a message: %s", event.reason)
        return True

    async def _take_waiting(self, event: ev.Event) -> None:
        """Act on an event :meth:`_take` could not: the caller (the reader, or the task that
        handed the frame in) waits here, and reads nothing more meanwhile."""
        match event:
            case ev.Reply(data=data, answers=answers):
                with contextlib.suppress(ConnectionClosed):
                    await self._outbox.put(Outgoing(data, answers, FrameKind.ANSWER))
            case ev.NotificationReceived(notification=notification):
                await self._notification(notification)

    async def _notification(self, notification: Notification) -> None:
        if isinstance(notification, ProgressNotification):
            pending = self._progress.get(notification.progress_token)
            if pending is not None:
                pending.progressed()
                if pending.on_progress is not None:
                    total = (
                        notification.total if isinstance(notification.total, float | int) else None
                    )
                    message = (
                        notification.message if isinstance(notification.message, str) else None
                    )
                    outcome = pending.on_progress(notification.progress, total, message)
                    if inspect.isawaitable(outcome):
                        await outcome
                return
        if self._handle_notification is not None:
            try:
                outcome2 = self._handle_notification(self, notification)
                if inspect.isawaitable(outcome2):
                    await outcome2
            except Exception:
                log.exception("notification handler for %s failed", notification.METHOD)

    # ----------------------------------------------------------- sending

    async def notify(self, notification: Notification, *, related: RequestId | None = None) -> None:
        """Send a notification (raises ``CapabilityNotNegotiated`` if it is not allowed).

        Waits while the outgoing buffer is full; :class:`ConnectionClosed` once the session has
        ended.
        """
        data = self.connection.send_notification(notification, related=related)
        await self._outbox.put(Outgoing(data, related, FrameKind.NOTIFICATION))

    async def request(
        self,
        request: Request[ResultT],
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        on_id: Callable[[RequestId], object] | None = None,
    ) -> ResultT:
        """Send ``request`` and wait for its result.

        ``timeout`` bounds sending and waiting, and restarts on each progress notification for
        this request, up to ``max_total_timeout`` overall. On timeout the peer is sent
        ``notifications/cancelled`` and :class:`RequestTimeout` is raised. If the caller's own
        scope is cancelled, the peer is sent ``notifications/cancelled`` and ``Cancelled``
        propagates. Errors from the peer are raised as the matching :class:`McpError`.

        ``on_id`` is called with the request's id before it is sent, for a caller that must
        recognise what the peer relates to it before the answer (a listen stream's
        notifications name the listen request's id).
        """
        if self._closed:
            raise ConnectionClosed("The session has ended")
        pending = PendingRequest(timeout, max_total_timeout, on_progress)
        if on_progress is not None:
            rid, data = self.connection.send_request(request, with_progress_token=True)
            self._progress[rid] = pending
        else:
            rid, data = self.connection.send_request(request)
        self._pending[rid] = pending
        if on_id is not None:
            on_id(rid)
        try:
            result: ResultT = await pending.send_and_wait(
                self._outbox, Outgoing(data, related, FrameKind.REQUEST)
            )
        except trio.Cancelled:
            # The spec forbids cancelling initialize; every other request is called off.
            reason = None if request.METHOD == "initialize" else "The request was cancelled"
            self._abandon(rid, reason, related)
            raise
        except BaseException:
            self._abandon(rid, None, related)
            raise
        finally:
            if on_progress is not None:
                self._progress.pop(rid, None)
        if pending.scope is not None and pending.timed_out:
            self._abandon(rid, "The request timed out", related)
            raise RequestTimeout(f"{request.METHOD} (id {rid}) got no response in time")
        return result

    def _abandon(self, rid: RequestId, reason: str | None, related: RequestId | None) -> None:
        """Stop waiting for ``rid``; with a ``reason``, tell the peer to stop working on it.

        The notice is sent only if the outgoing buffer has room: it is advice the peer may
        ignore, and a caller leaving its scope must not wait for a peer that is not reading.
        """
        if self._pending.pop(rid, None) is None:
            return
        self.connection.forget_request(rid)
        if reason is not None and not self._closed:
            cancel = CancelledNotification(request_id=rid, reason=reason)
            try:
                data = self.connection.send_notification(cancel)
            except McpError:
                return
            if not self._outbox.put_nowait(Outgoing(data, related, FrameKind.NOTIFICATION)):
                log.debug("outgoing buffer full: not telling the peer %r was cancelled", rid)

    def cancel_incoming(self, rid: RequestId, reason: str) -> None:
        """Cancel the peer's request ``rid`` as its ``notifications/cancelled`` would (nothing
        is sent for it), for a transport that learns of the cancellation otherwise: a
        stateless-era HTTP client closing the response stream."""
        self._incoming.cancel(rid, reason)

    def start_actor(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        """Start ``fn(*args)`` in the session's nursery: it is cancelled when the session ends.

        Raises :class:`ConnectionClosed` when the session is not running.
        """
        tasks = self._nursery
        if tasks is None or self._closed:
            raise ConnectionClosed("The session is not running")
        tasks.start_soon(fn, *args)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Send ``ping`` and wait for the answer."""
        await self.request(PingRequest(), timeout=timeout)

    # ----------------------------------------------------------- introspection

    def statistics(self) -> SessionStatistics:
        """A snapshot of the session's load."""
        return SessionStatistics(
            in_flight_incoming=self._incoming.running,
            pending_outgoing=len(self._pending),
            queued_outgoing=self._outbox.buffered,
            queued_outgoing_bytes=self._outbox.buffered_bytes,
            parked_request_actors=self._incoming.parked_actors,
        )


class SessionStatistics(msgspec.Struct, frozen=True):
    """A snapshot of a session's load."""

    #: Incoming requests running now (at most ``max_in_flight``).
    in_flight_incoming: int
    #: Outgoing requests waiting for their answer.
    pending_outgoing: int
    #: Frames waiting in the outgoing buffer for the writer.
    queued_outgoing: int
    #: Request actors parked, waiting for the next request (reused, not spawned).
    parked_request_actors: int
    #: Bytes of the frames in the outgoing buffer or being written by the writer.
    queued_outgoing_bytes: int = 0


class SessionFactory(Protocol):
    """Makes the session of each connection a server accepts: a :class:`mcptrio.Server` is one.

    The servers that open sessions themselves (the WebSocket servers, each HTTP endpoint) take
    one, so that they know nothing of the server behind it.
    """

    def session(self, transport: Transport) -> Session: ...
