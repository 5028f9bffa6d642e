"""The lifecycle of an incoming request, from the moment its session decodes it to its answer.

Every transport hands its frames to :meth:`Session.deliver
<mcptrio.runtime.session.Session.deliver>` (a stream transport's reader does, for each frame it
receives; an HTTP POST does, in its own task). The session decodes the frame and gives each
request in it to :meth:`IncomingRequests.take`, the one way in. From there:

1. **A slot.** At most ``max_in_flight`` requests of a session run at once, each from the moment
   it is taken until its answer is handed to the outbox (an answer waiting for room in a full
   buffer still counts). ``take`` waits for a free slot, so the task delivering the frame (the
   reader, or the POST) waits with it, and a flood waits in the peer's pipe or socket. Past
   ``max_waiting`` requests already waiting, a request is refused with :class:`SessionBusy`
   (the HTTP transport answers 503). A request's cancel scope is registered before the wait, so
   the peer's ``notifications/cancelled`` reaches it there: it then ends unanswered, unrun.
2. **A placement, by one rule.** A request whose whole path the server judged, at registration,
   never to suspend (``answers_at_once(request)``: see :mod:`mcptrio.server.eager`) is answered
   **at once**, in the task that delivered it, when the outbox has room for its answer. Every
   other request runs in a **request actor**: a task in the session's nursery, under a cancel
   scope of its own. Nothing else decides where a request runs.
3. **An answer, or none.** The handler's result is answered; an ``McpError`` it raises is
   answered with its code; any other exception with -32603 and a log line. A request the peer
   cancelled is not answered at all, and the transport is told it ended unanswered
   (:attr:`~.transport.TransportAbilities.request_ended_unanswered`), so a stream waiting for
   its answer can end. One whose scope was cancelled otherwise (by the handler itself) gets an
   error, so the peer is never left waiting.
4. **The end.** When the session ends, every actor is cancelled with its nursery, and nothing
   more is taken. A handler's ``BaseException`` that is not a cancellation (``KeyboardInterrupt``,
   ``SystemExit``) is no answer: it propagates from wherever the handler ran and ends the
   session, its slot given back first.

What a handler may rely on, wherever it runs, is in ``docs/explanation/request-lifecycle.md``:
the same contract holds for both placements, and ``tests/runtime/test_request_lifecycle.py``
checks each line of it on each. In short: a request answered at once cannot be interrupted (it
has no checkpoint at which a cancellation could land), so it never needs a scope; and every
handler runs in a fresh copy of the context of the task that delivered its request (the
session's own, for the reader; an HTTP POST's, where the endpoint put the request's principal).

**The reader's request actors are reused.** Spawning a task and entering a scope for every
request would cost more than the rest of a small request's path. An actor that has answered one
of the reader's requests parks (on a :class:`~.parking.ParkingSpot`), still inside its scope,
and the reader hands it the next one directly. (A request handed in by another task gets an
actor of its own, in a copy of that task's context, which ends after answering.) What makes a
reused actor indistinguishable from a fresh one:

- **One request per actor at a time**, and at most ``max_in_flight`` actors kept parked.
- **Its own scope, unless it was touched.** The scope is kept for the next request only if
  nothing could still reach it: not cancelled, and never lent to the handler
  (``RequestContext.cancel_scope``). Otherwise the actor answers outside it and opens a new one,
  so a stale reference can cancel nothing but a scope no longer in use.
- **Its own context.** After every request, a :class:`~.contexts.ContextSnapshot` taken when
  the actor started tells whether the handler rebound a context variable; if so, the actor ends
  after answering, so the next request never sees it.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import trio

from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.codec import CarriedResult
from ..protocol.errors import ConnectionClosed, InternalError, LocalError, McpError
from ..protocol.types import ProgressNotification
from .contexts import ContextSnapshot
from .on_demand_nursery import TaskStarter
from .outbox import Outbox
from .parking import ParkingSpot
from .transport import FrameKind, Outgoing

if TYPE_CHECKING:
    from .outgoing import RequestOptions
    from .session import Session

__all__ = ["IncomingRequests", "RequestContext", "RequestHandler", "SessionBusy"]

log = logging.getLogger("mcptrio.session")

ResultT = TypeVar("ResultT", bound=Result)


class SessionBusy(Exception):
    """A request found ``max_in_flight`` requests running and the session's ``max_waiting``
    waiting for a slot: it was not taken (the HTTP transport answers 503).

    Each waiting request holds its delivering task, which may hold nothing of its client's (an
    HTTP POST whose client left gives its connection slot back), so without this bound a client
    could leave any number of them behind.
    """


class RequestContext:
    """What a handler knows about, and can do for, the request it is answering."""

    __slots__ = ("_cancel_scope", "request", "request_id", "scope_lent", "session")

    def __init__(
        self,
        session: Session,
        request_id: RequestId,
        request: Request[Any],
        cancel_scope: trio.CancelScope | None = None,
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.request = request
        self._cancel_scope = cancel_scope
        #: Whether the handler asked for :attr:`cancel_scope` (it may still hold it).
        self.scope_lent = False

    @property
    def cancel_scope(self) -> trio.CancelScope:
        """The scope ``notifications/cancelled`` and the session's end cancel.

        A request answered at once, in the task that decoded it (its handler never waits: see
        :mod:`mcptrio.server.eager`), runs under none, since nothing could reach it there; it
        is given a scope of its own, in no one else's hands, if it asks.
        """
        self.scope_lent = True
        scope = self._cancel_scope
        if scope is None:
            scope = self._cancel_scope = trio.CancelScope()
        return scope

    @property
    def progress_token(self) -> int | str | None:
        """The token the caller asked progress for, or ``None`` if it did not."""
        return self.request.progress_token()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` for this request; a no-op if the caller asked none.

        ``message`` is sent only where the negotiated revision has it (the connection fits it).
        """
        token = self.progress_token
        if token is None:
            return
        notification = ProgressNotification(
            progress_token=token,
            progress=progress,
            total=total,
            message=message,
        )
        await self.session.notify(notification, related=self.request_id)

    async def notify(self, notification: Notification) -> None:
        """Send a notification related to this request."""
        await self.session.notify(notification, related=self.request_id)

    async def send_request(
        self, request: Request[ResultT], **options: Unpack[RequestOptions]
    ) -> ResultT:
        """Send a request to the peer as part of handling this one (sampling, elicitation...)."""
        return await self.session.request(request, **options, related=self.request_id)


RequestHandler = Callable[[RequestContext, Request[Any]], Awaitable[Result]]


class IncomingRequests:
    """A session's incoming requests; see the module docstring."""

    __slots__ = (
        "_actors",
        "_at_once",
        "_carry",
        "_closed",
        "_free",
        "_handle",
        "_peer_cancelled",
        "_reader",
        "_scopes",
        "_slot_waiters",
        "_unanswered",
        "_waiting",
        "outbox",
        "session",
        "tasks",
    )

    def __init__(
        self,
        session: Session,
        outbox: Outbox,
        handle_request: RequestHandler | None,
        answers_at_once: Callable[[Request[Any]], bool] | None = None,
        request_ended_unanswered: Callable[[RequestId], None] | None = None,
    ) -> None:
        self.session = session
        self.outbox = outbox
        self._handle = _unhandled if handle_request is None else handle_request
        self._at_once = answers_at_once
        self._unanswered = request_ended_unanswered
        # Whether answers may go to the transport unencoded: the outbox's transport is fixed.
        self._carry = outbox.carries_results
        # The in-flight slots: a count of free ones, and the tasks waiting for one, to which a
        # freed slot passes directly (first come, first served). The parking lot and the set
        # below are made when first needed: a server holds thousands of idle sessions.
        self._free = session.max_in_flight
        self._waiting = 0
        self._slot_waiters: trio.lowlevel.ParkingLot | None = None
        self._scopes: dict[RequestId, trio.CancelScope] = {}
        # Requests the peer cancelled: they end with no answer.
        self._peer_cancelled: set[RequestId] | None = None
        self._actors = _RequestActors(self, session.max_in_flight)
        #: Where the session's tasks run (its nursery), actors among them; set when it starts.
        self.tasks: TaskStarter | None = None
        # The session's reader: the one delivering task whose context is the session's own.
        self._reader: trio.lowlevel.Task | None = None
        self._closed = False

    def started(self, tasks: TaskStarter, reader: trio.lowlevel.Task | None) -> None:
        """The session runs, its tasks in ``tasks``, its reader in ``reader`` (``None``: it has
        none, as a dormant session): requests may be taken."""
        self.tasks = tasks
        self._reader = reader

    @property
    def running(self) -> int:
        """How many requests hold an in-flight slot now."""
        return self.session.max_in_flight - self._free

    @property
    def has_free_slot(self) -> bool:
        """Whether a request taken now gets an in-flight slot without waiting for one."""
        return self._free > 0

    @property
    def parked_actors(self) -> int:
        """How many request actors are parked, waiting for a request."""
        return len(self._actors.idle)

    # ------------------------------------------------------------ 1. the way in, a slot

    async def take(self, rid: RequestId, request: Request[Any]) -> None:
        """Take ``request`` (id ``rid``): once it holds a slot, answer it at once or start it in
        a request actor (see the module docstring). Returns once it is answered or started.

        Raises :class:`SessionBusy`, having forgotten the request, when ``max_in_flight``
        requests run and the session's ``max_waiting`` wait already.
        """
        if self._closed or self.tasks is None:
            self.session.connection.drop_request(rid)
            return
        waited = False
        if self._free:
            self._free -= 1
        else:
            limit = self.session.max_waiting
            if limit is not None and self._waiting >= limit:
                self.session.connection.drop_request(rid)
                raise SessionBusy
            # Registered before the wait, so that the peer's cancellation (or the session's end)
            # reaches it there; shielded from the delivering task's own cancellation (an HTTP
            # POST whose client left), which is not the peer's.
            scope = self._scopes[rid] = trio.CancelScope(shield=True)
            try:
                with scope:
                    await self._wait_for_slot()
            finally:
                del self._scopes[rid]
            if scope.cancelled_caught:
                # Cancelled before it ran (it holds no slot): no answer, and none is owed.
                self.forget(rid)
                self.answer_cut_unrun(rid)
                return
            waited = True
        # ------------------------------------------------------------ 2. the placement
        at_once = self._at_once
        if not waited and at_once is not None and self.outbox.has_room and at_once(request):
            self._answer_at_once(rid, request)
        else:
            # Only the reader's requests share actors: they all run in copies of the session's
            # context. A request handed in by another task (an HTTP POST, whose context holds
            # the request's principal) gets an actor of its own, in a copy of that context.
            reader = trio.lowlevel.current_task() is self._reader
            self._scopes[rid] = self._actors.start(rid, request, shared=reader)

    async def _wait_for_slot(self) -> None:
        """Take an in-flight slot once one is freed (none is free now)."""
        lot = self._slot_waiters
        if lot is None:
            lot = self._slot_waiters = trio.lowlevel.ParkingLot()
        self._waiting += 1
        try:
            # Woken by free_slot(), which hands over its slot: taken, even if cancelled meanwhile.
            await lot.park()
        finally:
            self._waiting -= 1

    def free_slot(self) -> None:
        """A request's answer is handed to the outbox (or it has none): its slot is free.

        Not before: a request whose answer waits for room in the outgoing buffer is still in
        flight, so a peer that does not read cannot have more requests started meanwhile.
        """
        lot = self._slot_waiters
        if not (self._waiting and lot is not None and lot.unpark()):
            self._free += 1

    def cancel(self, rid: RequestId, reason: str | None) -> None:
        """The peer cancelled ``rid``: stop its handler, and send nothing for it."""
        scope = self._scopes.get(rid)
        if scope is not None:
            log.debug("peer cancelled request %r: %s", rid, reason)
            if self._peer_cancelled is None:
                self._peer_cancelled = set()
            self._peer_cancelled.add(rid)
            scope.cancel()

    def close(self) -> None:
        """The session ended: take nothing more, and stop the requests waiting for a slot (its
        nursery cancels the actors)."""
        self._closed = True
        for scope in self._scopes.values():
            scope.cancel()

    # ------------------------------------------------------------ 2a. answered at once

    def _answer_at_once(self, rid: RequestId, request: Request[Any]) -> None:
        """Answer ``request``, whose handler never suspends, here and now, in a fresh copy of
        the delivering task's context; its slot is freed once the answer is handed over.

        The handler's coroutine ends at its first step (that is what the server judged), so it
        is stepped once, with no task or scope around it; a handler that suspends after all
        breaks the server's promise and is answered as an internal error rather than left
        waiting where no one would wake it.
        """
        rctx = RequestContext(self.session, rid, request)
        run = contextvars.copy_context().run
        try:
            handling = run(self._handle, rctx, request)
            if not isinstance(handling, CoroutineType):
                handling = _awaiting(handling)
            run(handling.send, None)
        except StopIteration as done:
            data = self._answer_of(rctx, done.value)
        except Exception as exc:
            data = run(self._failed, rctx, exc)
        except BaseException:
            self.session.connection.drop_request(rid)
            self.free_slot()
            raise
        else:
            run(handling.close)
            log.error("handler for %s (id %r) waited, though found never to", request.METHOD, rid)
            data = self.session.connection.respond_error(
                rid, InternalError("The handler waited, though it was found never to")
            )
        answer = self.frame_of(data, rid)
        if answer is not None and not self.outbox.put_nowait(answer):
            # The handler took the room there was (a notification it sent): the answer waits
            # for room in a task, which holds the request's slot meanwhile.
            assert self.tasks is not None
            self.tasks.start_soon(self._send_then_free, answer)
            return
        self.free_slot()

    async def _send_then_free(self, answer: Outgoing) -> None:
        try:
            await self.send_answer(answer)
        finally:
            self.free_slot()

    # ------------------------------------------------------------ 3. the answer

    async def answer(self, rctx: RequestContext) -> bytes | CarriedResult | None:
        """Run the handler of ``rctx``'s request; its answer (``None`` while its batch is open).

        A handler's error becomes an error answer; a cancellation passes through.
        """
        try:
            result = await self._handle(rctx, rctx.request)
        except Exception as exc:
            return self._failed(rctx, exc)
        return self._answer_of(rctx, result)

    def _answer_of(self, rctx: RequestContext, result: Result) -> bytes | CarriedResult | None:
        """The answer carrying ``result`` (an error answer if it cannot be encoded)."""
        try:
            return self.session.connection.respond_carried(
                rctx.request_id, result, carry=self._carry
            )
        except Exception as exc:
            return self._failed(rctx, exc)

    def _failed(self, rctx: RequestContext, exc: Exception) -> bytes | None:
        """The answer to a request whose handler (or its answer's encoding) raised ``exc``: an
        ``McpError``'s own, -32603 for anything else (with a log line)."""
        connection = self.session.connection
        rid = rctx.request_id
        if isinstance(exc, LocalError):
            return connection.respond_error(rid, exc.error_answer())
        if isinstance(exc, McpError):
            return connection.respond_error(rid, exc)
        log.error("handler for %s (id %r) failed", rctx.request.METHOD, rid, exc_info=exc)
        return connection.respond_error(rid, InternalError(f"{type(exc).__name__}: {exc}"))

    def answer_cut(self, rid: RequestId) -> bytes | None:
        """The answer to a request whose scope caught a cancellation: none if the peer asked
        (then the transport is told it ended unanswered), else an error."""
        connection = self.session.connection
        if self._peer_cancelled is not None and rid in self._peer_cancelled:
            data = connection.drop_request(rid)
            if data is None:
                self.ended_unanswered(rid)
            # Else the last member of a batch ended: the batch's answers, which settle it.
            return data
        return connection.respond_error(rid, InternalError("The server cancelled this request"))

    def answer_cut_unrun(self, rid: RequestId) -> None:
        """``rid`` was cancelled while it waited for a slot, before it ran: by the peer (then the
        transport is told it ended unanswered) or by the session's end."""
        data = self.session.connection.drop_request(rid)
        if data is None or self._closed:
            self.ended_unanswered(rid)
        else:
            # The last member of a batch whose other answers are in: they go out now.
            assert self.tasks is not None
            self.tasks.start_soon(self.send_answer, Outgoing(data, rid, FrameKind.ANSWER))

    def ended_unanswered(self, rid: RequestId) -> None:
        """``rid`` ends with no answer (the peer cancelled it, or the session ended): tell the
        transport, which may keep something open until the answer."""
        if self._unanswered is not None:
            self._unanswered(rid)

    def forget(self, rid: RequestId) -> bool:
        """Forget a request whose handler has ended; whether the peer cancelled it."""
        self._scopes.pop(rid, None)
        cancelled = self._peer_cancelled
        if cancelled is not None and rid in cancelled:
            cancelled.remove(rid)
            return True
        return False

    def frame_of(self, answer: bytes | CarriedResult | None, rid: RequestId) -> Outgoing | None:
        """The frame to send for ``answer``; ``None`` when there is none, or it was a result the
        transport took unencoded, at once (then it is sent)."""
        if answer is None:
            return None
        if isinstance(answer, CarriedResult):
            if self.outbox.put_carried_nowait(answer):
                return None
            return Outgoing(answer.encoded(), rid, FrameKind.ANSWER)
        return Outgoing(answer, rid, FrameKind.ANSWER)

    async def send_answer(self, outgoing: Outgoing) -> None:
        """Send an answer, waiting for room; dropped (with a debug line) if the session ended."""
        try:
            await self.outbox.put(outgoing)
        except ConnectionClosed:
            log.debug("session ended before the answer to %r could be sent", outgoing.related)


class _Actor(ParkingSpot):
    """One request actor: where it parks, its current scope, and the request it works on."""

    __slots__ = ("idle", "leftover", "request", "rid", "scope", "shared")

    def __init__(
        self,
        idle: list[_Actor],
        rid: RequestId,
        request: Request[Any],
        scope: trio.CancelScope,
        shared: bool,
    ) -> None:
        super().__init__()
        self.idle = idle
        #: Whether it parks for the next of the reader's requests after answering, or ends.
        self.shared = shared
        self.rid: RequestId | None = rid
        self.request: Request[Any] | None = request
        self.scope = scope
        # An answer to send once the actor has left the scope it was made under.
        self.leftover: Outgoing | None = None

    def cancelled(self) -> None:
        # Cancelled while parked (the session is ending): no longer available.
        self.idle.remove(self)


class _RequestActors:
    """The request actors of one session (2b in the module docstring)."""

    __slots__ = ("_incoming", "_limit", "idle")

    def __init__(self, incoming: IncomingRequests, limit: int) -> None:
        self._incoming = incoming
        self._limit = limit
        self.idle: list[_Actor] = []

    def start(self, rid: RequestId, request: Request[Any], *, shared: bool) -> trio.CancelScope:
        """Run ``request`` in an actor; return the scope it runs under. A ``shared`` one (a
        request the reader delivered) may be a parked actor, and parks again after answering;
        any other runs in a new actor, started in a copy of the calling task's context, which
        ends after answering."""
        if shared and self.idle:
            actor = self.idle.pop()
            actor.rid = rid
            actor.request = request
            actor.wake()
            return actor.scope
        actor = _Actor(self.idle, rid, request, trio.CancelScope(), shared)
        tasks = self._incoming.tasks
        assert tasks is not None
        # start_soon runs the new task in a copy of the calling task's context (dormant too).
        tasks.start_soon(self._run, actor)
        return actor.scope

    async def _run(self, actor: _Actor) -> None:
        incoming = self._incoming
        snapshot = ContextSnapshot()
        try:
            while True:
                with actor.scope:
                    after = await self._answer_under_scope(actor, snapshot)
                if actor.rid is not None:
                    # The scope caught a cancellation of the request it was running.
                    rid = actor.rid
                    actor.rid = actor.request = None
                    data = incoming.answer_cut(rid)
                    incoming.forget(rid)
                    actor.leftover = incoming.frame_of(data, rid)
                    after = _NEW_SCOPE if snapshot.unchanged() else _END
                if after is _NOT_PARKED:
                    return
                actor.scope = trio.CancelScope()
                leftover = actor.leftover
                if leftover is not None:
                    actor.leftover = None
                    await incoming.send_answer(leftover)
                incoming.free_slot()
                if after is _END:
                    return
        finally:
            if actor.rid is not None:
                # The session ended while this actor ran a request.
                incoming.forget(actor.rid)
                incoming.ended_unanswered(actor.rid)
                actor.rid = actor.request = None

    async def _answer_under_scope(self, actor: _Actor, snapshot: ContextSnapshot) -> object:
        """Answer requests under ``actor.scope``, parking between them, until the scope cannot
        be kept for the next one. Returns what then: the last request's answer is left in
        ``actor.leftover``, to send after leaving the scope, then the actor goes on under a new
        scope (``_NEW_SCOPE``) or ends (``_END``); or the actor ends at once, its last answer
        sent and its slot freed, instead of parking: it is not one of the reader's, or enough
        others are parked (``_NOT_PARKED``)."""
        incoming = self._incoming
        session = incoming.session
        idle = self.idle
        scope = actor.scope
        while True:
            if actor.rid is None:
                if not actor.shared or len(idle) >= self._limit:
                    return _NOT_PARKED
                idle.append(actor)
                await actor.park()
            rid = actor.rid
            assert rid is not None and actor.request is not None
            rctx = RequestContext(session, rid, actor.request, scope)
            data = await incoming.answer(rctx)
            actor.rid = actor.request = None
            peer_cancelled = incoming.forget(rid)
            answer = incoming.frame_of(data, rid)
            if not snapshot.unchanged():
                # The handler left a context variable rebound: answer, then end.
                actor.leftover = answer
                return _END
            if rctx.scope_lent or peer_cancelled:
                # Someone may hold this scope, or it is spent: answer outside it, then leave it.
                actor.leftover = answer
                return _NEW_SCOPE
            if answer is not None and not incoming.outbox.put_nowait(answer):
                await incoming.send_answer(answer)
            incoming.free_slot()


# What an actor does once it has left its scope (see _answer_under_scope).
_NEW_SCOPE = object()
_END = object()
_NOT_PARKED = object()


async def _unhandled(rctx: RequestContext, request: Request[Any]) -> Result:
    """The handler of a session given none."""
    raise InternalError("This session does not handle requests")


async def _awaiting(awaitable: Awaitable[Result]) -> Result:
    """A coroutine awaiting ``awaitable``: a handler's answer that is not a coroutine itself."""
    return await awaitable
