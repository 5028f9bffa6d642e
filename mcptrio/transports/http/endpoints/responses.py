"""Pre-built response headers and the error answers the MCP HTTP endpoints give.

Header lists are built once: the JSON answer to a tool call is one ``send_response`` with a
list made here and, at most, the session id appended.
"""

from __future__ import annotations

from msgspec import UNSET

from ....protocol import codec
from ....protocol.errors import INVALID_REQUEST, McpError
from ..engine.exchange import Headers, HttpResponder

__all__ = [
    "JSON_HEADERS",
    "SSE_HEADERS",
    "error_body",
    "send_error",
    "with_session_id",
]

JSON_HEADERS: Headers = ((b"content-type", b"application/json"),)
SSE_HEADERS: Headers = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)
SESSION_HEADER = b"mcp-session-id"


def with_session_id(headers: Headers, session_id: str) -> list[tuple[bytes, bytes]]:
    return [*headers, (SESSION_HEADER, session_id.encode("ascii"))]


def error_body(code: int, message: str) -> bytes:
    """A JSON-RPC error response without an ``id``, as the spec allows for HTTP errors."""
    return codec.encode_error(UNSET, McpError(message, code=code))


async def send_error(
    responder: HttpResponder,
    status: int,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    headers: Headers = (),
) -> None:
    """Answer ``status`` with a JSON-RPC error body (no id) explaining ``message``."""
    await responder.send_response(status, [*JSON_HEADERS, *headers], error_body(code, message))
