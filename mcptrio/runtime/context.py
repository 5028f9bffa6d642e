"""The context a request handler runs in.

A :class:`RequestContext` is made for each incoming request. It names the request and the
session, and lets the handler talk back to the peer *about this request*: progress for the
caller's token, notifications and requests that the HTTP transports route to this request's
stream. ``cancel_scope`` is the scope ``notifications/cancelled`` cancels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import trio

from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.types import ProgressNotification

if TYPE_CHECKING:
    from .outgoing import RequestOptions
    from .session import Session

__all__ = ["RequestContext"]

ResultT = TypeVar("ResultT", bound=Result)


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
