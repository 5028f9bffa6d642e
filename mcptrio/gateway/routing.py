"""Which downstream session answers an upstream server's request (sampling, elicitation, roots).

An upstream server asks its client (the gateway) for input while it answers one of the gateway's
forwarded requests; the gateway passes the question on to the client whose request that is, and
never to a client whose request cannot have caused it:

- an upstream of the stateless era (2026-07-28) asks inside the answer to the forwarded request,
  which the gateway's client answers in the forwarding task itself: the downstream request is
  known exactly (a context variable set around the forwarded call);
- an upstream of the handshake era sends its request on the connection, and nothing the
  gateway's client reads relates it to one of the gateway's requests (stdio has no way to; the
  client takes a request from its reader whatever HTTP stream it came on). Its possible
  causes are every request the gateway forwarded that the upstream may still be working on: those
  waiting for their answer, and those the gateway stopped waiting for without one (cancelled,
  timed out: many servers finish what they started, and ask on its behalf after the caller has
  gone). Only when all of them are one downstream client's is the question put to it (to its
  request that started last); otherwise it is refused (-32601) rather than risk asking the wrong
  person, whose answer (or data) would reach another client. A request abandoned so stays a
  possible cause until the connection to the upstream ends: nothing on the wire says when the
  upstream stopped working on it. A stateless-era client's tool call to such an upstream is
  parked (:mod:`.parked`), and the question goes to it, and on to the client in an
  input-required result.

With no downstream request waiting, ``roots/list`` is answered with no roots and sampling or
elicitation are refused (-32601): there is nobody to ask. A downstream client that did not declare
the capability gets it refused the same way, naming the capability. A stateless-era downstream
client is asked inside an input-required result of its request: directly for a stateless-era
upstream's question (the forwarded request is made again with the answers), through a parked
call for a handshake-era upstream's; such a question asked while a stateless-era client's prompt
or read (never parked) waits is refused with -32601 saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import count
from typing import Any

from ..client import Handlers
from ..protocol.base import Request, Result
from ..protocol.errors import ConnectionClosed, LocalError, McpError, MethodNotFound
from ..protocol.types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
)
from ..runtime.context import RequestContext
from ..server.handler_context import HandlerContext
from .parked import ParkedCall

__all__ = ["DownstreamRouter"]

#: The downstream request whose forwarded call this task is making (stateless-era upstreams).
_forwarding: ContextVar[HandlerContext | None] = ContextVar(
    "mcptrio_gateway_forwarding", default=None
)

#: How long a downstream client may take to answer a forwarded question (a person filling in
#: a form): the upstream's own request timeout usually ends it first.
ANSWER_TIMEOUT = 600.0


class DownstreamRouter:
    """The downstream requests waiting on one upstream, and the handlers that ask them."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self._waiting: dict[int, HandlerContext | ParkedCall] = {}
        self._ids = count()
        #: Who made the forwarded requests abandoned on the current connection (see
        #: :func:`_origin`): at most two are kept, since two already refuse every question.
        self._abandoned: set[object] = set()
        self._connection = 0

    def connecting(self) -> None:
        """A new connection to the upstream: nothing the gateway abandoned is in progress on it."""
        self._connection += 1
        self._abandoned.clear()

    @contextmanager
    def forwarding(self, waiter: HandlerContext | ParkedCall) -> Iterator[None]:
        """Mark ``waiter`` (a downstream request, or a parked call) as waiting on this upstream
        for the block."""
        key = next(self._ids)
        connection = self._connection
        self._waiting[key] = waiter
        token = _forwarding.set(waiter if isinstance(waiter, HandlerContext) else None)
        try:
            yield
        except BaseException as exc:
            if connection == self._connection and _unanswered(exc) and len(self._abandoned) < 2:
                self._abandoned.add(_origin(waiter))
            raise
        finally:
            _forwarding.reset(token)
            del self._waiting[key]

    def downstream(self) -> tuple[HandlerContext | ParkedCall | None, bool]:
        """The downstream request waiting on the upstream (the one to pass its log messages to),
        and whether it is the calling task's own."""
        own = _forwarding.get()
        if own is not None:
            return own, True
        if not self._waiting:
            return None, False
        waiters = list(self._waiting.values())
        if len({_origin(waiter) for waiter in waiters}) > 1:
            raise MethodNotFound(
                f"Several clients of the gateway are waiting on upstream {self.upstream!r}, and"
                " its request cannot be told apart as one of theirs (a handshake-era server's"
                " request names none): refused rather than asked of the wrong client"
            )
        return waiters[-1], False

    def to_ask(self, what: str) -> tuple[HandlerContext | ParkedCall | None, bool]:
        """The downstream request to put the upstream's question ``what`` to (see the module
        docstring), and whether it is the calling task's own."""
        waiter, own = self.downstream()
        if waiter is not None and not own and self._abandoned - {_origin(waiter)}:
            raise MethodNotFound(
                f"{what}: upstream {self.upstream!r} may still be working on a call that another"
                " client of the gateway cancelled or that timed out, and a handshake-era server's"
                " request names no call: refused rather than asked of the wrong client"
            )
        return waiter, own

    def handlers(self) -> Handlers:
        """The upstream client's handlers: everything passed on downstream."""
        return Handlers(sampling=self._sample, elicitation=self._elicit, fallback=self._other)

    async def _ask(self, request: Request[Any], capability: str) -> Any:
        what = request.METHOD
        ctx, own = self.to_ask(what)
        if isinstance(ctx, ParkedCall):
            # A client is only asked what it declared it can answer (server-everything asks
            # every client for its roots, whatever tool is being called).
            _check_declared(ctx.client_capabilities, capability, what)
            return await ctx.ask(request)
        if ctx is None:
            raise MethodNotFound(
                f"{what}: no client of the gateway is waiting on upstream {self.upstream!r}"
            )
        if ctx.request_meta is not None and not own:
            raise MethodNotFound(
                f"{what}: the gateway cannot pass a handshake-era server's request on to a"
                " stateless-era client"
            )
        _check_declared(ctx.client_capabilities, capability, what)
        return await ctx.send_request(request, timeout=ANSWER_TIMEOUT)

    async def _sample(self, _rctx: RequestContext, request: CreateMessageRequest) -> Any:
        result: CreateMessageResult = await self._ask(request, "sampling")
        return result

    async def _elicit(self, _rctx: RequestContext, request: ElicitRequest) -> Any:
        result: ElicitResult = await self._ask(request, "elicitation")
        return result

    async def _other(self, _rctx: RequestContext, request: Request[Any]) -> Result:
        """``roots/list``: the roots of the waiting downstream client (none without one)."""
        if not isinstance(request, ListRootsRequest):
            raise MethodNotFound(f"Method not found: {request.METHOD}")
        ctx, _own = self.downstream()
        if ctx is None:
            return ListRootsResult(roots=[])
        result: ListRootsResult = await self._ask(request, "roots")
        return result


def _check_declared(caps: ClientCapabilities | None, capability: str, what: str) -> None:
    """Refuse (-32601) passing ``what`` on to a client that did not declare ``capability``."""
    if caps is None or getattr(caps, capability) is None:
        raise MethodNotFound(
            f"{what}: the gateway's client did not declare the {capability} capability"
        )


def _unanswered(exc: BaseException) -> bool:
    """Whether a forwarded request that ended with ``exc`` may still be in progress upstream:
    anything but the upstream's error answer (an :class:`McpError` not raised on this side) or
    the end of the connection."""
    if isinstance(exc, ConnectionClosed):
        return False
    return not isinstance(exc, McpError) or isinstance(exc, LocalError)


def _origin(waiter: HandlerContext | ParkedCall) -> object:
    """Who is waiting: a handshake-era session, or else the request (or parked call) itself."""
    if isinstance(waiter, HandlerContext) and waiter.request_meta is None:
        return waiter.session
    return waiter
