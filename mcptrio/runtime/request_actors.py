"""Request actors: the tasks that run incoming requests' handlers, reused from one to the next.

Each incoming request runs in a task of its own, under a cancel scope that the peer's
``notifications/cancelled`` (or the session's end) cancels, so a slow handler never holds up the
reader or anyone else. Spawning that task and entering that scope cost more than the rest of a
small request's path together (measured: an actor per request and a scope per request take an
in-memory call from 162k to 243k instructions with 100 callers, and 266k to 346k with one), so
an actor that has answered its request does not end: it parks on its :class:`ParkingSpot
<mcptrio.runtime.parking.ParkingSpot>`, still inside its scope, and the reader hands it the next
request directly. The rules that make a reused actor indistinguishable from a fresh one:

- **One request per actor at a time.** An actor takes a request only while parked; the reader
  never queues a second one behind a busy actor. At most ``max_in_flight`` requests run, so at
  most that many actors are busy, and at most that many are kept parked.
- **Its own scope, unless it was touched.** After a request, the scope is kept for the next one
  only if nothing could still reach it: it was not cancelled, and the handler never asked for
  it (``RequestContext.cancel_scope``), so no one holds it and its deadline and shield are as
  they were. Otherwise the actor leaves it and opens a new one: a stale reference can then
  cancel nothing but a scope no longer in use, exactly as with a scope per request. An answer
  given under a scope that is being left is sent after leaving it.
- **Its own context.** Each request runs in the context the actor started in, as it would in a
  task of its own. After every request, however it ended, a :class:`ContextSnapshot
  <mcptrio.runtime.contexts.ContextSnapshot>` taken when the actor started tells whether the
  handler rebound anything; if it did, the actor ends after answering, so the next request never
  sees it.
- **Cancellation.** A scope that catches a cancellation ends its request as a fresh actor would:
  no answer to the peer's cancellation, an error for any other. The session's end is not caught:
  it ends the actor, parked or busy.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

import trio

from ..protocol.base import Request, RequestId
from .context import RequestContext
from .contexts import ContextSnapshot
from .parking import ParkingSpot
from .transport import Outgoing

if TYPE_CHECKING:
    from .incoming import IncomingRequests

__all__ = ["RequestActors"]


class _Actor(ParkingSpot):
    """One request actor: where it parks, its current scope, and the request it works on."""

    __slots__ = ("idle", "leftover", "request", "rid", "scope")

    def __init__(
        self,
        idle: list[_Actor],
        rid: RequestId,
        request: Request[Any],
        scope: trio.CancelScope,
    ) -> None:
        super().__init__()
        self.idle = idle
        self.rid: RequestId | None = rid
        self.request: Request[Any] | None = request
        self.scope = scope
        # An answer to send once the actor has left the scope it was made under.
        self.leftover: Outgoing | None = None

    def cancelled(self) -> None:
        # Cancelled while parked (the session is ending): no longer available.
        self.idle.remove(self)


class RequestActors:
    """The request actors of one session: see the module docstring."""

    def __init__(self, incoming: IncomingRequests, limit: int) -> None:
        self._incoming = incoming
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
        context: contextvars.Context | None = None,
    ) -> trio.CancelScope:
        """Run ``request`` in a parked actor, or in a new one; return the scope it runs under.

        A new actor runs under ``scope`` when one is given (a scope registered for the request
        earlier, which a cancellation may already have reached), else under a fresh one; and in
        a copy of ``context`` when one is given (the calling task is not the session's), else
        of the calling task's.
        """
        if scope is None and self._idle:
            actor = self._idle.pop()
            actor.rid = rid
            actor.request = request
            actor.wake()
            return actor.scope
        actor = _Actor(self._idle, rid, request, scope if scope is not None else trio.CancelScope())
        if context is None:
            nursery.start_soon(self._run, actor)
        else:
            context.copy().run(nursery.start_soon, self._run, actor)
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
                    actor.leftover = None if data is None else Outgoing(data, rid)
                    after = _NEW_SCOPE if snapshot.unchanged() else _END
                if after is _ENOUGH_PARKED:
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
                actor.rid = actor.request = None

    async def _answer_under_scope(self, actor: _Actor, snapshot: ContextSnapshot) -> object:
        """Answer requests under ``actor.scope``, parking between them, until the scope cannot
        be kept for the next one. Returns what then: the last request's answer is left in
        ``actor.leftover``, to send after leaving the scope, then the actor goes on under a
        new scope (``_NEW_SCOPE``) or ends (``_END``); or the actor ends at once, having no
        request and enough others parked (``_ENOUGH_PARKED``)."""
        incoming = self._incoming
        session = incoming.session
        put_nowait = incoming.outbox.put_nowait
        idle = self._idle
        scope = actor.scope
        while True:
            if actor.rid is None:
                if len(idle) >= self._limit:
                    return _ENOUGH_PARKED
                idle.append(actor)
                await actor.park()
            rid = actor.rid
            assert rid is not None and actor.request is not None
            rctx = RequestContext(session, rid, actor.request, scope)
            data = await incoming.answer(rctx)
            actor.rid = actor.request = None
            peer_cancelled = incoming.forget(rid)
            answer = None if data is None else incoming.frame_of(data, rid)
            if not snapshot.unchanged():
                # The handler left a context variable rebound: answer, then end.
                actor.leftover = answer
                return _END
            if rctx.scope_lent or peer_cancelled:
                # Someone may hold this scope, or it is spent: answer outside it, then leave it.
                actor.leftover = answer
                return _NEW_SCOPE
            if answer is not None and not put_nowait(answer):
                await incoming.send_answer(answer)
            incoming.free_slot()


# What an actor does once it has left its scope (see _answer_under_scope).
_NEW_SCOPE = object()
_END = object()
_ENOUGH_PARKED = object()
