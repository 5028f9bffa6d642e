"""The incoming requests of one session: their in-flight slots, cancel scopes and answers.

An internal part of :class:`~mcptrio.runtime.session.Session`, which hands it every request it
receives. Each request runs under a cancel scope registered by its id, in one of two places:

- a **request actor** (``request_actors.py``), a task of the session's own, for requests the
  session's reader takes from its transport (and for those in a batch);
- the **task that delivered it**, for a lone request handed to
  :meth:`Session.handle_frame <mcptrio.runtime.session.Session.handle_frame>` (an HTTP POST):
  the handler runs there, with no task spawned, under a scope shielded from that task's own,
  so that, as in an actor, only the peer's cancellation or the session's end stops it.

Except a request whose handler never waits (the session's ``answers_at_once`` says which:
:mod:`mcptrio.server.eager`): it is answered at once, where it was decoded, under no scope
(nothing could reach it: it has no checkpoint), in a copy of the context a new actor would have.
The hand-off to an actor and back would be two task switches, an eighth of a small in-process
call (measured: 204k to 180k instructions per in-memory call, ``benchmarks`` ``call-10k``).
A handler's BaseException goes on in that task (in process, the caller's); the request then
ends unanswered, its slot freed.

The rules are the same in both:

- **In flight.** At most ``max_in_flight`` requests run at once, each from the moment it is
  taken until its answer is handed to the outbox (an answer waiting for room in a full buffer
  still counts). The session's reader waits for a free slot before it reads on, so a flood of
  requests waits in the peer's pipe or socket. A request's scope is registered before that
  wait, so the peer's cancellation reaches it there.
- **Answers.** A handler's result, or its error (an ``McpError``'s own code, -32603 for anything
  else, with a log line), is answered once the handler returns. A request the peer cancelled is
  not answered at all; one whose scope was cancelled otherwise (by the handler itself) gets an
  error, so the peer is never left waiting.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import TYPE_CHECKING, Any

import trio

from ..protocol.base import Request, RequestId, Result
from ..protocol.codec import CarriedResult
from ..protocol.errors import ConnectionClosed, InternalError, LocalError, McpError
from .context import RequestContext
from .contexts import InContext
from .outbox import Outbox
from .request_actors import RequestActors
from .transport import Outgoing

if TYPE_CHECKING:
    from .session import Session

__all__ = ["IncomingRequests", "RequestHandler", "SessionBusy"]

log = logging.getLogger("mcptrio.session")

RequestHandler = Callable[[RequestContext, Request[Any]], Awaitable[Result]]


class SessionBusy(Exception):
    """A request delivered in a task of its own (an HTTP POST) found ``max_in_flight`` requests
    running and the session's ``max_waiting`` waiting for a slot: it was not taken (the
    transport answers 503).

    Each waiting request is a task of its transport's, which may hold nothing of its client's
    (an HTTP POST whose client left gives its connection slot back), so without this bound a
    client could leave any number of them behind.
    """


class IncomingRequests:
    """A session's incoming requests; see the module docstring."""

    __slots__ = (
        "_actors",
        "_at_once",
        "_carry",
        "_closed",
        "_free",
        "_handle",
        "_inline",
        "_peer_cancelled",
        "_scopes",
        "_slot_waiters",
        "_waiting",
        "nursery",
        "outbox",
        "session",
    )

    def __init__(
        self,
        session: Session,
        outbox: Outbox,
        handle_request: RequestHandler | None,
        answers_at_once: Callable[[Request[Any]], bool] | None = None,
    ) -> None:
        self.session = session
        self.outbox = outbox
        self._handle = _unhandled if handle_request is None else handle_request
        self._at_once = answers_at_once
        # Whether answers may go to the transport unencoded: the outbox's transport is fixed.
        self._carry = outbox.carries_results
        # The in-flight slots: a count of free ones, and the tasks waiting for one, to which a
        # freed slot passes directly (first come, first served). Not a trio.Semaphore, whose
        # acquire_nowait and release each ask its parking lot whether anyone waits (a Python
        # call): this way costs 4k instructions less per in-memory call.
        # The parking lot and the two sets below are made when first needed: a server holds
        # thousands of idle sessions, and each empty one costs 200-odd bytes.
        self._free = session.max_in_flight
        self._waiting = 0
        self._slot_waiters: trio.lowlevel.ParkingLot | None = None
        self._scopes: dict[RequestId, trio.CancelScope] = {}
        # Requests the peer cancelled: they end with no answer.
        self._peer_cancelled: set[RequestId] | None = None
        # Scopes of the handlers running in a delivering task: outside the session's nursery,
        # so ending the session cancels them one by one.
        self._inline: set[trio.CancelScope] | None = None
        self._actors = RequestActors(self, session.max_in_flight)
        #: The session's nursery, where actors run; set when the session starts.
        self.nursery: trio.Nursery | None = None
        self._closed = False

    @property
    def running(self) -> int:
        """How many requests hold an in-flight slot now."""
        return self.session.max_in_flight - self._free

    @property
    def parked_actors(self) -> int:
        """How many request actors are parked, waiting for a request."""
        return self._actors.parked

    # ------------------------------------------------------------ the session's side

    def can_start_now(self) -> bool:
        """Whether a request may start now with no task started for it: a slot is free, and an
        actor is parked, or the request may be one answered at once."""
        return self._free > 0 and (self._at_once is not None or self._actors.parked > 0)

    def start_nowait(
        self, rid: RequestId, request: Request[Any], context: contextvars.Context | None = None
    ) -> bool:
        """Start ``request`` if a slot is free; ``False`` if none is. A request whose handler
        never waits is answered here and now (see the module docstring), in a copy of
        ``context``; others start in an actor, a new one in a copy of ``context``. ``context``
        defaults to the calling task's."""
        if not self._free:
            return False
        self._free -= 1
        at_once = self._at_once
        if at_once is not None and self.outbox.has_room and at_once(request):
            try:
                answer = self._answer_at_once(rid, request, context)
            except BaseException:
                self._ended_by_exception(rid)
                raise
            if answer is not None and not self.outbox.put_nowait(answer):
                # The handler took the room there was (a notification it sent): the answer
                # waits for room in a task, which holds the request's slot meanwhile.
                assert self.nursery is not None
                self.nursery.start_soon(self._send_then_free, answer)
                return True
            self.free_slot()
            return True
        assert self.nursery is not None
        self._scopes[rid] = self._actors.start(self.nursery, rid, request, context=context)
        return True

    async def start(self, rid: RequestId, request: Request[Any]) -> None:
        """Start ``request`` in an actor once a slot is free."""
        # Registered before the wait, so that a cancellation arriving meanwhile (later in the
        # same batch, or in another POST) lands: the actor then starts under a cancelled scope.
        waiting = self._scopes[rid] = trio.CancelScope()
        try:
            if self._free:
                # Freed since the caller found none: taken at once.
                self._free -= 1
            else:
                await self._wait_for_slot()
        except BaseException:
            del self._scopes[rid]
            raise
        assert self.nursery is not None
        self._actors.start(self.nursery, rid, request, waiting)

    def cancel(self, rid: RequestId, reason: str | None) -> None:
        """The peer cancelled ``rid``: stop its handler, and send nothing for it."""
        scope = self._scopes.get(rid)
        if scope is not None:
            log.debug("peer cancelled request %r: %s", rid, reason)
            if self._peer_cancelled is None:
                self._peer_cancelled = set()
            self._peer_cancelled.add(rid)
            scope.cancel()

    async def answer_here(self, rid: RequestId, request: Request[Any]) -> None:
        """Answer ``request`` in the calling task, as its actor would; see the module docstring.

        Returns once the answer is handed to the outbox (or the request has ended unanswered).
        Raises :class:`SessionBusy`, having forgotten the request, when ``max_in_flight``
        requests run and the session's ``max_waiting`` wait already.
        """
        at_once = self._at_once
        if self._free and not self._closed and at_once is not None and at_once(request):
            self._free -= 1
            try:
                answer = self._answer_at_once(rid, request, None)
            except BaseException:
                self._ended_by_exception(rid)
                raise
            try:
                # Straight to the transport when it takes it (no coroutine of ours on the way).
                if answer is not None and not self.outbox.put_direct(answer):
                    await self.send_answer(answer)
            finally:
                if self._waiting:
                    self.free_slot()
                else:
                    self._free += 1  # free_slot's outcome when no one waits, with no call
            return
        if not self._free:
            limit = self.session.max_waiting
            if limit is not None and self._waiting >= limit:
                self.session.connection.drop_request(rid)
                raise SessionBusy
        # Registered before the wait for a slot, so that the peer's cancellation (or the
        # session's end) reaches it while it waits; shielded from the caller's scope.
        scope = self._scopes[rid] = trio.CancelScope(shield=True)
        inline = self._inline
        if inline is None:
            inline = self._inline = set()
        inline.add(scope)
        if self._closed:
            scope.cancel()
        try:
            # In a copy of the caller's context, as in an actor: what the handler sets there
            # does not outlive it in the caller's task (a keep-alive connection serves other
            # requests, of other sessions, in that task next).
            await InContext(self._answer_in(rid, request, scope), contextvars.copy_context())
        finally:
            inline.discard(scope)

    async def _answer_in(
        self, rid: RequestId, request: Request[Any], scope: trio.CancelScope
    ) -> None:
        data: bytes | CarriedResult | None = None
        holding = False
        try:
            try:
                with scope:
                    # Inside the request's scope: only the peer's cancellation or the session's
                    # end interrupts the wait for a slot.
                    if self._free:
                        self._free -= 1
                    else:
                        await self._wait_for_slot()
                    holding = True
                    data = await self.answer(RequestContext(self.session, rid, request, scope))
                if scope.cancelled_caught:
                    data = self.answer_cut(rid)
            finally:
                self.forget(rid)
            answer = None if data is None else self.frame_of(data, rid)
            if answer is not None:
                await self.send_answer(answer)
        finally:
            if holding:
                self.free_slot()

    async def _wait_for_slot(self) -> None:
        """Take an in-flight slot once one is freed (none is free now)."""
        lot = self._slot_waiters
        if lot is None:
            lot = self._slot_waiters = trio.lowlevel.ParkingLot()
        self._waiting += 1
        try:
            # Woken by done(), which hands over its slot: taken, even if cancelled meanwhile.
            await lot.park()
        finally:
            self._waiting -= 1

    def close(self) -> None:
        """The session ended: cancel the handlers running in delivering tasks (its nursery
        takes care of the actors)."""
        self._closed = True
        for scope in self._inline or ():
            scope.cancel()

    def _answer_at_once(
        self, rid: RequestId, request: Request[Any], context: contextvars.Context | None
    ) -> Outgoing | None:
        """Answer ``request`` here and now, its handler never waiting, in a copy of ``context``
        (else of the calling task's, as a new actor's would be); the frame still to send, if
        any. Its slot is the caller's to free.

        The handler's own coroutine is stepped, with none of ours around it (:meth:`answer`'s
        would be one more coroutine per call), and its outcome answered as :meth:`answer`
        answers it.
        """
        rctx = RequestContext(self.session, rid, request)
        run = (contextvars.copy_context() if context is None else context.copy()).run
        connection = self.session.connection
        try:
            handling = run(self._handle, rctx, request)
            if not isinstance(handling, CoroutineType):
                handling = _awaiting(handling)
            run(handling.send, None)
        except StopIteration as done:
            try:
                data = connection.respond_carried(rid, done.value, carry=self._carry)
            except Exception as exc:
                data = run(self._failed, rctx, exc)
        except Exception as exc:
            data = run(self._failed, rctx, exc)
        else:
            # The handler waited after all: a bug in the server's promise, answered as an
            # internal error rather than left waiting where no one would wake it.
            run(handling.close)
            log.error("handler for %s (id %r) waited, though found never to", request.METHOD, rid)
            data = connection.respond_error(
                rid, InternalError("The handler waited, though it was found never to")
            )
        if data is None:
            return None
        if type(data) is bytes:
            return Outgoing(data, rid)
        return self.frame_of(data, rid)

    def _ended_by_exception(self, rid: RequestId) -> None:
        """A handler answering at once raised a BaseException (KeyboardInterrupt, SystemExit):
        it goes on in the task that decoded the request (in process, the caller's), and the
        request ends unanswered, its slot free: the session, if that task carries on, is not
        left a slot short."""
        self.session.connection.drop_request(rid)
        self.free_slot()

    async def _send_then_free(self, answer: Outgoing) -> None:
        try:
            await self.send_answer(answer)
        finally:
            self.free_slot()

    # ------------------------------------------------------------ the actors' side

    async def answer(self, rctx: RequestContext) -> bytes | CarriedResult | None:
        """Run the handler of ``rctx``'s request; its answer (``None`` while its batch is open).

        A handler's error becomes an error answer; a cancellation passes through.
        """
        try:
            result = await self._handle(rctx, rctx.request)
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

    def frame_of(self, answer: bytes | CarriedResult, rid: RequestId) -> Outgoing | None:
        """The frame to send for ``answer``; ``None`` when it was a result the transport took
        unencoded, at once (then it is sent)."""
        if isinstance(answer, CarriedResult):
            if self.outbox.put_carried_nowait(answer):
                return None
            return Outgoing(answer.encoded(), rid)
        return Outgoing(answer, rid)

    def answer_cut(self, rid: RequestId) -> bytes | None:
        """The answer to a request whose scope caught a cancellation: none if the peer asked."""
        connection = self.session.connection
        if self._peer_cancelled is not None and rid in self._peer_cancelled:
            return connection.drop_request(rid)
        return connection.respond_error(rid, InternalError("The server cancelled this request"))

    def forget(self, rid: RequestId) -> bool:
        """Forget a request whose handler has ended; whether the peer cancelled it (the only way
        its scope could have been cancelled, unless the handler was lent it)."""
        del self._scopes[rid]
        cancelled = self._peer_cancelled
        if cancelled is not None and rid in cancelled:
            cancelled.remove(rid)
            return True
        return False

    def free_slot(self) -> None:
        """A request's answer is handed to the outbox (or it has none): its slot is free.

        Not before: a request whose answer waits for room in the outgoing buffer is still in
        flight, so a peer that does not read cannot have more requests started meanwhile.
        """
        # A waiter means the parking lot exists.
        if not (self._waiting and self._slot_waiters.unpark()):  # type: ignore[union-attr]
            self._free += 1

    async def send_answer(self, outgoing: Outgoing) -> None:
        """Send an answer, waiting for room; dropped (with a debug line) if the session ended."""
        try:
            await self.outbox.put(outgoing)
        except ConnectionClosed:
            log.debug("session ended before the answer to %r could be sent", outgoing.related)


async def _unhandled(rctx: RequestContext, request: Request[Any]) -> Result:
    """The handler of a session given none."""
    raise InternalError("This session does not handle requests")


async def _awaiting(awaitable: Awaitable[Result]) -> Result:
    """A coroutine awaiting ``awaitable``: a handler's answer that is not a coroutine itself."""
    return await awaitable
