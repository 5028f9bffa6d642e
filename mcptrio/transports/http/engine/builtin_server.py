"""The built-in HTTP/1.1 front end: serves an :class:`~.exchange.HttpApp` on trio sockets.

Theory of operation
-------------------
One task per connection runs :meth:`BuiltinConnection.run`: read a request head, call the app in
the same task, finish the request body, loop. A plain response costs no task and one
``send_all`` (head and body joined). Pipelined requests are therefore answered in order by
construction.

A streamed response is different: while it is open the handler may sit idle (an SSE stream) and
still has to learn that the client went away. So a
:class:`~.builtin_exchange.DisconnectWatcher` reads the socket in the connection's nursery while
a stream is open, once the request body has been fully received; EOF cancels the connection's
scope (ending the handler, then the connection). When the stream ends the watcher is cancelled
and awaited before the connection reads again, so the two never read at once. The request and
responder the app gets (:mod:`.builtin_exchange`) do their I/O through the connection.

No request pays for a cancel scope of its own: the whole request loop runs in one per
connection, whose deadline is set around each wait on the client (reading a head, a piece of
body, a write) and reset after it; when it fires, what the loop was waiting for decides whether
the client still gets a 408.

Limits (:class:`ServerLimits`) defend against slow or hostile clients: a request head must
arrive within ``header_timeout``; an idle keep-alive connection is closed after
``keep_alive_timeout``; heads over ``max_head_size`` get 431; each wait for body bytes and each
write has its own deadline; a body the app did not read is discarded up to
``discard_body_limit``, past which the connection is closed. At ``max_connections`` the server
stops accepting: further clients wait in the kernel's listen backlog until a connection ends.

When the server closes a connection it half-closes first and drains what the client still sends
for a moment ("lingering close"), so that a final response (a 413, a 400) is not destroyed by a
TCP reset caused by unread request bytes.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import trio

from .builtin_exchange import (
    NOT_STARTED,
    STREAMING,
    TEXT_PLAIN,
    BadRequestBody,
    BuiltinRequest,
    BuiltinResponder,
    DisconnectWatcher,
)
from .builtin_websocket import serve_websocket_upgrade
from .exchange import BodyTooLarge, HttpApp
from .h11_parser import H11RequestParser
from .parser import (
    END_OF_MESSAGE,
    PEER_CLOSED,
    HttpParseError,
    RequestHead,
    RequestParser,
    response_head,
)

__all__ = ["ServerLimits", "serve_builtin"]

logger = logging.getLogger("mcptrio.transports.http")

ParserName = Literal["auto", "h11", "httptools"]

_RECEIVE_SIZE = 65536
_ACCEPT_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
# What the connection was waiting for when its scope's deadline fired.
_IDLE, _HEAD, _BODY, _WRITE = range(4)


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Limits of the built-in server; every wait on a client has a deadline."""

    #: Connections served at once; at the limit the server stops accepting.
    max_connections: int = 1000
    #: Largest request line plus headers, in bytes (over it: 431).
    max_head_size: int = 65536
    #: Seconds a client has to send a whole request head once it has started it (or connected).
    header_timeout: float = 10.0
    #: Seconds an idle keep-alive connection waits for its next request.
    keep_alive_timeout: float = 5.0
    #: Seconds to wait for each piece of a request body.
    body_timeout: float = 30.0
    #: Seconds one write to the client may take.
    write_timeout: float = 30.0
    #: Bytes of an unread request body discarded to keep the connection; past this, it closes.
    discard_body_limit: int = 1 << 20
    #: Bytes of pipelined requests buffered while a streamed response is open.
    pipeline_buffer_limit: int = 1 << 16
    #: Seconds spent draining the client after the server half-closes a connection.
    linger_timeout: float = 1.0


def _parser_factory(parser: ParserName) -> Callable[[int], RequestParser]:
    if parser in ("auto", "httptools"):
        try:
            from .httptools_parser import HttptoolsRequestParser
        except ImportError:
            if parser == "httptools":
                raise
        else:
            return HttptoolsRequestParser
    if parser not in ("auto", "h11"):
        raise ValueError(f"unknown parser {parser!r}: use 'auto', 'h11' or 'httptools'")
    return H11RequestParser


@dataclass(frozen=True, slots=True)
class _Site:
    """What every connection of one :func:`serve_builtin` call shares."""

    app: HttpApp
    parser_type: Callable[[int], RequestParser]
    limits: ServerLimits
    ssl_context: object | None
    scheme: str
    #: One per connection being served (``max_connections`` in all).
    slots: trio.Semaphore


async def serve_builtin(
    app: HttpApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    parser: ParserName = "auto",
    limits: ServerLimits | None = None,
    ssl_context: object | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; reports the base URL when listening.

    ``parser`` is ``"httptools"`` (fast, C), ``"h11"`` (pure Python) or ``"auto"`` (httptools
    when importable). ``ssl_context`` (an ``ssl.SSLContext``) serves HTTPS through
    ``trio.SSLStream``. Cancelling the call closes the listener and every connection.
    """
    import ssl

    if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
        raise TypeError("ssl_context must be an ssl.SSLContext")
    parser_type = _parser_factory(parser)
    limits = limits or ServerLimits()
    listeners = await trio.open_tcp_listeners(port, host=host)
    sockname = listeners[0].socket.getsockname()
    scheme = "https" if ssl_context is not None else "http"
    bound_host = f"[{sockname[0]}]" if ":" in sockname[0] else sockname[0]
    site = _Site(
        app, parser_type, limits, ssl_context, scheme, trio.Semaphore(limits.max_connections)
    )
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept_loop, listener, site)
        task_status.started(f"{scheme}://{bound_host}:{sockname[1]}")


async def _accept_loop(listener: trio.SocketListener, site: _Site) -> None:
    slots = site.slots
    async with listener, trio.open_nursery() as nursery:
        while True:
            await slots.acquire()
            try:
                stream = await listener.accept()
            except OSError as error:
                slots.release()
                if error.errno in _ACCEPT_ERRNOS:
                    logger.error("accept failed (%s); pausing 100 ms", error)
                    await trio.sleep(0.1)
                    continue
                raise
            except BaseException:
                slots.release()
                raise
            nursery.start_soon(_serve_connection, stream, site)


async def _serve_connection(stream: trio.SocketStream, site: _Site) -> None:
    ssl_context = site.ssl_context
    try:
        try:
            peer = stream.socket.getpeername()
            client: tuple[str, int] | None = (peer[0], peer[1])
        except OSError:
            client = None
        wrapped: trio.abc.Stream = stream
        if ssl_context is not None:
            import ssl

            assert isinstance(ssl_context, ssl.SSLContext)
            wrapped = trio.SSLStream(stream, ssl_context, server_side=True, https_compatible=True)
        limits = site.limits
        connection = BuiltinConnection(
            wrapped, site.app, site.parser_type(limits.max_head_size), limits
        )
        connection.scheme = site.scheme
        connection.client = client
        async with trio.open_nursery() as nursery:
            connection.nursery = nursery
            with connection.scope:
                await connection.run()
            connection.nursery = None
            nursery.cancel_scope.cancel()
        if connection.scope.cancelled_caught:
            await connection.interrupted()
        await connection.close()
    finally:
        site.slots.release()
        await trio.aclose_forcefully(stream)


def _read_nowait(fd: int) -> bytes | None:
    """What the socket holds now (``b""`` at EOF or breakage), ``None`` if nothing yet."""
    try:
        return os.read(fd, _RECEIVE_SIZE)
    except BlockingIOError:
        return None
    except OSError:
        return b""


async def _wait_and_read(fd: int) -> bytes:
    """The next bytes from the socket once it is readable (``b""`` at EOF or breakage)."""
    while True:
        try:
            await trio.lowlevel.wait_readable(fd)
        except trio.ClosedResourceError:
            return b""
        data = _read_nowait(fd)
        if data is not None:
            return data


class BuiltinConnection:
    """One client connection: the request loop and what the request/responder pair share."""

    # A server may hold thousands of connections open (SSE streams): no per-instance dict.
    __slots__ = (
        "_fd",
        "app",
        "client",
        "limits",
        "message_complete",
        "nursery",
        "on_client_gone",
        "parser",
        "peer_gone",
        "phase",
        "readable",
        "responding",
        "scheme",
        "scope",
        "stream",
        "streaming",
        "watcher",
        "writable",
    )

    def __init__(
        self,
        stream: trio.abc.Stream,
        app: HttpApp,
        parser: RequestParser,
        limits: ServerLimits,
    ) -> None:
        self.stream = stream
        # A plain TCP connection is read and written through its descriptor directly: trio's
        # SocketStream would add a task switch to every read and write that completes at once.
        # TLS goes through the stream.
        self._fd: int | None = stream.socket.fileno() if type(stream) is trio.SocketStream else None
        self.app = app
        self.parser = parser
        self.limits = limits
        self.scheme = "http"
        self.client: tuple[str, int] | None = None
        self.nursery: trio.Nursery | None = None
        # Whether the stream may still be read from / written to.
        self.readable = True
        self.writable = True
        # Whether the client closed (or broke) its side: no more requests will come.
        self.peer_gone = False
        # One cancel scope for the whole request loop, so that no request pays for its own:
        # its deadline is set around each wait on the client (what the wait was is in
        # ``phase``), and the watcher cancels it when the client leaves mid-stream.
        self.scope = trio.CancelScope()
        self.phase = _IDLE
        # Whether the current request's response has started (what a timeout may still send).
        self.responding = False
        self.message_complete = False
        # Whether a streamed response is open (the watcher may run).
        self.streaming = False
        self.watcher = DisconnectWatcher(self)
        # What the current request's handler asked to be told when the client leaves.
        self.on_client_gone: Callable[[], None] | None = None

    # -- reading ----------------------------------------------------------------------------

    async def receive_some(self) -> bytes | bytearray:
        """Bytes from the client; ``b""`` at EOF or breakage (the client is then gone)."""
        fd = self._fd
        data: bytes | bytearray | None
        if fd is None:
            try:
                data = await self.stream.receive_some(_RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
        else:
            data = _read_nowait(fd)
            if data is None:
                data = await _wait_and_read(fd)
            else:
                # Fairness: a client that keeps the socket full must not starve the others. The
                # yield cannot raise Cancelled: that would lose the bytes just read.
                await trio.lowlevel.cancel_shielded_checkpoint()
        if not data:
            self.peer_gone = True
            self.readable = False
        return data

    async def receive(self, deadline: float, phase: int) -> bytes | bytearray:
        """:meth:`receive_some`, ending the request loop if nothing comes by ``deadline``."""
        fd = self._fd
        if fd is not None and (data := _read_nowait(fd)) is not None:
            # Already there: no deadline to arm (a read that has to wait arms it below). As
            # above, the yield must not lose the bytes to a cancellation.
            await trio.lowlevel.cancel_shielded_checkpoint()
            if not data:
                self.peer_gone = True
                self.readable = False
            return data
        scope = self.scope
        self.phase = phase
        scope.deadline = deadline
        try:
            if fd is None:
                return await self.receive_some()
            data = await _wait_and_read(fd)
            if not data:
                self.peer_gone = True
                self.readable = False
            return data
        finally:
            scope.deadline = math.inf

    async def read_head(self, first: bool) -> RequestHead | None:
        """The next request head, or ``None`` when the connection should end quietly."""
        limits = self.limits
        deadline = trio.current_time() + (
            limits.header_timeout if first else limits.keep_alive_timeout
        )
        phase = _IDLE
        while True:
            try:
                event = self.parser.next_event()
            except HttpParseError as error:
                await self.refuse(error.status, str(error))
                return None
            if event is None:
                if not self.readable:
                    return None
                data = await self.receive(deadline, phase)
                if not data:
                    return None
                if phase == _IDLE:
                    phase = _HEAD
                    if not first:
                        deadline = trio.current_time() + limits.header_timeout
                self.parser.feed(data)
            elif type(event) is RequestHead:
                self.message_complete = False
                if not event.chunked and not event.content_length:
                    # No body: take its end now, so a stream may watch the socket at once.
                    self.message_complete = self.parser.next_event() is END_OF_MESSAGE
                return event
            elif event is PEER_CLOSED:
                return None
            else:  # pragma: no cover - a parser never yields body events before a head
                raise AssertionError(f"unexpected {event!r} before a request head")

    async def next_body_event(self) -> bytes | None:
        """The next piece of the request body, or ``None`` at its end."""
        while True:
            try:
                event = self.parser.next_event()
            except HttpParseError as error:
                raise BadRequestBody(400, str(error)) from None
            if event is None:
                if not self.readable:
                    raise trio.BrokenResourceError("the client closed during the request body")
                data = await self.receive(trio.current_time() + self.limits.body_timeout, _BODY)
                if not data:
                    raise trio.BrokenResourceError("the client closed during the request body")
                self.parser.feed(data)
            elif event is END_OF_MESSAGE:
                self.message_complete = True
                return None
            elif isinstance(event, bytes):
                return event
            else:
                raise BadRequestBody(400, "malformed request body")

    # -- writing ----------------------------------------------------------------------------

    async def send(self, data: bytes) -> None:
        if not self.writable:
            raise trio.BrokenResourceError("the client connection is closed")
        fd = self._fd
        if fd is not None:
            # A write the socket takes whole costs neither a deadline nor a task switch.
            await trio.lowlevel.checkpoint_if_cancelled()
            try:
                sent = os.write(fd, data)
            except BlockingIOError:
                sent = 0
            except OSError as error:
                self.writable = False
                raise trio.BrokenResourceError("the client connection is closed") from error
            if sent == len(data):
                return
            await self._send_rest(fd, memoryview(data)[sent:])
            return
        scope = self.scope
        self.phase = _WRITE
        scope.deadline = trio.current_time() + self.limits.write_timeout
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            self.writable = False
            raise trio.BrokenResourceError("the client connection is closed") from error
        finally:
            scope.deadline = math.inf

    async def _send_rest(self, fd: int, data: memoryview) -> None:
        """Write what the socket did not take at once, waiting for room within the deadline.

        The deadline is this write's own: the writing task may not be the connection's (an SSE
        writer running in a session). Part of the message is out already, so a write that does
        not finish (timeout, cancellation, breakage) leaves the response cut: the connection
        can carry nothing more.
        """
        completed = False
        try:
            with trio.move_on_after(self.limits.write_timeout):
                while data:
                    try:
                        await trio.lowlevel.wait_writable(fd)
                        data = data[os.write(fd, data) :]
                    except BlockingIOError:
                        continue
                    except (OSError, trio.ClosedResourceError) as error:
                        raise trio.BrokenResourceError("the client connection is closed") from error
                completed = True
        finally:
            if not completed:
                self.writable = False
        if data:
            raise trio.BrokenResourceError("a write to the client timed out")

    async def refuse(self, status: int, message: str) -> None:
        """Answer an error the front end detected itself (no app involved), then close."""
        self.readable = False
        if not self.writable:
            return
        self.writable = False
        body = message.encode("utf-8", "replace")
        head = response_head(status, TEXT_PLAIN, content_length=len(body), keep_alive=False)
        with trio.move_on_after(self.limits.write_timeout):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stream.send_all(head + body)
                # What refuse sent is all the client gets: let close() linger for it.
                self.writable = True

    async def interrupted(self) -> None:
        """The loop's scope fired: a wait on the client timed out, or it left mid-stream."""
        if self.phase == _HEAD:
            await self.refuse(408, "request head timeout")
        elif self.phase == _BODY and not self.responding:
            await self.refuse(408, "request body timeout")
        else:
            self.writable = False

    # -- the request loop -------------------------------------------------------------------

    async def run(self) -> None:
        first = True
        while True:
            head = await self.read_head(first)
            if head is None:
                return
            first = False
            if head.is_websocket_upgrade:
                await self._serve_websocket(head)
                return
            request = BuiltinRequest(self, head)
            responder = BuiltinResponder(self, request)
            if not await self._run_handler(request, responder):
                return
            if not request.keep_alive or not await request.discard_rest():
                return
            self.parser.next_request()

    async def _run_handler(self, request: BuiltinRequest, responder: BuiltinResponder) -> bool:
        """Run the app for one request; whether the connection can carry another."""
        self.responding = False
        try:
            await self.app.handle_http(request, responder)
        except BadRequestBody as error:
            if responder.state == NOT_STARTED:
                await self.refuse(error.status, str(error))
            return False
        except trio.BrokenResourceError:
            return False
        except Exception:
            logger.exception("HTTP handler for %s %s failed", request.method, request.path)
            if responder.state != NOT_STARTED:
                return False
            request.keep_alive = False
            await responder.send_quietly(500, b"internal server error")
            return False
        finally:
            self.streaming = False
            self.on_client_gone = None
            await self.watcher.stop()
        if not self.writable:
            return False
        if responder.state == NOT_STARTED:
            logger.error("HTTP handler for %s %s did not respond", request.method, request.path)
            await responder.send_quietly(500, b"the handler did not respond")
        elif responder.state == STREAMING:
            try:
                await responder.end_stream()
            except trio.BrokenResourceError:
                return False
        return self.writable

    async def _serve_websocket(self, head: RequestHead) -> None:
        request = BuiltinRequest(self, head)
        try:
            if await request.read_body(0):
                raise BodyTooLarge
        except (BodyTooLarge, BadRequestBody):
            await self.refuse(400, "a WebSocket upgrade request has no body")
            return
        except trio.BrokenResourceError:
            return
        await serve_websocket_upgrade(
            self.stream,
            self.app,
            request,
            head,
            self.parser.unparsed(),
            self.limits.write_timeout,
        )
        self.readable = self.writable = False

    async def close(self) -> None:
        """Close the stream; half-close and drain first unless the client closed already."""
        stream = self.stream
        if self.writable and not self.peer_gone and isinstance(stream, trio.SocketStream):
            with trio.move_on_after(self.limits.linger_timeout):
                try:
                    await stream.send_eof()
                    drained = 0
                    while drained < self.limits.discard_body_limit:
                        data = await stream.receive_some(_RECEIVE_SIZE)
                        if not data:
                            break
                        drained += len(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
        with trio.CancelScope(shield=True), trio.move_on_after(self.limits.linger_timeout):
            await stream.aclose()
