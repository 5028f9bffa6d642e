"""What the unit tests of tools, prompts, resources and completion give a handler: a real
:class:`~mcptrio.server.context.Context` outside any session run, and values as the wire
carries them."""

from __future__ import annotations

from typing import Any

import msgspec
import trio

import mcptrio
from mcptrio.protocol.base import Request
from mcptrio.protocol.codec import encode
from mcptrio.runtime.context import RequestContext
from mcptrio.runtime.session import Session
from mcptrio.server.context import Context
from mcptrio.transports.memory import memory_transport_pair

__all__ = ["LATEST", "as_json", "context_for"]

LATEST = "2025-11-25"


def as_json(value: Any) -> Any:
    """``value`` encoded as the wire carries it, and decoded back to plain JSON values."""
    return msgspec.json.decode(encode(value))


def context_for(request: Request[Any], revision: str = LATEST, request_id: int = 1) -> Context:
    """A real Context for ``request`` over a session whose handshake negotiated ``revision``."""
    server = mcptrio.Server("unit")
    connection = server.connection()
    connection.start_initialized(revision)
    _, server_end = memory_transport_pair()
    session = Session(connection, server_end)
    return Context(RequestContext(session, request_id, request, trio.CancelScope()), server)
