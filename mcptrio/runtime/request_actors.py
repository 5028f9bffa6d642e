"""Request actors: the tasks that run incoming requests' handlers, reused from one request to
the next.

Each incoming request runs in a task of its own, under a cancel scope that the peer's
``notifications/cancelled`` (or the session's end) cancels, so a slow handler never holds up the
reader or anyone else. Spawning a task and entering a cancel scope are each about as costly as
the rest of a small request's path together, so a task that has answered its request does not
end: it parks, still inside its scope, and the reader hands it the next request directly.

- **One request per actor at a time.** An actor takes a request only while parked; the reader
  never queues a second one behind a busy actor. At most ``max_in_flight`` requests run, so at
  most that many actors are busy, and at most that many are kept parked.
- **Its own scope, unless it was touched.** A request's scope is its actor's. After a request,
  the scope is kept for the next one only if nothing could still reach it: it was not cancelled,
  its deadline and shield are untouched, and the handler never asked for it
  (``RequestContext.cancel_scope``), so no one holds it. Otherwise the actor leaves it and opens
  a new one: a stale reference can then cancel nothing but a scope no longer in use, exactly as
  with a scope per request.
- **Its own context.** Each request runs in the context the actor started in, as it would in a
  task of its own. After every request, however it ended (answered, failed, cancelled), the
  actor checks that each variable is still bound to the very object it started with (identity,
  never ``==``, which may raise or call different objects equal); if not, it ends after
  answering, so the next request never sees what a handler set. (Running each request in a copy
  of its own instead costs a generator step per await.)
- **Cancellation.** A scope that catches a cancellation ends its request as a request actor
  would: no answer to the peer's cancellation, an error for any other. The session's end is not
  caught: it ends the actor, parked or busy.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ..protocol.base import Request, RequestId
from .context import RequestContext

if TYPE_CHECKING:
    from .session import Session

__all__ = ["RequestActors"]


class _Host(Protocol):
    """What the actors need from their session."""

    def answer_cut(self, rid: RequestId) -> bytes | None: ...
    def request_done(self, rid: RequestId) -> bool: ...
    def send_answer_nowait(self, data: bytes, rid: RequestId) -> bool: ...
    async def answer(self, rctx: RequestContext) -> bytes | None: ...
    async def send_answer(self, data: bytes, rid: RequestId) -> None: ...


class _Actor:
    """One request actor: its task, its current scope, and the request it is working on."""

    __slots__ = ("idle", "request", "rid", "scope", "task")

    def __init__(
        self,
        idle: list[_Actor],
        rid: RequestId,
        request: Request[Any],
        scope: trio.CancelScope,
    ) -> None:
        self.idle = idle
        self.rid: RequestId | None = rid
        self.request: Request[Any] | None = request
        self.scope = scope
        self.task: trio.lowlevel.Task | None = None

    def abort(self, _raise_cancel: Any) -> trio.lowlevel.Abort:
        # Cancelled while parked (the session is ending): no longer available.
        self.idle.remove(self)
        return trio.lowlevel.Abort.SUCCEEDED


class RequestActors:
    """The request actors of one session: see the module docstring."""

    def __init__(self, session: Session, host: _Host, limit: int) -> None:
        self._session = session
        self._host = host
        self._limit = limit
        self._idle: list[_Actor] = []

    @property
    def parked(self) -> int:
        """How many actors are parked, waiting for a request."""
        return len(self._idle)

    def start(
        self,
        nursery: trio.Nursery,
        rid: RequestId,
        request: Request[Any],
        scope: trio.CancelScope | None = None,
    ) -> trio.CancelScope:
        """Run ``request`` in a parked actor, or in a new one; return the scope it runs under.

        A new actor runs under ``scope`` when one is given (a scope registered for the request
        earlier, which a cancellation may already have reached), else under a fresh one.
        """
        if scope is None and self._idle:
            actor = self._idle.pop()
            actor.rid = rid
            actor.request = request
            assert actor.task is not None
            trio.lowlevel.reschedule(actor.task)
            return actor.scope
        actor = _Actor(self._idle, rid, request, scope if scope is not None else trio.CancelScope())
        nursery.start_soon(self._run, actor)
        return actor.scope

    async def _run(self, actor: _Actor) -> None:
        actor.task = trio.lowlevel.current_task()
        host = self._host
        bindings = tuple(contextvars.copy_context().items())
        idle = self._idle
        ending = False
        try:
            while not ending:
                scope = actor.scope
                answer: tuple[bytes | None, RequestId] | None = None
                with scope:
                    while True:
                        if actor.rid is None:
                            # Park until the reader hands over a request (enough are parked
                            # already: end instead).
                            if len(idle) >= self._limit:
                                return
                            idle.append(actor)
                            await trio.lowlevel.wait_task_rescheduled(actor.abort)
                        rid = actor.rid
                        assert rid is not None and actor.request is not None
                        rctx = RequestContext(self._session, rid, actor.request, scope)
                        data = await host.answer(rctx)
                        actor.rid = actor.request = None
                        cancelled = host.request_done(rid)
                        # A handler that left a context variable set ends its actor.
                        ending = not _bound_as(bindings)
                        if ending or rctx.scope_lent or cancelled:
                            # Someone may hold this scope, or it is spent: answer outside it,
                            # then leave it. (Only the handler, which asked for it, could have
                            # changed its deadline or shield; only the peer's cancellation
                            # reaches a scope no one was lent.)
                            answer = (data, rid)
                            break
                        if data is not None and not host.send_answer_nowait(data, rid):
                            await host.send_answer(data, rid)
                if actor.rid is not None:
                    # The scope caught a cancellation of the request it was running.
                    rid = actor.rid
                    actor.rid = actor.request = None
                    answer = (host.answer_cut(rid), rid)
                    host.request_done(rid)
                    ending = not _bound_as(bindings)
                actor.scope = trio.CancelScope()
                if answer is not None and answer[0] is not None:
                    await host.send_answer(answer[0], answer[1])
        finally:
            if actor.rid is not None:
                host.request_done(actor.rid)
                actor.rid = actor.request = None


_ABSENT = object()


def _bound_as(bindings: tuple[tuple[contextvars.ContextVar[Any], Any], ...]) -> bool:
    """Whether the current context binds exactly ``bindings``: the same variables, each to the
    very same object."""
    current = contextvars.copy_context()
    if len(current) != len(bindings):
        return False
    get = current.get
    # A plain loop: no generator object per request.
    for var, value in bindings:  # noqa: SIM110
        if get(var, _ABSENT) is not value:
            return False
    return True
