"""The seam between an HTTP front end and the MCP endpoint logic.

mcptrio serves HTTP through two front ends (the built-in HTTP/1.1 server on trio, and an ASGI
application for Hypercorn), and the MCP endpoint logic (Streamable HTTP, the legacy HTTP+SSE
endpoints, WebSocket) must exist once. This module is the whole contract between them; it is
deliberately smaller than ASGI, because the built-in front end's fast path must not build and
pick apart a dict per event.

A front end turns each HTTP request into an :class:`HttpRequest` and an :class:`HttpResponder`
and awaits ``app.handle_http(request, responder)``; a WebSocket upgrade becomes a
:class:`WebSocketPeer` handed to ``app.handle_websocket(request, peer)``.

Rules both front ends keep:

- Header names are lower-case ``bytes``; values are ``bytes`` as received.
- ``read_body(limit)`` returns the whole body, or raises :class:`BodyTooLarge` as soon as more
  than ``limit`` bytes have arrived (nothing beyond that is buffered).
- The app sends exactly one response: either ``send_response`` (whole body at once), or
  ``start_stream`` then any number of ``send_chunk`` then ``end_stream``.
- When the client goes away while a response is streaming, ``send_chunk`` raises
  ``trio.BrokenResourceError`` *and* the front end cancels the handler's task at its next
  checkpoint (so an idle SSE stream notices a disconnect without writing). The handler's
  cleanup must therefore not assume it can still write.
- If the handler returns without responding, the front end answers 500; if it raises, the
  front end logs it and answers 500 when nothing was sent yet, else drops the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import trio

__all__ = [
    "BodyTooLarge",
    "HeaderScan",
    "Headers",
    "HttpApp",
    "HttpRequest",
    "HttpResponder",
    "WebSocketClosed",
    "WebSocketPeer",
    "header",
]

Headers = Sequence[tuple[bytes, bytes]]


class BodyTooLarge(Exception):
    """The request body is over the limit the handler asked for."""


class WebSocketClosed(Exception):
    """The WebSocket peer closed (or the connection broke)."""


def header(headers: Headers, name: bytes) -> bytes | None:
    """The first value of header ``name`` (lower-case), or ``None``."""
    for key, value in headers:
        if key == name:
            return value
    return None


class HeaderScan(Mapping[bytes, bytes]):
    """Headers by (lower-case) name, each the first value, found by :func:`header` when asked:
    a view of the list, with no table of its own (what a long-lived request, such as a GET
    stream, should hold instead of a dict of its headers)."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Headers) -> None:
        self._headers = headers

    def __getitem__(self, name: bytes) -> bytes:
        value = header(self._headers, name)
        if value is None:
            raise KeyError(name)
        return value

    def get(self, name: bytes, default: object = None) -> Any:
        value = header(self._headers, name)
        return default if value is None else value

    def __iter__(self) -> Iterator[bytes]:
        seen: set[bytes] = set()
        for name, _ in self._headers:
            if name not in seen:
                seen.add(name)
                yield name

    def __len__(self) -> int:
        return len({name for name, _ in self._headers})


class HttpRequest(Protocol):
    """One HTTP request as the front end received it."""

    @property
    def method(self) -> str:
        """Upper-case method, e.g. ``"POST"``."""
        ...

    @property
    def path(self) -> str:
        """The percent-decoded path, without the query string (``/mcp``)."""
        ...

    @property
    def query_string(self) -> bytes:
        """The raw query string, without ``?``."""
        ...

    @property
    def headers(self) -> Headers:
        """All headers in order, names lower-case."""
        ...

    @property
    def client(self) -> tuple[str, int] | None:
        """The peer's address, when known."""
        ...

    @property
    def scheme(self) -> str:
        """``"http"`` or ``"https"``."""
        ...

    async def read_body(self, limit: int) -> bytes:
        """The whole body; :class:`BodyTooLarge` past ``limit`` bytes."""
        ...


class HttpResponder(Protocol):
    """Sends the one response to an :class:`HttpRequest`."""

    async def send_response(self, status: int, headers: Headers, body: bytes = b"") -> None:
        """Send a complete response (the front end adds ``content-length``)."""
        ...

    async def start_stream(self, status: int, headers: Headers) -> None:
        """Start a streamed response (chunked on HTTP/1.1); flushes the head at once."""
        ...

    async def send_chunk(self, *parts: bytes) -> None:
        """Send part of a streamed body, ``parts`` one after the other, and flush it. Parts are
        written as they are where the front end can (a large message is not copied to be
        framed)."""
        ...

    async def end_stream(self) -> None:
        """Finish the streamed body."""
        ...

    def on_client_gone(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (once, synchronously) if the front end learns that the client
        went away while the streamed response is open, before it cancels the handler.

        Cancelling the handler's task is not always enough: a handler may run shielded (an MCP
        request answered in the POST's task is), and must be told by other means.
        """
        ...

    def allow_eviction(self) -> None:
        """The open stream may be cut, with its connection, when the front end needs the
        connection's slot for another client (the client can take it up again: a Streamable
        HTTP GET stream, a resumable ``tasks/result`` stream, a stateless-era listen stream).
        Front ends without such a policy ignore this."""
        ...

    def watch_for_departure(self) -> None:
        """Start watching the connection for the client leaving before any response has
        started (the request body is read): its answer is slow to come, and the front end
        should not hold the connection's slot for a client that has gone. A client that leaves
        then is handled as one that leaves an open stream (``on_client_gone``, the slot given
        back, the handler's task cancelled). Front ends that hold no slots ignore this."""
        ...


class WebSocketPeer(Protocol):
    """An upgraded WebSocket connection, not yet accepted."""

    @property
    def subprotocols(self) -> Sequence[str]:
        """The subprotocols the client offered."""
        ...

    @property
    def stopping(self) -> trio.Event:
        """Set when the server stops gracefully: the app finishes what the socket has in
        flight, then closes it with 1001 (going away)."""
        ...

    async def accept(self, subprotocol: str | None, headers: Headers = ()) -> None:
        """Complete the handshake."""
        ...

    async def reject(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        """Refuse the upgrade with an HTTP status, a plain-text body and ``headers`` (before
        ``accept``)."""
        ...

    async def receive_message(self, limit: int) -> str | bytes:
        """The next whole message; :class:`WebSocketClosed` when the peer closes.

        A message over ``limit`` bytes closes the connection with 1009 and raises
        :class:`WebSocketClosed`.
        """
        ...

    async def send_text(self, data: str) -> None:
        """Send one text message; :class:`WebSocketClosed` if the peer is gone."""
        ...

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection; idempotent."""
        ...


class HttpApp(Protocol):
    """What a front end serves: the MCP endpoint family (or a router over several)."""

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None: ...

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None: ...
