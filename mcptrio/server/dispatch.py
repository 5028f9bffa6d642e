"""How a server answers what its sessions receive: :class:`RequestDispatch`.

One path for every request: the server's :class:`~.context.Context` is made for it and is the
current one (:data:`~.logging_bridge.current_context`) while it is answered; the middleware
chain runs when there is one (:mod:`.middleware`); and its end, or the request itself when there
is none, goes to the route of the request's type (:mod:`.method_handlers`). A handler that asks
for input in the stateless era ends its round there, answered with an input-required result
(:mod:`.input_rounds`).

A notification goes through the middleware too, when there is some; the server itself acts on
none of those that reach it.

An :class:`RequestObserver` (the HTTP endpoint's metrics install one through
:meth:`Server.observe_requests <mcptrio.server.server.Server.observe_requests>`) is told of every
request's start and end, here, around the middleware, whichever placement runs the request.
Without one, the cost is one attribute read per request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..protocol.base import Notification, Request, Result
from ..protocol.errors import MethodNotFound
from ..runtime.context import RequestContext
from ..runtime.session import Session
from .handler_context import HandlerContext, Route
from .input_rounds import InputRequired
from .logging_bridge import current_context
from .middleware import Call, MiddlewareChains, notify_through

__all__ = ["RequestDispatch", "RequestObserver"]


class RequestObserver(Protocol):
    """Told of every request a server answers, synchronously: it must not block or raise."""

    def started(self, request: Request[Any]) -> float:
        """``request`` starts; what is returned comes back to :meth:`answered` or
        :meth:`failed` (a start time, say)."""
        ...

    def answered(self, request: Request[Any], began: float, result: Result) -> None:
        """``request`` was answered with ``result``."""
        ...

    def failed(self, request: Request[Any], began: float, error: BaseException) -> None:
        """``request``'s handler raised ``error`` (a cancellation among them)."""
        ...


class RequestDispatch:
    """Answers one server's requests by their ``routes`` (see the module docstring).

    ``new_context`` makes the context of a request; ``at_once`` says, for the request types
    that may be answered where they were decoded, whether one is (see :mod:`.eager`).
    """

    __slots__ = ("_at_once", "_new_context", "middleware", "observer", "routes")

    def __init__(
        self,
        routes: dict[type[Request[Any]], Route],
        at_once: dict[type[Request[Any]], Callable[[Any], bool]],
        new_context: Callable[[RequestContext], HandlerContext],
    ) -> None:
        #: The handler of each request type.
        self.routes = routes
        self._at_once = at_once
        self._new_context = new_context
        #: The middleware installed, and the chains made of them.
        self.middleware = MiddlewareChains(self._end_of_chain)
        #: Told of every request's start and end (``None``: no one is).
        self.observer: RequestObserver | None = None

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        """Answer one request (in the request's own task, or where it was decoded)."""
        ctx = self._new_context(rctx)
        token = current_context.set(ctx)
        observer = self.observer
        began = 0.0 if observer is None else observer.started(request)
        try:
            chain = self.middleware.request
            if chain is None:
                result = await self._routed(ctx, request)
            else:
                answer = await chain(Call(request, rctx.session, ctx, rctx.request_id))
                if not isinstance(answer, Result):
                    raise TypeError(
                        f"The middleware of {request.METHOD} returned {answer!r}, not a result:"
                        " return what call_next returns, or a result of your own"
                    )
                result = answer
        except BaseException as exc:
            if observer is not None:
                observer.failed(request, began, exc)
            raise
        finally:
            current_context.reset(token)
        if observer is not None:
            observer.answered(request, began, result)
        return result

    async def _end_of_chain(self, call: Call) -> Result:
        """The end of a request's middleware chain: its route, with the params the chain
        passed on (which the handler then sees as ``ctx.request``)."""
        ctx = call.context
        assert ctx is not None
        request = call.params
        assert isinstance(request, Request)
        if request is not ctx.request:
            ctx._runtime.request = request
        return await self._routed(ctx, request)

    async def _routed(self, ctx: HandlerContext, request: Request[Any]) -> Result:
        route = self.routes.get(type(request))
        if route is None:
            raise MethodNotFound(f"Method not found: {request.METHOD}")
        try:
            return await route(ctx, request)
        except InputRequired as asked:
            return ctx.input_required(asked)

    def handle_notification(
        self, session: Session, notification: Notification
    ) -> Awaitable[None] | None:
        """A session's incoming notification: through the middleware when there is some
        (``None``: nothing to run)."""
        chain = self.middleware.notification
        if chain is None:
            return None
        return notify_through(chain, Call(notification, session))

    def answers_at_once(self, request: Request[Any]) -> bool:
        """Whether ``request`` is answered where it was decoded (see :mod:`.eager`): never
        through middleware, which may wait."""
        check = self._at_once.get(type(request))
        return check is not None and self.middleware.request is None and check(request)
