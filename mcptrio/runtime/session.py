"""The Session actor: one per connection, owning every task that connection needs.

::

    Session.run()                      the session's nursery
    ├── writer                         Outgoing frames -> transport, coalescing bursts
    ├── reader (the run() task)        transport -> Connection.receive -> events
    ├── actors                         tasks the owner asked for (``actors=``, ``start_actor``)
    ├── request actor (one per incoming request in flight, in its own CancelScope; an actor
    │                  parks after answering and takes the next request: request_actors.py)
    └── ...

Behaviour that users can rely on:

- **Cancellation in.** ``notifications/cancelled`` cancels the handler's scope; the handler is
  interrupted at its next checkpoint and no response is sent.
- **Cancellation out.** A caller of :meth:`Session.request` that leaves its cancel scope, or whose
  timeout expires, makes the session send ``notifications/cancelled`` for that request. A timeout
  raises :class:`~mcptrio.protocol.errors.RequestTimeout`. Progress for the request restarts
  the timeout, never past ``max_total_timeout``.
- **Backpressure.** At most ``max_in_flight`` incoming requests run at once; past that the reader
  stops reading the transport until one finishes. Outgoing frames wait in a bounded buffer.
- **Ending.** When the transport ends (or breaks), every in-flight handler is cancelled, every
  pending outgoing request fails at once with
  :class:`~mcptrio.protocol.errors.ConnectionClosed`, and ``run()`` returns with no task left.
- **Answering in the caller's task.** A transport whose incoming messages each arrive in a task
  of their own (an HTTP POST) may hand them to :meth:`Session.receive_inline` instead of its
  ``receive``: the message is taken in that task, and a single request in it is answered there
  too, with no task spawned, and with the same cancellation rules as a request actor.
- **Errors.** A handler that raises becomes an error response (its ``McpError`` code, else
  -32603) and a log line; the session carries on. Bad input is answered by the protocol layer
  and never ends the session.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

import msgspec
import trio

from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.connection import Connection
from ..protocol.errors import ConnectionClosed, InternalError, LocalError, McpError, RequestTimeout
from ..protocol.events import (
    CancelReceived,
    ErrorReceived,
    HandshakeComplete,
    Ignored,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)
from ..protocol.types import CancelledNotification, PingRequest, ProgressNotification
from ..transports.base import Outgoing, OversizedFrame, Transport
from .context import RequestContext
from .in_context import InContext
from .outgoing import PendingRequest, ProgressCallback
from .request_actors import RequestActors

__all__ = ["NotificationHandler", "RequestHandler", "Session", "SessionActor"]

log = logging.getLogger("mcptrio.session")

ResultT = TypeVar("ResultT", bound=Result)
RequestHandler = Callable[[RequestContext, Request[Any]], Awaitable[Result]]
NotificationHandler = Callable[["Session", Notification], Awaitable[None] | None]
#: A task that lives as long as the session: started in its nursery when it runs.
SessionActor = Callable[["Session"], Awaitable[None]]

_WRITE_COALESCE = 64


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
        actors: Sequence[SessionActor] = (),
    ) -> None:
        self.connection = connection
        self._actors = tuple(actors)
        self.transport = transport
        self._handle_request = handle_request
        self._handle_notification = handle_notification
        self.max_in_flight = max_in_flight
        self._in_flight_slots = trio.Semaphore(max_in_flight)
        self._out_send, self._out_receive = trio.open_memory_channel[Outgoing](send_buffer)
        self._handlers: dict[RequestId, trio.CancelScope] = {}
        # Scopes of the handlers running in a caller's task (receive_inline): outside the
        # session's nursery, so ending the session cancels them one by one.
        self._inline_scopes: set[trio.CancelScope] = set()
        # Requests the peer cancelled: they end with no answer. Any other cancellation of a
        # handler's scope (the handler's own) still answers, so the peer is never left waiting.
        self._peer_cancelled: set[RequestId] = set()
        self._pending: dict[RequestId, PendingRequest] = {}
        self._progress: dict[int | str, PendingRequest] = {}
        self._nursery: trio.Nursery | None = None
        self._actors_of_requests = RequestActors(self, self, max_in_flight)
        self._closed = False
        # Frames handed to the writer and not yet written; the fast path below may only skip
        # the writer when this is zero, or it would overtake them.
        self._queued = 0
        self._send_nowait: Callable[[Outgoing], bool] | None = getattr(
            transport, "send_nowait", None
        )
        #: Set once the handshake completes (the revision is negotiated).
        self.handshake_complete = trio.Event()
        #: Set when the session has ended.
        self.closed = trio.Event()

    # ------------------------------------------------------------------ actor

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the session until the transport ends or the surrounding scope is cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._writer)
                for actor in self._actors:
                    nursery.start_soon(actor, self)
                task_status.started()
                try:
                    await self._reader(nursery)
                finally:
                    self._shut(nursery)
        finally:
            self._shut(None)
            with trio.CancelScope(shield=True):
                await self.transport.aclose()
            self.closed.set()

    def _shut(self, nursery: trio.Nursery | None) -> None:
        """Fail everything pending and stop every task; idempotent."""
        if not self._closed:
            self._closed = True
            self._out_send.close()
            error = ConnectionClosed("Connection closed before the response arrived")
            for pending in self._pending.values():
                pending.fail(error)
            self._pending.clear()
            self._progress.clear()
            for scope in self._inline_scopes:
                scope.cancel()
        if nursery is not None:
            nursery.cancel_scope.cancel()

    async def _reader(self, nursery: trio.Nursery) -> None:
        receive = self.transport.receive
        connection = self.connection
        while True:
            try:
                frame = await receive()
            except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if isinstance(frame, OversizedFrame):
                events = connection.oversized(frame.limit)
            else:
                events = connection.receive(frame)
            for event in events:
                # The two events of every call are taken here, without a coroutine each.
                kind = type(event)
                if kind is ResponseReceived:
                    response = cast(ResponseReceived, event)
                    pending = self._pending.pop(response.id, None)
                    if pending is not None:
                        pending.succeed(response.result)
                elif kind is not RequestReceived or not self._start_nowait(event, nursery):
                    await self._dispatch(event, nursery)

    def _start_nowait(self, event: Any, nursery: trio.Nursery) -> bool:
        """Start the request of ``event`` if an in-flight slot is free, else return ``False``."""
        try:
            self._in_flight_slots.acquire_nowait()
        except trio.WouldBlock:
            return False
        rid = event.id
        self._handlers[rid] = self._actors_of_requests.start(nursery, rid, event.request)
        return True

    async def receive_inline(self, frame: bytes, *, expect_request: bool) -> None:
        """Take ``frame`` in the caller's task, as the reader would; answer its request here.

        For transports whose messages each arrive in a task of their own (an HTTP POST): the
        frame is decoded and dispatched in the caller's task, so it is handled in the order
        the caller delivers it, with no hand-off to the reader. When the frame holds exactly
        one request (``expect_request`` says the caller saw one, so that the in-flight slot is
        taken before anything is consumed), its handler runs here as well, under its own cancel
        scope and shielded from the caller's: like a request actor, it is stopped only by the
        peer's ``notifications/cancelled`` or by the session ending, never by the caller going
        away. Returns once the answer is handed to the transport. Raises
        :class:`ConnectionClosed` if the session is not running.
        """
        nursery = self._nursery
        if nursery is None or self._closed:
            raise ConnectionClosed("The session is not running")
        events = self.connection.receive(frame)
        inline: RequestReceived | None = None
        if expect_request:
            if len(events) == 1 and type(events[0]) is RequestReceived:
                inline = events[0]
                events = []
            else:
                requests = [event for event in events if type(event) is RequestReceived]
                if len(requests) == 1:
                    inline = requests[0]
                    events = [event for event in events if event is not inline]
        for event in events:
            await self._dispatch(event, nursery)
        if inline is not None:
            rid = inline.id
            # Registered before the wait for a slot, so that the peer's cancellation (or the
            # session's end) reaches it while it waits; shielded from the caller's scope.
            scope = self._handlers[rid] = trio.CancelScope(shield=True)
            self._inline_scopes.add(scope)
            if self._closed:
                scope.cancel()
            try:
                # In a copy of the caller's context, as a request actor would be: what the
                # handler sets there does not outlive it in the caller's task (a keep-alive
                # connection serves other requests, of other sessions, in that task next).
                await InContext(
                    self._run_request(rid, inline.request, scope), contextvars.copy_context()
                )
            finally:
                self._inline_scopes.discard(scope)

    async def _dispatch(self, event: object, nursery: trio.Nursery) -> None:
        match event:
            case RequestReceived(id=rid, request=request):
                # The request's scope is registered before its actor runs, so a cancellation
                # that arrives meanwhile (later in the same batch, or in a POST answered
                # inline) still lands.
                try:
                    self._in_flight_slots.acquire_nowait()
                except trio.WouldBlock:
                    # Registered before the wait for a slot too; a new actor takes this scope.
                    waiting = self._handlers[rid] = trio.CancelScope()
                    try:
                        await self._in_flight_slots.acquire()
                    except BaseException:
                        del self._handlers[rid]
                        raise
                    self._actors_of_requests.start(nursery, rid, request, waiting)
                else:
                    self._handlers[rid] = self._actors_of_requests.start(nursery, rid, request)
            case ResponseReceived(id=rid, result=result):
                pending = self._pending.pop(rid, None)
                if pending is not None:
                    pending.succeed(result)
            case ErrorReceived(id=rid, error=error):
                pending = self._pending.pop(rid, None)
                if pending is not None:
                    pending.fail(error)
            case Reply(data=data):
                self._enqueue(Outgoing(data))
            case CancelReceived(request_id=rid, reason=reason):
                scope = self._handlers.get(rid)
                if scope is not None:
                    log.debug("peer cancelled request %r: %s", rid, reason)
                    self._peer_cancelled.add(rid)
                    scope.cancel()
            case NotificationReceived(notification=notification):
                await self._notification(notification)
            case HandshakeComplete():
                self.handshake_complete.set()
            case UnmatchedResponse(id=rid):
                log.warning("dropped a response to unknown request id %r", rid)
            case Ignored(reason=reason):
                log.info("ignored a message: %s", reason)

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

    async def _run_request(
        self, rid: RequestId, request: Request[Any], scope: trio.CancelScope
    ) -> None:
        """Answer a request in the caller's task (``receive_inline``), as its actor would."""
        data: bytes | None = None
        holding = False
        try:
            with scope:
                # Inside the handler's scope: only the peer's cancellation or the session's
                # end interrupts the wait for a slot (the request is taken already).
                try:
                    self._in_flight_slots.acquire_nowait()
                except trio.WouldBlock:
                    await self._in_flight_slots.acquire()
                holding = True
                data = await self.answer(RequestContext(self, rid, request, scope))
            if scope.cancelled_caught:
                data = self.answer_cut(rid)
        finally:
            self.request_done(rid, holding=holding)
        if data is not None:
            await self.send_answer(data, rid)

    # The request actors' side (see request_actors.py).

    async def answer(self, rctx: RequestContext) -> bytes | None:
        """Run the handler of ``rctx``'s request; its answer (``None`` while its batch is open).

        A handler's error becomes an error answer; a cancellation passes through.
        """
        connection = self.connection
        rid = rctx.request_id
        try:
            if self._handle_request is None:
                raise InternalError("This session does not handle requests")
            result = await self._handle_request(rctx, rctx.request)
            return connection.respond(rid, result)
        except LocalError as exc:
            return connection.respond_error(rid, InternalError(exc.message))
        except McpError as exc:
            return connection.respond_error(rid, exc)
        except Exception as exc:
            log.exception("handler for %s (id %r) failed", rctx.request.METHOD, rid)
            return connection.respond_error(rid, InternalError(f"{type(exc).__name__}: {exc}"))

    def answer_cut(self, rid: RequestId) -> bytes | None:
        """The answer to a request whose scope caught a cancellation: none if the peer asked."""
        if rid in self._peer_cancelled:
            return self.connection.drop_request(rid)
        return self.connection.respond_error(
            rid, InternalError("The server cancelled this request")
        )

    def request_done(self, rid: RequestId, *, holding: bool = True) -> bool:
        """Forget a finished request and free its in-flight slot; whether the peer cancelled it
        (the only way its scope could have been cancelled, unless the handler was lent it)."""
        del self._handlers[rid]
        if holding:
            self._in_flight_slots.release()
        if rid in self._peer_cancelled:
            self._peer_cancelled.remove(rid)
            return True
        return False

    def send_answer_nowait(self, data: bytes, rid: RequestId) -> bool:
        """Hand an answer straight to the transport if nothing is queued ahead of it."""
        return self._direct(Outgoing(data, rid))

    async def send_answer(self, data: bytes, rid: RequestId) -> None:
        try:
            await self._send(Outgoing(data, rid))
        except ConnectionClosed:
            log.debug("session ended before the answer to %r could be sent", rid)

    async def _writer(self) -> None:
        send = self.transport.send
        receive_nowait = self._out_receive.receive_nowait
        try:
            async for first in self._out_receive:
                batch = [first]
                while len(batch) < _WRITE_COALESCE:
                    try:
                        batch.append(receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                await send(batch)
                self._queued -= len(batch)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.info("transport closed while writing; ending the session")
            if self._nursery is not None:
                self._shut(self._nursery)

    # ----------------------------------------------------------- sending

    def _enqueue(self, outgoing: Outgoing) -> None:
        """Queue a frame without waiting; fall back to a task when the buffer is full."""
        if self._direct(outgoing):
            return
        try:
            self._out_send.send_nowait(outgoing)
            self._queued += 1
        except trio.WouldBlock:
            if self._nursery is not None:
                self._nursery.start_soon(self._send, outgoing)
        except trio.ClosedResourceError:
            pass

    def _direct(self, outgoing: Outgoing) -> bool:
        """Hand ``outgoing`` straight to the transport when nothing is queued ahead of it."""
        send_nowait = self._send_nowait
        return (
            send_nowait is not None
            and self._queued == 0
            and not self._closed
            and send_nowait(outgoing)
        )

    async def _send(self, outgoing: Outgoing) -> None:
        if self._direct(outgoing):
            return
        try:
            self._queued += 1
            await self._out_send.send(outgoing)
        except trio.ClosedResourceError:
            self._queued -= 1
            raise ConnectionClosed("The session has ended") from None
        except BaseException:
            self._queued -= 1
            raise

    async def notify(self, notification: Notification, *, related: RequestId | None = None) -> None:
        """Send a notification (raises ``CapabilityNotNegotiated`` if it is not allowed)."""
        data = self.connection.send_notification(notification)
        await self._send(Outgoing(data, related))

    async def request(
        self,
        request: Request[ResultT],
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
    ) -> ResultT:
        """Send ``request`` and wait for its result.

        ``timeout`` bounds the wait and restarts on each progress notification for this request,
        up to ``max_total_timeout`` overall. On timeout the peer is sent
        ``notifications/cancelled`` and :class:`RequestTimeout` is raised. If the caller's own
        scope is cancelled, the peer is sent ``notifications/cancelled`` and ``Cancelled``
        propagates. Errors from the peer are raised as the matching :class:`McpError`.
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
        try:
            outgoing = Outgoing(data, related)
            if not self._direct(outgoing):
                await self._send(outgoing)
            result: ResultT = await pending.wait()
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
        """Stop waiting for ``rid``; with a ``reason``, tell the peer to stop working on it."""
        if self._pending.pop(rid, None) is None:
            return
        self.connection.forget_request(rid)
        if reason is not None and not self._closed:
            cancel = CancelledNotification(request_id=rid, reason=reason)
            try:
                data = self.connection.send_notification(cancel)
            except McpError:
                return
            self._enqueue(Outgoing(data, related))

    def start_actor(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        """Start ``fn(*args)`` in the session's nursery: it is cancelled when the session ends.

        Raises :class:`ConnectionClosed` when the session is not running.
        """
        if self._nursery is None or self._closed:
            raise ConnectionClosed("The session is not running")
        self._nursery.start_soon(fn, *args)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Send ``ping`` and wait for the answer."""
        await self.request(PingRequest(), timeout=timeout)

    # ----------------------------------------------------------- introspection

    def statistics(self) -> SessionStatistics:
        return SessionStatistics(
            in_flight_incoming=self.max_in_flight - self._in_flight_slots.value,
            pending_outgoing=len(self._pending),
            queued_outgoing=self._out_send.statistics().current_buffer_used,
        )


class SessionStatistics(msgspec.Struct, frozen=True):
    """A snapshot of a session's load."""

    in_flight_incoming: int
    pending_outgoing: int
    queued_outgoing: int
