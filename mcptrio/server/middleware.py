"""Middleware: an ordered chain of async callables around every request and notification.

A middleware is ``async def mw(call: Call, call_next: CallNext) -> Result | None``. It sees the
:class:`Call` (the method, its typed params, the request's :class:`~.context.Context`, the
session), and may, before or after ``await call_next(call)``:

- **answer** on its own: return a result without calling ``call_next``;
- **change** the call: ``await call_next(call.replace(params=...))`` (params of the same type:
  the handler then sees the changed request, ``ctx.request`` and ``ctx.arguments`` included),
  or change the result ``call_next`` returned;
- **time** or log it: wrap ``call_next`` in ``try``/``finally``;
- **refuse** it: raise an :class:`~mcptrio.protocol.errors.McpError` (its code, message and
  data become the JSON-RPC error answer); any other exception is answered -32603, as a
  handler's is.

The first middleware installed is the outermost. A request's chain runs in the request's own
task, under its cancel scope (the peer's ``notifications/cancelled`` interrupts a middleware
too, and then no answer is sent). A notification's chain runs in the task that reads the
session's transport: the session reads nothing more until it returns, so keep it short. For a
notification ``call.context`` and ``call.request_id`` are ``None``, ``call_next`` returns
``None``, and refusing it (raising, or not calling ``call_next``) only drops it: a notification
has no answer.

What passes through: every request and notification the server's handlers receive, in both
eras and on every transport. The protocol layer answers a few things itself, before any
handler, and those do not pass: ``initialize``, ``ping``, ``server/discover``,
``notifications/cancelled`` (it cancels the request it names), progress for the server's own
requests, and malformed input (answered with its JSON-RPC error).

With no middleware installed the server builds no chain: a request goes straight to its
handler.

``call.principal`` is who sent the message, as the server's authenticator established it (with
:class:`mcptrio.auth.server.BearerAuth`, the verified access token: ``subject``, ``scopes``...),
so that an authorization middleware reads it next to ``call.method``; ``None`` without an
authenticator (stdio, HTTP without one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.base import Notification, Request, RequestId, Result
from ..transports.http.endpoints.security import Principal, current_principal

if TYPE_CHECKING:
    from ..runtime.session import Session
    from .handler_context import HandlerContext

__all__ = ["Call", "CallNext", "Middleware", "MiddlewareChains", "compose"]


@dataclass(slots=True, eq=False)
class Call:
    """One request or notification on its way through the middleware chain to its handler."""

    #: The typed request or notification (``CallToolRequest``, ``InitializedNotification``
    #: ...): its fields are the message's params (``params.name``, ``params.arguments``).
    params: Request[Any] | Notification
    #: The session the message came in on. Stateless-era requests of one HTTP endpoint
    #: share one session: key per-client state on it only in the handshake era.
    session: Session
    #: The request's context (``None`` for a notification).
    context: HandlerContext | None = None
    #: The request's JSON-RPC id (``None`` for a notification).
    request_id: RequestId | None = None

    @property
    def method(self) -> str:
        """The method (``"tools/call"``, ``"notifications/initialized"``...)."""
        return self.params.METHOD

    @property
    def principal(self) -> Principal | None:
        """Who sent the message (see the module docstring); ``None`` without an authenticator."""
        if self.context is not None:
            return self.context.principal
        principal = current_principal.get()
        if principal is None:
            principal = getattr(self.session.transport, "principal", None)
        return principal

    @property
    def is_request(self) -> bool:
        """Whether this is a request (which gets an answer), not a notification."""
        return self.context is not None

    def replace(self, *, params: Request[Any] | Notification) -> Call:
        """This call with other ``params`` of the same type, for ``call_next``."""
        if type(params) is not type(self.params):
            raise TypeError(
                f"A middleware may change a {type(self.params).__name__}'s params, not replace"
                f" it with a {type(params).__name__}"
            )
        return Call(params, self.session, self.context, self.request_id)

    def __repr__(self) -> str:
        rid = "" if self.request_id is None else f" id={self.request_id!r}"
        return f"<Call {self.method}{rid}>"


class CallNext(Protocol):
    """The rest of the chain (the next middleware, or the handler) for a :class:`Call`."""

    def __call__(self, call: Call, /) -> Awaitable[Result | None]: ...


#: ``async def mw(call, call_next) -> Result | None``: see the module docstring.
Middleware = Callable[[Call, CallNext], Awaitable[Result | None]]


def compose(middleware: Sequence[Middleware], innermost: CallNext) -> CallNext:
    """``innermost`` wrapped in ``middleware``, the first one outermost."""
    chain = innermost
    for mw in reversed(middleware):
        chain = _link(mw, chain)
    return chain


def _link(mw: Middleware, call_next: CallNext) -> CallNext:
    async def step(call: Call, /) -> Result | None:
        return await mw(call, call_next)

    return step


class MiddlewareChains:
    """The middleware installed on a server, and the two chains built from them: ``request``
    (ending in the server's dispatch) and ``notification`` (ending in nothing: the server acts
    on no notification that reaches it). Both are ``None`` while nothing is installed."""

    __slots__ = ("_dispatch", "_installed", "notification", "request")

    def __init__(self, dispatch: CallNext) -> None:
        self._dispatch = dispatch
        self._installed: list[Middleware] = []
        self.request: CallNext | None = None
        self.notification: CallNext | None = None

    @property
    def installed(self) -> tuple[Middleware, ...]:
        """Outermost first."""
        return tuple(self._installed)

    def add(self, middleware: Middleware, *, outermost: bool) -> None:
        if not callable(middleware):
            raise TypeError(f"middleware must be an async callable, not {middleware!r}")
        if outermost:
            self._installed.insert(0, middleware)
        else:
            self._installed.append(middleware)
        self._rebuild()

    def remove(self, middleware: Middleware) -> bool:
        if middleware not in self._installed:
            return False
        self._installed.remove(middleware)
        self._rebuild()
        return True

    def _rebuild(self) -> None:
        if self._installed:
            self.request = compose(self._installed, self._dispatch)
            self.notification = compose(self._installed, _notified)
        else:
            self.request = self.notification = None


async def notify_through(chain: CallNext, call: Call) -> None:
    """Run a notification's ``chain`` (a session's notification handler returns nothing)."""
    await chain(call)


async def _notified(call: Call) -> None:
    """The end of a notification's chain."""
