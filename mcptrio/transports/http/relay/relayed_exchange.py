"""The owner's side of a forwarded exchange: an HTTP request and responder whose other end is
another worker, so that the endpoint serves a forwarded request exactly as a local one.

The :class:`RelayedResponder` keeps the rules of :mod:`..engine.exchange` as a front end would:
one response, head then chunks then end; once the client has gone (the forwarding worker says
so, or stops reading), ``send_chunk`` raises ``trio.BrokenResourceError`` and the handler's
cancel scope is cancelled, after the ``on_client_gone`` callbacks ran.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import trio

from ....stores.session_directory import DirectoryUnavailable
from ..engine.exchange import BodyTooLarge, Headers
from .messages import Chunk, End, Evictable, Head, RelayMessage, Request

__all__ = ["RelayedRequest", "RelayedResponder"]

#: Messages waiting in the forwarding worker's mailbox past which it counts as not reading.
MAX_UNREAD: Final = 4096


class RelayedRequest:
    """A forwarded :class:`~.messages.Request` as an ``HttpRequest``: its fields as they came."""

    __slots__ = ("_body", "client", "headers", "method", "path", "query_string", "scheme")

    def __init__(self, message: Request) -> None:
        self.method = message.method
        self.path = message.path
        self.query_string = message.query_string
        self.headers: Headers = message.headers
        self.client = message.client
        self.scheme = message.scheme
        self._body = message.body

    async def read_body(self, limit: int) -> bytes:
        if len(self._body) > limit:
            raise BodyTooLarge
        return self._body


@dataclass(eq=False)
class RelayedResponder:
    """Sends the response to a forwarded request back to the worker that forwarded it.

    ``post(message)`` delivers a message to that worker and returns how many of its messages
    are unread there; ``peer_alive()`` says whether that worker is still in the directory.
    """

    exchange: str
    post: Callable[[RelayMessage], Awaitable[int]]
    peer_alive: Callable[[], Awaitable[bool]]
    scope: trio.CancelScope = field(default_factory=trio.CancelScope, init=False)
    responded: bool = field(default=False, init=False)
    streaming: bool = field(default=False, init=False)
    gone: bool = field(default=False, init=False)
    _on_gone: list[Callable[[], None]] = field(default_factory=list, init=False)

    async def send_response(self, status: int, headers: Headers, body: bytes = b"") -> None:
        self._check_once()
        await self._send(Head(self.exchange, status, list(headers), body, streamed=False))

    async def start_stream(self, status: int, headers: Headers) -> None:
        self._check_once()
        self.streaming = True
        await self._send(Head(self.exchange, status, list(headers), b"", streamed=True))

    async def send_chunk(self, *parts: bytes) -> None:
        if not self.streaming:
            raise RuntimeError("send_chunk before start_stream")
        # A relayed chunk is one message to the worker that owns the connection.
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        await self._send(Chunk(self.exchange, data), check_peer=True)

    async def end_stream(self) -> None:
        if not self.streaming:
            raise RuntimeError("end_stream before start_stream")
        await self._send(End(self.exchange, ok=True))
        self.streaming = False

    async def abort(self) -> None:
        """End the streamed body as failed: the forwarder drops the client's connection."""
        self.streaming = False
        await self._send(End(self.exchange, ok=False))

    def on_client_gone(self, callback: Callable[[], None]) -> None:
        if self.gone:
            callback()
        else:
            self._on_gone.append(callback)

    def allow_eviction(self) -> None:
        # Told to the forwarding worker, whose front end holds the connection slot; sent with
        # the next message rather than on its own.
        self._evictable = True

    def watch_for_departure(self) -> None:
        """The forwarding worker's front end watches the client's connection; nothing here."""

    def client_gone(self) -> None:
        """The client left: tell the handler, then cancel it (as a front end does)."""
        if self.gone:
            return
        self.gone = True
        callbacks, self._on_gone = self._on_gone, []
        for callback in callbacks:
            callback()
        self.scope.cancel()

    _evictable = False

    def _check_once(self) -> None:
        if self.responded:
            raise RuntimeError("a response was already sent")
        self.responded = True

    async def _send(self, message: RelayMessage, *, check_peer: bool = False) -> None:
        if self.gone:
            raise trio.BrokenResourceError("the client has gone")
        try:
            # A stream to a worker that died would otherwise be written into its mailbox
            # until the mailbox expires (the liveness answer is cached: cheap per chunk).
            if check_peer and not await self.peer_alive():
                self.client_gone()
                raise trio.BrokenResourceError("the forwarding worker has gone")
            if self._evictable:
                self._evictable = False
                await self.post(Evictable(self.exchange))
            unread = await self.post(message)
        except DirectoryUnavailable as exc:
            self.client_gone()
            raise trio.BrokenResourceError(f"cannot reach the forwarding worker: {exc}") from exc
        if unread > MAX_UNREAD:
            self.client_gone()
            raise trio.BrokenResourceError("the forwarding worker is not reading")
