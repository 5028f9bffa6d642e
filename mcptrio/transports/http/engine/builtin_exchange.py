"""One request/response exchange on a built-in server connection, and its disconnect watcher.

:class:`BuiltinRequest` and :class:`BuiltinResponder` are the :class:`~.exchange.HttpRequest`
and :class:`~.exchange.HttpResponder` the built-in server (:mod:`.builtin_server`) hands to the
app for each request. They hold no I/O of their own: every read and write goes through the
connection, whose cancel scope carries the deadlines.

While a streamed response is open the handler may sit idle (an SSE stream) and still has to
learn that the client went away: that is the :class:`DisconnectWatcher`'s job.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote_to_bytes

import trio

from .exchange import BodyTooLarge, Headers
from .parser import CHUNK_END, NeedMore, RequestHead, chunk_head, response_head

if TYPE_CHECKING:
    from .builtin_connection import BuiltinConnection

__all__ = ["BadRequestBody", "BuiltinRequest", "BuiltinResponder", "DisconnectWatcher"]

_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
TEXT_PLAIN = [(b"content-type", b"text/plain; charset=utf-8")]
# BuiltinResponder.state
NOT_STARTED, STREAMING, DONE = 0, 1, 2


class BadRequestBody(Exception):
    """The client broke the request body rules; answer ``status`` and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BuiltinRequest:
    """:class:`~.exchange.HttpRequest` of the built-in server.

    ``method``, ``path``, ``headers`` and ``client`` are plain attributes, set once from the
    head and the connection: an app reads each several times per request, and neither the
    head nor the connection's peer changes while the request lives.
    """

    __slots__ = (
        "_body",
        "_connection",
        "_continue_sent",
        "_query",
        "_state",
        "client",
        "head",
        "headers",
        "keep_alive",
        "method",
        "path",
    )

    def __init__(self, connection: BuiltinConnection, head: RequestHead) -> None:
        self._connection = connection
        self.head = head
        self.keep_alive = head.keep_alive
        #: Upper-case method, e.g. ``"POST"``.
        self.method: str = head.method.decode("ascii")
        raw, _, self._query = head.target.partition(b"?")
        if b"%" in raw:
            raw = unquote_to_bytes(raw)
        #: The percent-decoded path, without the query string.
        self.path: str = raw.decode("utf-8", "surrogateescape")
        #: All headers in order, names lower-case.
        self.headers: Headers = head.headers
        #: The peer's address, when known.
        self.client: tuple[str, int] | None = connection.client
        # _state: 0 unread, 1 read, 2 over a limit (the rest is unread)
        self._state = 0
        self._body = b""
        self._continue_sent = False

    @property
    def query_string(self) -> bytes:
        return self._query

    @property
    def scheme(self) -> str:
        return self._connection.scheme

    def _too_large(self, limit: int) -> BodyTooLarge:
        # What is left of the body stays unread: discard_rest decides whether it can go.
        self._state = 2
        return BodyTooLarge(f"the request body is over {limit} bytes")

    async def read_body(self, limit: int) -> bytes:
        if self._state == 1:
            return self._body
        if self._state == 2:
            raise self._too_large(limit)
        connection = self._connection
        head = self.head
        if connection.message_complete:
            self._state = 1
            return b""
        if head.content_length is not None and head.content_length > limit:
            raise self._too_large(limit)
        if head.expect_continue and not self._continue_sent:
            self._continue_sent = True
            await connection.send(_CONTINUE)
        parts: list[bytes] = []
        size = 0
        while True:
            data = connection.body_event_now()
            if isinstance(data, NeedMore):
                data = await connection.next_body_event()
            if data is None:
                break
            size += len(data)
            if size > limit:
                raise self._too_large(limit)
            parts.append(data)
        self._state = 1
        self._body = parts[0] if len(parts) == 1 else b"".join(parts)
        if connection.streaming:
            connection.watcher.start()
        return self._body

    def can_keep_alive(self) -> bool:
        """Whether the connection may carry another request after this response."""
        if not self.keep_alive:
            return False
        slots = self._connection.slots
        if slots is not None and slots.draining:
            return False
        if self._connection.message_complete:
            return True
        if self.head.expect_continue and not self._continue_sent:
            # The client may or may not send the body it announced: no way to tell its end.
            return False
        length = self.head.content_length
        return length is None or length <= self._connection.limits.discard_body_limit

    async def discard_rest(self) -> bool:
        """Read and drop what the app left of the body; whether the connection survives."""
        connection = self._connection
        if connection.message_complete:
            return True
        remaining = connection.limits.discard_body_limit
        try:
            while (data := await connection.next_body_event()) is not None:
                remaining -= len(data)
                if remaining < 0:
                    return False
        except (BadRequestBody, trio.BrokenResourceError):
            return False
        return True


class BuiltinResponder:
    """:class:`~.exchange.HttpResponder` of the built-in server."""

    __slots__ = ("_connection", "_request", "state")

    def __init__(self, connection: BuiltinConnection, request: BuiltinRequest) -> None:
        self._connection = connection
        self._request = request
        self.state = NOT_STARTED

    async def send_response(self, status: int, headers: Headers, body: bytes = b"") -> None:
        if self.state != NOT_STARTED:
            raise RuntimeError("a response was already sent")
        self.state = DONE
        self._connection.responding = True
        request = self._request
        keep_alive = request.keep_alive = request.can_keep_alive()
        head = response_head(status, headers, content_length=len(body), keep_alive=keep_alive)
        await self._connection.send(head, body if request.head.method != b"HEAD" else b"")

    async def send_quietly(self, status: int, message: bytes) -> None:
        """Send an error response the front end generated; a gone client is not an error."""
        with contextlib.suppress(trio.BrokenResourceError):
            await self.send_response(status, TEXT_PLAIN, message)

    async def start_stream(self, status: int, headers: Headers) -> None:
        if self.state != NOT_STARTED:
            raise RuntimeError("a response was already sent")
        self.state = STREAMING
        request = self._request
        connection = self._connection
        connection.responding = True
        chunked = request.head.http_version == b"1.1"
        keep_alive = request.keep_alive = chunked and request.can_keep_alive()
        if chunked:
            head = response_head(status, headers, content_length=None, keep_alive=keep_alive)
        else:
            # HTTP/1.0 has no chunked coding: the body ends where the connection does.
            head = response_head(status, headers, content_length=0, keep_alive=False)
            head = head.replace(b"content-length: 0\r\n", b"", 1)
        connection.streaming = True
        await connection.send(head)
        connection.watcher.start()

    async def send_chunk(self, *parts: bytes) -> None:
        if self.state != STREAMING:
            raise RuntimeError("no streamed response is open")
        connection = self._connection
        if connection.peer_gone:
            raise trio.BrokenResourceError("the client went away")
        size = sum(map(len, parts))
        if not size or self._request.head.method == b"HEAD":
            return
        if self._request.head.http_version == b"1.1":
            await connection.send(chunk_head(size), *parts, CHUNK_END)
        else:
            await connection.send(*parts)

    def on_client_gone(self, callback: Callable[[], None]) -> None:
        self._connection.on_client_gone = callback

    def watch_for_departure(self) -> None:
        if self.state == NOT_STARTED:
            self._connection.watcher.start()

    def allow_eviction(self) -> None:
        connection = self._connection
        if self.state == STREAMING and connection.slots is not None:
            connection.slots.waiting(connection, connection.client_host)

    async def end_stream(self) -> None:
        if self.state != STREAMING:
            raise RuntimeError("no streamed response is open")
        self.state = DONE
        self._connection.streaming = False
        if self._request.head.http_version == b"1.1" and self._request.head.method != b"HEAD":
            await self._connection.send(b"0\r\n\r\n")


class DisconnectWatcher:
    """Reads a connection's socket while a streamed response is open.

    It watches only while a stream is open and only once the request body has been fully
    received (so that it never competes with ``read_body`` for the socket): from the server's
    :class:`~.watch_hub.WatchHub` for a plain TCP connection where there is one, else as a task
    in the connection's nursery. EOF cancels the connection's scope (ending the handler, then
    the connection); anything else is a pipelined next request, fed to the parser and kept
    there, up to ``pipeline_buffer_limit`` bytes beyond which the watcher stops reading.
    :meth:`stop` ends the watching (cancelling the task and waiting for it), so that it and the
    connection never read at once.

    While it watches, the connection's parser lets go of what it would make again
    (:meth:`~.parser.RequestParser.shrink`): the request's end has been taken, so it is between
    two requests, and a stream may stay open for hours. Pipelined bytes make it again.
    """

    __slots__ = ("_buffered", "_connection", "_hubbed", "_running", "_scope", "_stopper")

    def __init__(self, connection: BuiltinConnection) -> None:
        self._connection = connection
        self._scope: trio.CancelScope | None = None
        # Whether the watcher task still runs, and the task parked in stop() until it ends
        # (no Event: an open SSE stream keeps its watcher for its whole life).
        self._running = False
        self._stopper: trio.lowlevel.Task | None = None
        # Watching from the hub: since start() (until stop()), whether the hub still delivers
        # (not after EOF or a full pipeline buffer), and the bytes taken so far.
        self._hubbed = False
        self._buffered = 0

    def start(self) -> None:
        """Start watching, unless it already is or the connection cannot be read now."""
        connection = self._connection
        if (
            self._scope is not None
            or self._hubbed
            or not connection.message_complete
            or not connection.readable
        ):
            return
        hub, fd = connection.hub, connection.fd
        if hub is not None and fd is not None and hub.add(fd, self):
            self._hubbed = True
            self._buffered = 0
            connection.parser.shrink()
            return
        if connection.nursery is None:
            return
        connection.parser.shrink()
        self._scope = trio.CancelScope()
        self._running = True
        connection.nursery.start_soon(self._watch, self._scope)

    @property
    def watching(self) -> bool:
        """Whether it watches now (from the hub or as a task): only then has :meth:`stop`
        anything to do; on a watcher that does not, it returns at once, without a checkpoint."""
        return self._hubbed or self._scope is not None

    async def stop(self) -> None:
        """Stop watching; returns once the watcher no longer reads."""
        if self._hubbed:
            self._hubbed = False
            self._unhub()
            return
        if self._scope is None:
            return
        self._scope.cancel()
        # It is cancelled: it finishes at once, and must have before anyone reads again.
        if self._running:
            self._stopper = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(_not_abortable)
        else:
            await trio.lowlevel.cancel_shielded_checkpoint()
        self._scope = None

    def _ended(self) -> None:
        self._running = False
        stopper = self._stopper
        if stopper is not None:
            self._stopper = None
            trio.lowlevel.reschedule(stopper)

    def _unhub(self) -> None:
        connection = self._connection
        if connection.hub is not None and connection.fd is not None:
            connection.hub.remove(connection.fd, self)

    def readable_now(self) -> None:
        """From the hub: the socket is readable; as :meth:`_watch` does with what it reads."""
        connection = self._connection
        data = connection.read_now()
        if data is None:
            return
        if not data:
            self._unhub()
            self._client_gone()
            return
        self._buffered += len(data)
        connection.parser.feed(data)
        if self._buffered >= connection.limits.pipeline_buffer_limit:
            self._unhub()

    def _client_gone(self) -> None:
        connection = self._connection
        # Before anything else: the slot must not wait for a shielded handler.
        connection.release_slot()
        gone, connection.on_client_gone = connection.on_client_gone, None
        if gone is not None:
            gone()
        connection.scope.cancel()

    async def _watch(self, scope: trio.CancelScope) -> None:
        connection = self._connection
        try:
            with scope:
                buffered = 0
                while buffered < connection.limits.pipeline_buffer_limit:
                    data = await connection.receive_some()
                    if not data:
                        self._client_gone()
                        return
                    buffered += len(data)
                    connection.parser.feed(data)
                await trio.sleep_forever()
        finally:
            self._ended()


def _not_abortable(_: object) -> trio.lowlevel.Abort:
    # stop() waits for a watcher that is cancelled already: shielded, as it must be.
    return trio.lowlevel.Abort.FAILED
