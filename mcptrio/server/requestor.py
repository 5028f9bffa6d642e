"""Who made a request, as far as a server can tell clients apart: :func:`requestor_key`."""

from __future__ import annotations

from ..transports.http.endpoints.security import current_client_host
from .handler_context import HandlerContext

__all__ = ["requestor_key"]


def requestor_key(ctx: HandlerContext) -> str:
    """``principal:<subject>`` when the server authenticates; else ``address:<host>`` when the
    transport knows the client's address (HTTP, WebSocket); else ``bearer``: the one peer of a
    session (stdio, in memory), or whoever holds what it was given (a task's id)."""
    subject = getattr(ctx.principal, "subject", None)
    if isinstance(subject, str):
        return f"principal:{subject}"
    host = current_client_host.get()
    return f"address:{host}" if host is not None else "bearer"
