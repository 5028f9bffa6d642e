"""Browser clients on another origin: CORS for the origins the endpoint lets in.

A page (an MCP host in a browser, an MCP Apps host) that talks to the endpoint from another
origin needs its requests allowed by CORS: a preflight ``OPTIONS`` before a POST with a JSON body
or MCP's own headers, and ``Access-Control-Allow-Origin`` on every answer it reads, with
``Mcp-Session-Id`` and ``WWW-Authenticate`` exposed to its script. CORS does not decide *who*
may call: the endpoint's Origin check does (:class:`~.security.OriginHostCheck`, the loopback
origins and those an operator allows), before CORS is considered. So:

- an ``Origin`` the check lets in gets the CORS headers on every answer, errors and the 401
  challenge included (a script must read them to log in);
- a preflight from such an origin is answered 204 with the methods and the request headers it
  may use: those of the MCP transport (``Content-Type``, ``Accept``, ``Authorization``,
  ``DPoP``, ``Last-Event-ID``, and every ``Mcp-*`` header, the stateless era's routing
  headers among them); a preflight from any other origin gets the check's 403;
- a request without ``Origin`` (not from a browser) is answered as always, with nothing added.

Credentials travel in ``Authorization``, never in cookies, so ``Access-Control-Allow-Credentials``
is never sent, and the allowed origin is named, never ``*``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..engine.exchange import Headers, HttpRequest, HttpResponder, header

__all__ = ["CorsResponder", "allowed_request_headers", "preflight_headers"]

#: How long a browser may keep a preflight's answer, in seconds.
PREFLIGHT_MAX_AGE: Final = b"600"
_METHODS: Final = b"GET, POST, DELETE, OPTIONS"
_REQUEST_HEADERS: Final = frozenset(
    {b"content-type", b"accept", b"authorization", b"dpop", b"last-event-id"}
)
_EXPOSED: Final = (
    b"access-control-expose-headers",
    b"Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce, Retry-After",
)


def allowed_request_headers(requested: bytes | None) -> bytes:
    """The headers of an ``Access-Control-Request-Headers`` list a page may send: the MCP
    transport's; others are left out (the browser then refuses the request itself)."""
    if not requested:
        return b""
    names = (name.strip().lower() for name in requested.split(b","))
    return b", ".join(
        name for name in names if name in _REQUEST_HEADERS or name.startswith(b"mcp-")
    )


def preflight_headers(request: HttpRequest, origin: bytes) -> Headers:
    """The answer to a preflight from ``origin`` (one the Origin check lets in)."""
    return [
        (b"access-control-allow-origin", origin),
        (b"access-control-allow-methods", _METHODS),
        (
            b"access-control-allow-headers",
            allowed_request_headers(header(request.headers, b"access-control-request-headers")),
        ),
        (b"access-control-max-age", PREFLIGHT_MAX_AGE),
        (b"vary", b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
    ]


class CorsResponder:
    """An :class:`~.engine.exchange.HttpResponder` that adds the CORS headers for ``origin``
    (one the Origin check lets in) to the response it starts; the rest goes to ``inner``."""

    __slots__ = ("_added", "_inner")

    def __init__(self, inner: HttpResponder, origin: bytes) -> None:
        self._inner = inner
        self._added: Headers = [
            (b"access-control-allow-origin", origin),
            (b"vary", b"Origin"),
            _EXPOSED,
        ]

    async def send_response(self, status: int, headers: Headers, body: bytes = b"") -> None:
        await self._inner.send_response(status, [*headers, *self._added], body)

    async def start_stream(self, status: int, headers: Headers) -> None:
        await self._inner.start_stream(status, [*headers, *self._added])

    async def send_chunk(self, *parts: bytes) -> None:
        await self._inner.send_chunk(*parts)

    async def end_stream(self) -> None:
        await self._inner.end_stream()

    def on_client_gone(self, callback: Callable[[], None]) -> None:
        self._inner.on_client_gone(callback)

    def allow_eviction(self) -> None:
        self._inner.allow_eviction()

    def watch_for_departure(self) -> None:
        self._inner.watch_for_departure()
