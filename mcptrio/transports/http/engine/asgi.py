"""The ASGI front end: any :class:`~.exchange.HttpApp` as an ASGI 3 application.

:class:`AsgiApp` is what Hypercorn (HTTP/2, TLS, several workers) or a Quart-trio application
serves; :func:`serve_hypercorn` runs it on Hypercorn's trio worker; :func:`mount_asgi` puts it
under a path prefix of another ASGI application in one line::

    quart_app.asgi_app = mount_asgi(quart_app.asgi_app, "/mcp-prefix", AsgiApp(mcp_app))

Paths: ``path`` in an ASGI scope is the full path and ``root_path`` the prefix the app is
mounted at (current ASGI spec); the request the :class:`~.exchange.HttpApp` sees has the path
*below* ``root_path`` (``/mcp``, whatever the mount point) and carries the prefix in its
``root_path`` attribute, as the built-in server's router does.

Framing: the server in front (Hypercorn's h11) reads a request with both ``Content-Length`` and
``Transfer-Encoding`` by the latter and goes on to whatever follows it, and lets two ``Host`` or
two ``Origin`` headers through. :class:`AsgiApp` refuses such requests itself, as the built-in
server's parsers do (RFC 9112; see ``parser.build_request_head``): 400 with ``Connection: close``,
so the handler never runs and Hypercorn closes the connection instead of reading a request
smuggled after the body.

Streaming and disconnects: ASGI reports a client that went away as ``http.disconnect`` on
``receive()``. While a streamed response is open, one watcher task waits on ``receive()`` and
cancels the handler when that comes (the :mod:`~.exchange` contract). From then on it is the
only caller of ``receive()``: body messages it meets are passed on to ``read_body``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import math
import ssl
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from functools import partial
from typing import Any, cast

import trio

from .asgi_drain import AsgiDrain
from .exchange import BodyTooLarge, Headers, HttpApp, WebSocketClosed

__all__ = ["AsgiApp", "AsgiRequest", "AsgiWebSocketPeer", "mount_asgi", "serve_hypercorn"]

logger = logging.getLogger("mcptrio.transports.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiCallable = Callable[[Scope, Receive, Send], Awaitable[None]]

_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]
_REFUSED_BODY_READ = 1 << 16


class AsgiRequest:
    """:class:`~.exchange.HttpRequest` over an ASGI ``http`` or ``websocket`` scope."""

    __slots__ = (
        "_body",
        "_forwarded",
        "_receive",
        "_state",
        "client",
        "headers",
        "method",
        "path",
        "query_string",
        "root_path",
        "scheme",
    )

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self._receive = receive
        self.method: str = scope.get("method", "GET")
        root_path: str = scope.get("root_path", "")
        path: str = scope["path"]
        if root_path and (path == root_path or path.startswith(root_path + "/")):
            path = path[len(root_path) :] or "/"
        self.path = path
        self.root_path = root_path
        self.query_string: bytes = scope.get("query_string", b"")
        self.headers: Headers = [(bytes(name), bytes(value)) for name, value in scope["headers"]]
        client = scope.get("client")
        self.client: tuple[str, int] | None = (client[0], client[1]) if client else None
        scheme: str = scope.get("scheme", "http")
        self.scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        # _state: 0 unread, 1 read, 2 over the limit, 3 the client went away
        self._state = 0
        self._body = b""
        self._forwarded: trio.MemoryReceiveChannel[Message] | None = None

    async def _next_message(self) -> Message:
        if self._forwarded is not None:
            try:
                return await self._forwarded.receive()
            except trio.EndOfChannel:
                return {"type": "http.disconnect"}
        return await self._receive()

    def forward_messages(self, channel: trio.MemoryReceiveChannel[Message]) -> None:
        """From now on a watcher owns ``receive()``; body messages come through ``channel``."""
        self._forwarded = channel

    async def read_body(self, limit: int) -> bytes:
        if self._state == 1:
            return self._body
        if self._state == 2:
            raise BodyTooLarge(f"the request body is over {limit} bytes")
        if self._state == 3:
            raise trio.BrokenResourceError("the client went away")
        parts: list[bytes] = []
        size = 0
        while True:
            message = await self._next_message()
            kind = message["type"]
            if kind == "http.request":
                data = message.get("body", b"")
                size += len(data)
                if size > limit:
                    self._state = 2
                    raise BodyTooLarge(f"the request body is over {limit} bytes")
                if data:
                    parts.append(data)
                if not message.get("more_body", False):
                    break
            elif kind == "http.disconnect":
                self._state = 3
                raise trio.BrokenResourceError("the client went away during the request body")
        self._state = 1
        self._body = b"".join(parts)
        return self._body


_NOT_STARTED, _STREAMING, _DONE = 0, 1, 2


class _AsgiResponder:
    """:class:`~.exchange.HttpResponder` over ASGI ``send``."""

    def __init__(
        self, request: AsgiRequest, send: Send, nursery: trio.Nursery, drain: AsgiDrain
    ) -> None:
        self._request = request
        self._send = send
        self._nursery = nursery
        self._drain = drain
        self.state = _NOT_STARTED
        self.client_gone = False
        self.handler_scope: trio.CancelScope | None = None
        self._watching = False
        self._on_client_gone: Callable[[], None] | None = None

    def on_client_gone(self, callback: Callable[[], None]) -> None:
        self._on_client_gone = callback

    def allow_eviction(self) -> None:
        # Hypercorn keeps its own connection limits; a graceful stop cuts the stream, though.
        if self.handler_scope is not None:
            self._drain.evictable(self.handler_scope)

    def watch_for_departure(self) -> None:
        # Hypercorn holds the connection until the app returns whatever we watch: no slot to
        # give back early.
        return None

    async def send_response(self, status: int, headers: Headers, body: bytes = b"") -> None:
        if self.state != _NOT_STARTED:
            raise RuntimeError("a response was already sent")
        self.state = _DONE
        await self._send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*headers, (b"content-length", b"%d" % len(body))],
            }
        )
        await self._send({"type": "http.response.body", "body": body})

    async def start_stream(self, status: int, headers: Headers) -> None:
        if self.state != _NOT_STARTED:
            raise RuntimeError("a response was already sent")
        self.state = _STREAMING
        await self._send({"type": "http.response.start", "status": status, "headers": headers})
        # An empty body message makes Hypercorn flush the head now, not with the first chunk.
        await self._send({"type": "http.response.body", "body": b"", "more_body": True})
        self.start_watcher()

    async def send_chunk(self, *parts: bytes) -> None:
        if self.state != _STREAMING:
            raise RuntimeError("no streamed response is open")
        if self.client_gone:
            raise trio.BrokenResourceError("the client went away")
        # An ASGI body message is one bytes object.
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if data:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def end_stream(self) -> None:
        if self.state != _STREAMING:
            raise RuntimeError("no streamed response is open")
        self.state = _DONE
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    def start_watcher(self) -> None:
        """Watch ``receive()`` for ``http.disconnect`` while the stream is open.

        The watcher becomes the only caller of ``receive()``: request body messages it gets
        are handed to ``read_body`` through a small channel (when it is full, the watcher
        waits, and notices a disconnect only once the handler reads on).
        """
        if self._watching:
            return
        self._watching = True
        send_channel, receive_channel = trio.open_memory_channel[Message](4)
        self._request.forward_messages(receive_channel)
        self._nursery.start_soon(self._watch, send_channel)

    async def _watch(self, channel: trio.MemorySendChannel[Message]) -> None:
        async with channel:
            while True:
                message = await self._request._receive()
                if message["type"] == "http.disconnect":
                    self.client_gone = True
                    gone, self._on_client_gone = self._on_client_gone, None
                    if gone is not None:
                        gone()
                    if self.handler_scope is not None:
                        self.handler_scope.cancel()
                    return
                await channel.send(message)


class AsgiWebSocketPeer:
    """:class:`~.exchange.WebSocketPeer` over an ASGI ``websocket`` scope."""

    def __init__(self, scope: Scope, receive: Receive, send: Send, stopping: trio.Event) -> None:
        self._scope = scope
        self._receive = receive
        self._send = send
        self._stopping = stopping
        self._subprotocols: tuple[str, ...] = tuple(scope.get("subprotocols", ()))
        # "pending" until accept/reject; then "open", "rejected" or "closed".
        self.state = "pending"

    @property
    def subprotocols(self) -> Sequence[str]:
        return self._subprotocols

    @property
    def stopping(self) -> trio.Event:
        return self._stopping

    async def _emit(self, message: Message) -> None:
        try:
            await self._send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            self.state = "closed"
            raise WebSocketClosed("the connection broke") from error

    async def accept(self, subprotocol: str | None, headers: Headers = ()) -> None:
        if self.state != "pending":
            raise RuntimeError("the WebSocket handshake was already answered")
        self.state = "open"
        await self._emit(
            {"type": "websocket.accept", "subprotocol": subprotocol, "headers": list(headers)}
        )

    async def reject(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        if self.state != "pending":
            raise RuntimeError("the WebSocket handshake was already answered")
        self.state = "rejected"
        if "websocket.http.response" in self._scope.get("extensions", {}):
            head = [(b"content-length", b"%d" % len(body)), *_TEXT, *headers]
            await self._emit(
                {"type": "websocket.http.response.start", "status": status, "headers": head}
            )
            await self._emit({"type": "websocket.http.response.body", "body": body})
        else:
            # Without the denial-response extension the server answers 403 to a close.
            await self._emit({"type": "websocket.close", "code": 1008})

    async def receive_message(self, limit: int) -> str | bytes:
        if self.state != "open":
            raise WebSocketClosed("the WebSocket is not open")
        while True:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.receive":
                text = message.get("text")
                data: str | bytes = text if text is not None else message.get("bytes") or b""
                size = len(data)
                if isinstance(data, str) and size * 4 > limit:
                    size = len(data.encode("utf-8"))
                if size > limit:
                    await self.aclose(1009, "message too big")
                    raise WebSocketClosed(f"message over {limit} bytes")
                return data
            if kind == "websocket.disconnect":
                self.state = "closed"
                raise WebSocketClosed(f"closed by the peer ({message.get('code', 1005)})")

    async def send_text(self, data: str) -> None:
        if self.state != "open":
            raise WebSocketClosed("the WebSocket is not open")
        await self._emit({"type": "websocket.send", "text": data})

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        if self.state != "open":
            return
        self.state = "closed"
        with contextlib.suppress(WebSocketClosed):
            await self._emit({"type": "websocket.close", "code": code, "reason": reason})


class AsgiApp:
    """An ASGI 3 application serving ``app`` (HTTP and WebSocket; lifespan is accepted)."""

    def __init__(self, app: HttpApp) -> None:
        self.app = app
        #: What a graceful stop waits for (see :mod:`.asgi_drain`).
        self.drain = AsgiDrain()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await _lifespan(receive, send)
        else:
            raise ValueError(f"unsupported ASGI scope type {kind!r}")

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        problem = framing_problem(scope)
        if problem is not None:
            await _refuse(scope, receive, send, problem)
            return
        if self.drain.draining:
            retry = ((b"retry-after", b"1"),)
            await _refuse(scope, receive, send, "The server is stopping", 503, retry)
            return
        request = AsgiRequest(scope, receive)
        with self.drain.answering():
            async with trio.open_nursery() as nursery:
                responder = _AsgiResponder(request, send, nursery, self.drain)
                await self._run_handler(request, responder)
                nursery.cancel_scope.cancel()

    async def _run_handler(self, request: AsgiRequest, responder: _AsgiResponder) -> None:
        scope = responder.handler_scope = trio.CancelScope()
        try:
            with scope:
                await self.app.handle_http(request, responder)
        except trio.BrokenResourceError:
            return
        except Exception:
            logger.exception("HTTP handler for %s %s failed", request.method, request.path)
            if responder.state == _NOT_STARTED:
                await responder.send_response(500, _TEXT, b"internal server error")
            # Mid-stream, returning without ending the body makes the server drop the connection.
            return
        finally:
            responder.handler_scope = None
            self.drain.answered(scope)
        if scope.cancelled_caught and responder.state == _STREAMING and not responder.client_gone:
            # A stream cut by a graceful stop ends as a complete response.
            await responder.end_stream()
            return
        if scope.cancelled_caught or responder.client_gone:
            return
        if responder.state == _NOT_STARTED:
            logger.error("HTTP handler for %s %s did not respond", request.method, request.path)
            await responder.send_response(500, _TEXT, b"the handler did not respond")
        elif responder.state == _STREAMING:
            await responder.end_stream()

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        request = AsgiRequest(scope, receive)
        peer = AsgiWebSocketPeer(scope, receive, send, self.drain.stopping)
        problem = framing_problem(scope)
        if problem is not None:
            with contextlib.suppress(WebSocketClosed):
                await peer.reject(400, problem.encode())
            return
        if self.drain.draining:
            with contextlib.suppress(WebSocketClosed):
                await peer.reject(503, b"The server is stopping", ((b"retry-after", b"1"),))
            return
        failed = False
        # In flight until it has closed: the drain waits for it (it ends on ``stopping``).
        with self.drain.answering():
            try:
                await self.app.handle_websocket(request, peer)
            except (WebSocketClosed, trio.BrokenResourceError):
                pass
            except Exception:
                failed = True
                logger.exception("WebSocket handler for %s failed", request.path)
        with contextlib.suppress(WebSocketClosed):
            if peer.state == "pending":
                await peer.reject(500, b"the WebSocket handler did not answer the handshake")
            else:
                await peer.aclose(1011 if failed else 1000)


def framing_problem(scope: Scope) -> str | None:
    """Why the request in ``scope`` must be refused (see the module docstring), or ``None``."""
    hosts = origins = 0
    length = coding = False
    for name, _ in scope["headers"]:
        name = bytes(name).lower()
        if name == b"host":
            hosts += 1
        elif name == b"origin":
            origins += 1
        elif name == b"content-length":
            length = True
        elif name == b"transfer-encoding":
            coding = True
    if length and coding:
        return "Content-Length together with Transfer-Encoding"
    if hosts > 1:
        return "more than one Host header"
    if origins > 1:
        return "more than one Origin header"
    return None


async def _refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    problem: str,
    status: int = 400,
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    # The body first (a little of it): Hypercorn's h11 protocol may still be writing when a
    # response overtakes the request it answers, and fails on a busy socket.
    taken = 0
    while taken < _REFUSED_BODY_READ:
        message = await receive()
        if message["type"] != "http.request":
            return
        taken += len(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = problem.encode()
    headers = [*_TEXT, *extra, (b"content-length", b"%d" % len(body))]
    if scope.get("http_version", "1.1") in ("1.0", "1.1"):
        # What follows this request on the connection is not to be read as a request.
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    """Accept startup and shutdown; the app's own lifetime is its ``run`` (see serve.py)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def mount_asgi(outer: AsgiCallable, prefix: str, inner: AsgiCallable) -> AsgiCallable:
    """An ASGI app sending ``prefix`` and everything under it to ``inner``, the rest to ``outer``.

    ``prefix`` matches whole path segments (``/mcp`` takes ``/mcp`` and ``/mcp/x``, not
    ``/mcpx``). ``inner`` gets the full ``path`` with ``prefix`` added to ``root_path``, as
    the ASGI spec has it. Lifespan events go to ``outer`` only.
    """
    prefix = "/" + prefix.strip("/")

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            root_path: str = scope.get("root_path", "")
            path: str = scope["path"]
            local = path[len(root_path) :] if root_path and path.startswith(root_path) else path
            if local == prefix or local.startswith(prefix + "/"):
                inner_scope = dict(scope)
                inner_scope["root_path"] = root_path + prefix
                if not path.startswith(root_path + prefix):
                    inner_scope["path"] = root_path + local
                await inner(inner_scope, receive, send)
                return
        await outer(scope, receive, send)

    return dispatch


async def serve_hypercorn(
    app: HttpApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    config: Any | None = None,
    ssl_context: ssl.SSLContext | None = None,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` with Hypercorn's trio worker until cancelled; reports the base URL.

    ``config`` (a ``hypercorn.config.Config``) is copied and bound to ``host:port``; set TLS
    there (``certfile``/``keyfile``, which also enables HTTP/2 through ALPN) or pass an
    ``ssl_context`` (give it ALPN ``["h2", "http/1.1"]`` for HTTP/2).

    ``shutdown`` stops Hypercorn gracefully when set (its ``shutdown_trigger``): it stops
    accepting, lets the requests it serves finish, and the call returns once they have, with no
    limit of Hypercorn's own (``graceful_timeout``): bound the wait with a deadline of yours, as
    for the built-in front end.
    """
    from hypercorn.config import Config
    from hypercorn.trio import serve

    if config is None:
        config = Config()
        config.accesslog = None
    else:
        config = copy.copy(config)
    if ssl_context is not None:
        config = _with_ssl_context(config, ssl_context)
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    asgi = AsgiApp(app)
    trigger = None
    if shutdown is not None:

        async def trigger() -> None:
            await shutdown.wait()
            # Hypercorn is told only once nothing is in flight (see .asgi_drain).
            await asgi.drain.drain()

        config.graceful_timeout = math.inf
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            # Hypercorn types the app with its own TypedDict scopes; AsgiApp takes any mapping.
            partial(serve, cast(Any, asgi), config, mode="asgi", shutdown_trigger=trigger)
        )
        task_status.started(binds[0])


def _with_ssl_context(config: Any, context: ssl.SSLContext) -> Any:
    from hypercorn.config import Config

    class _SslContextConfig(Config):
        @property
        def ssl_enabled(self) -> bool:
            return True

        def create_ssl_context(self) -> ssl.SSLContext:
            return context

    tls_config = _SslContextConfig()
    tls_config.__dict__.update(config.__dict__)
    return tls_config
