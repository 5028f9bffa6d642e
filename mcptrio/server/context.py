"""The :class:`Context` a server handler asks for by annotating a parameter with it.

Any tool, resource, prompt or completion function may declare a parameter annotated
``Context``; the server passes the context of the request being answered (it never appears in
the input schema). Through it a handler reaches the request's id, session and cancel scope, and
talks back to the client about *this* request: progress, log messages, sampling, elicitation and
roots. Each client-side feature is refused with :class:`CapabilityNotNegotiated` before anything
is sent when the client did not declare the capability.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from ..protocol.base import Request, RequestId
from ..protocol.types import ClientCapabilities, Implementation
from ..runtime.context import RequestContext
from ..runtime.session import Session

if TYPE_CHECKING:
    from .server import Server

__all__ = ["Context"]


class Context:
    """The request being answered, and what its handler can do for it."""

    __slots__ = ("request_context", "server")

    def __init__(self, request_context: RequestContext, server: Server) -> None:
        self.request_context = request_context
        self.server = server

    @property
    def request_id(self) -> RequestId:
        return self.request_context.request_id

    @property
    def request(self) -> Request[Any]:
        return self.request_context.request

    @property
    def session(self) -> Session:
        return self.request_context.session

    @property
    def cancel_scope(self) -> trio.CancelScope:
        """The scope ``notifications/cancelled`` (or the session ending) cancels."""
        return self.request_context.cancel_scope

    @property
    def revision(self) -> str:
        """The protocol revision negotiated for this session."""
        return self.session.connection.revision or ""

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        caps = self.session.connection.peer_capabilities
        return caps if isinstance(caps, ClientCapabilities) else None

    @property
    def client_info(self) -> Implementation | None:
        return self.session.connection.peer_info

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress for the caller's token; a no-op when the caller asked for none."""
        await self.request_context.report_progress(progress, total, message)
