"""A standalone MCP WebSocket server on trio-websocket, for when no HTTP front end is wanted.

::

    url = await nursery.start(partial(serve_websocket, server))   # "ws://127.0.0.1:PORT/mcp"

Each TCP connection goes through the same steps, every one of them bounded in time:

1. the opening handshake (TLS first with ``ssl_context``) must arrive within
   ``handshake_timeout`` seconds, else the connection is dropped;
2. a request for another path is refused with **404**;
3. a request whose ``Host`` or ``Origin`` is not allowed is refused with **403**, by the same
   :class:`~mcptrio.transports.http.endpoints.security.OriginHostCheck` the HTTP endpoints use;
4. past ``max_connections`` open sessions, a request is refused with **503**;
5. :func:`~mcptrio.transports.websocket.serve_websocket_session` takes over: a client that did
   not offer the ``mcp`` subprotocol gets **400**, any other one session until the socket
   closes.

Every connection's tasks live in the server's nursery; cancelling the server ends every session
and closes each socket with 1000 (within ``close_timeout``). A connection that fails in an
unexpected way is logged and closed without disturbing the others.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypedDict, cast
from urllib.parse import unquote

import trio
import trio_websocket

from ..runtime.session import SessionFactory
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE
from .http.endpoints.security import OriginHostCheck, Refusal
from .http.engine.exchange import Headers
from .websocket import (
    _MESSAGE_QUEUE_SIZE,
    _RECEIVE_BUFFER_SIZE,
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_SEND_TIMEOUT,
    _ShieldedReaders,
    _TrioWebSocketPeer,
    serve_websocket_session,
)

__all__ = ["DEFAULT_MAX_CONNECTIONS", "serve_websocket"]

log = logging.getLogger("mcptrio.transports.websocket")

#: Open sessions a standalone server holds at once by default.
DEFAULT_MAX_CONNECTIONS = 1024


@dataclass(frozen=True, slots=True)
class _HandshakeRequest:
    """The upgrade request, as an :class:`~mcptrio.transports.http.engine.exchange.HttpRequest`.

    wsproto keeps ``Host`` and ``Sec-WebSocket-Extensions`` to itself, so ``headers`` lacks
    them; ``Host`` is put back from the handshake event (trio-websocket does not expose it),
    ``Sec-WebSocket-Protocol`` from the offered subprotocols.
    """

    path: str
    query_string: bytes
    headers: Headers
    client: tuple[str, int] | None
    scheme: str
    method: str = "GET"

    @classmethod
    def of(cls, request: trio_websocket.WebSocketRequest, scheme: str) -> _HandshakeRequest:
        target, _, query = request.path.partition("?")
        headers = list(request.headers)
        # wsproto decoded Host with the idna codec; encoding it back gives the bytes received.
        headers.append((b"host", request._event.host.encode("idna")))
        if request.proposed_subprotocols:
            offered = ", ".join(request.proposed_subprotocols)
            headers.append((b"sec-websocket-protocol", offered.encode("latin-1")))
        client: tuple[str, int] | None = None
        try:
            remote = request.remote
        except OSError:
            pass  # the client has already gone; the session will find out soon enough
        else:
            if isinstance(remote, trio_websocket.Endpoint):
                client = (str(remote.address), remote.port)
        return cls(unquote(target), query.encode("latin-1"), headers, client, scheme)

    async def read_body(self, limit: int) -> bytes:
        """An upgrade request has no body."""
        await trio.lowlevel.checkpoint()
        return b""


@dataclass(slots=True, kw_only=True)
class _Endpoint:
    """Takes TCP connections through the steps in the module docstring."""

    factory: SessionFactory
    path: str
    origin_host: OriginHostCheck
    max_frame_size: int
    max_connections: int
    handshake_timeout: float
    send_timeout: float | None
    close_timeout: float
    scheme: str
    open_sessions: int = 0
    #: Set when the server stops gracefully: each session ends once it has answered.
    shutdown: trio.Event | None = None

    def _refusal(self, request: _HandshakeRequest) -> Refusal | None:
        if request.path != self.path:
            return Refusal(404, "Not Found")
        refusal = self.origin_host.refusal(request.headers)
        if refusal is None and self.open_sessions >= self.max_connections:
            return Refusal(503, "Too many sessions; try again later")
        return refusal

    async def serve_connection(self, stream: trio.abc.Stream) -> None:
        # The actor boundary of one connection: whatever goes wrong here stays here.
        try:
            async with trio.open_nursery() as nursery:
                readers = _ShieldedReaders(nursery)
                try:
                    await self._serve(readers, stream)
                finally:
                    readers.cancel()
        except Exception:
            log.exception("WebSocket connection failed")
        finally:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + self.close_timeout):
                await stream.aclose()

    async def _serve(self, readers: _ShieldedReaders, stream: trio.abc.Stream) -> None:
        request: trio_websocket.WebSocketRequest | None = None
        with trio.move_on_after(self.handshake_timeout):
            request = await trio_websocket.wrap_server_stream(
                readers.as_nursery(),
                stream,
                message_queue_size=_MESSAGE_QUEUE_SIZE,
                max_message_size=self.max_frame_size,
                receive_buffer_size=_RECEIVE_BUFFER_SIZE,
            )
        if request is None:
            log.info(
                "dropping a connection: no WebSocket handshake in %s s", self.handshake_timeout
            )
            return
        http_request = _HandshakeRequest.of(request, self.scheme)
        refusal = self._refusal(http_request)
        if refusal is not None:
            status, body = refusal.status, refusal.message.encode()
            log.info("refusing a WebSocket from %s with %d", http_request.client, status)
            with trio.move_on_after(self.handshake_timeout):
                await request.reject(
                    status, extra_headers=[(b"content-type", b"text/plain")], body=body
                )
            return
        self.open_sessions += 1
        try:
            await serve_websocket_session(
                self.factory,
                http_request,
                _TrioWebSocketPeer.for_request(request),
                max_frame_size=self.max_frame_size,
                handshake_timeout=self.handshake_timeout,
                send_timeout=self.send_timeout,
                close_timeout=self.close_timeout,
                shutdown=self.shutdown,
            )
        finally:
            self.open_sessions -= 1


class WebSocketServing(TypedDict, total=False):
    """The options of :func:`serve_websocket` besides where it binds (each one's meaning is
    there), as :meth:`mcptrio.Server.serve_websocket` takes them."""

    path: str
    allowed_origins: Collection[str] | None
    allowed_hosts: Collection[str] | None
    max_frame_size: int
    max_connections: int
    handshake_timeout: float
    send_timeout: float | None
    close_timeout: float
    ssl_context: ssl.SSLContext | None
    shutdown: trio.Event | None


async def serve_websocket(
    factory: SessionFactory,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    allowed_origins: Collection[str] | None = None,
    allowed_hosts: Collection[str] | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve MCP over WebSocket on ``host:port`` until cancelled; reports the URL.

    ``factory`` makes each connection's session (a :class:`mcptrio.Server` does). The server
    binds ``127.0.0.1`` unless told otherwise, and reports the URL clients connect to, such as
    ``ws://127.0.0.1:41234/mcp`` (``wss://`` with ``ssl_context``); when ``host`` resolves to
    several addresses, the URL names the first one bound.

    ``allowed_origins`` and ``allowed_hosts`` are those of
    :class:`~mcptrio.transports.http.endpoints.security.OriginHostCheck` (``None``: loopback
    names; the address bound is allowed too, unless a wildcard); ``max_frame_size`` bounds one
    incoming message (a bigger one closes that connection with 1009); ``max_connections``
    bounds the sessions open at once. The steps each connection goes through, and the time
    limits on them, are in the module docstring. Setting ``shutdown`` stops it gracefully: no
    connection is accepted any more, each session ends once its requests in flight have
    answered (closed with 1001, going away), and the call returns once all have; bound that
    wait yourself. Otherwise it never returns.
    """
    if not path.startswith("/"):
        raise ValueError("path must start with '/'")
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    socket_listeners = await trio.open_tcp_listeners(port, host=host)
    address, bound_port = socket_listeners[0].socket.getsockname()[:2]
    listeners: list[trio.SocketListener] | list[trio.SSLListener[trio.SocketStream]]
    if ssl_context is None:
        listeners, scheme = socket_listeners, "ws"
    else:
        listeners = [
            trio.SSLListener(listener, ssl_context, https_compatible=True)
            for listener in socket_listeners
        ]
        scheme = "wss"
    origin_host = OriginHostCheck(allowed_origins, allowed_hosts)
    origin_host.allow_bound_address(address, bound_port)
    endpoint = _Endpoint(
        factory=factory,
        path=path,
        origin_host=origin_host,
        max_frame_size=max_frame_size,
        max_connections=max_connections,
        handshake_timeout=handshake_timeout,
        send_timeout=send_timeout,
        close_timeout=close_timeout,
        scheme="https" if ssl_context is not None else "http",
    )
    url_host = f"[{address}]" if ":" in address else address
    url = f"{scheme}://{url_host}:{bound_port}{path}"
    endpoint.shutdown = shutdown
    async with (
        _lifespan_of(factory, listeners),
        trio.open_nursery() as connections,
        trio.open_nursery() as accepting,
    ):

        async def accept(task_status: trio.TaskStatus[object]) -> None:
            # The connections live in a nursery of their own: a shutdown stops the accepting
            # and leaves them to end as their sessions do.
            # Either kind of listener hands the handler a stream, all it takes.
            streams = cast("list[trio.abc.Listener[trio.abc.Stream]]", listeners)
            await trio.serve_listeners(
                endpoint.serve_connection,
                streams,
                handler_nursery=connections,
                task_status=task_status,
            )

        await accepting.start(accept)
        log.info("serving MCP over WebSocket at %s", url)
        task_status.started(url)
        if shutdown is not None:
            await shutdown.wait()
            # The listeners close; the connections end as their sessions do.
            accepting.cancel_scope.cancel()


@asynccontextmanager
async def _lifespan_of(
    factory: SessionFactory, listeners: Sequence[trio.abc.Listener[Any]]
) -> AsyncIterator[None]:
    """The factory's lifespan (a server's: :mod:`mcptrio.server.lifespan`), open while it is
    served; the listeners are closed if it fails to start, since nothing will serve them."""
    open_lifespan = getattr(factory, "open_lifespan", None)
    if not callable(open_lifespan):
        yield
        return
    async with contextlib.AsyncExitStack() as stack:
        try:
            await stack.enter_async_context(open_lifespan())
        except BaseException:
            with trio.CancelScope(shield=True):
                for listener in listeners:
                    await listener.aclose()
            raise
        yield
