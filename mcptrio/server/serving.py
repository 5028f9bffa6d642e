"""How a :class:`~mcptrio.server.Server` is served: the ``serve_*`` entry points and ``run``.

:class:`ServingMethods` is a base of ``Server``: every entry point starts sessions through the
server's ``session(transport)`` and enters its lifespan (``open_lifespan()``), so they live
apart from what the server serves (its tools, resources, prompts and their dispatch).
"""

from __future__ import annotations

import ssl
from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, cast

import trio

from ..runtime.session import Session
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.stdio import open_stdio_server_transport
from .running import DEFAULT_GRACE, TransportName, run_server

if TYPE_CHECKING:
    from ..stores.bundle import Stores
    from ..transports.http.endpoints.security import HttpSecurity
    from ..transports.http.engine.builtin_server import ServerLimits
    from .server import Server

__all__ = ["ServingMethods"]


class ServingMethods:
    """The ways to serve a server: over a transport given, stdio, HTTP, WebSocket, or as the
    whole program (``run``)."""

    if TYPE_CHECKING:
        # What the entry points need of the server (``Server`` has both).

        def session(self, transport: Transport) -> Session: ...

        def open_lifespan(self) -> AbstractAsyncContextManager[Any]: ...

    def use_stores(self, stores: Stores) -> None:
        """Keep what this server's workers share in ``stores`` (from
        :func:`mcptrio.open_stores`): the ``requestState`` key (unless the bundle has none),
        the subscription bus, the task store, and the SSE event store of the HTTP apps made
        afterwards. Call it before serving; ``Server(stores=...)`` does the same at creation."""
        from .request_state import RequestStateKey

        server = cast("Server", self)
        if server.tasks.serving:
            raise RuntimeError("use_stores() must be called before the server is served")
        server.stores = stores
        if stores.request_state_key is not None:
            server.request_state_key = RequestStateKey(stores.request_state_key)
        server.subscriptions = stores.subscription_bus
        server.follow_remote_changes()
        server.tasks.store = stores.task_store

    async def serve_session(
        self,
        transport: Transport,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session over ``transport`` until it ends; reports the ``Session``.

        Enters the server's lifespan first, unless it is open already (see :mod:`.lifespan`).
        """
        async with self.open_lifespan():
            session = self.session(transport)
            async with trio.open_nursery() as nursery:
                await nursery.start(session.run)
                task_status.started(session)

    async def serve_stdio(
        self,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session on this process's stdin/stdout until stdin ends."""
        async with open_stdio_server_transport(max_frame_size=max_frame_size) as transport:
            await self.serve_session(transport, task_status=task_status)

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        front_end: Literal["builtin", "hypercorn"] = "builtin",
        parser: Literal["auto", "h11", "httptools"] = "auto",
        json_response: bool = True,
        stateless: bool = False,
        security: HttpSecurity | None = None,
        limits: ServerLimits | None = None,
        ssl_context: ssl.SSLContext | None = None,
        stores: Stores | None = None,
        listeners: Sequence[trio.SocketListener] | None = None,
        shutdown: trio.Event | None = None,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve this server over HTTP until cancelled; reports the base URL.

        Streamable HTTP and WebSocket are served at ``path``, the legacy HTTP+SSE endpoints at
        ``/sse`` and ``/messages``. ``stores`` (from :func:`mcptrio.open_stores`) is what this
        worker shares with the others (see :meth:`use_stores`). See
        :func:`mcptrio.transports.http.serve.serve_http` to serve several servers on one port
        (and for ``listeners`` and a graceful ``shutdown``), and
        :class:`~mcptrio.transports.http.endpoints.app.McpHttpApp` for every option.
        """
        # Imported here so that stdio servers do not pay for loading the HTTP stack.
        from ..transports.http.endpoints.app import McpHttpApp
        from ..transports.http.serve import serve_http

        if stores is not None:
            self.use_stores(stores)

        app = McpHttpApp(
            self, path=path, json_response=json_response, stateless=stateless, security=security
        )
        # The free serve_http enters the server's lifespan (see its docstring).
        await serve_http(
            app,
            host=host,
            port=port,
            front_end=front_end,
            parser=parser,
            limits=limits,
            ssl_context=ssl_context,
            listeners=listeners,
            shutdown=shutdown,
            task_status=task_status,
        )

    async def serve_websocket(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        allowed_origins: Collection[str] | None = None,
        allowed_hosts: Collection[str] | None = None,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_connections: int = 1024,
        handshake_timeout: float = 10.0,
        send_timeout: float | None = 60.0,
        close_timeout: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve this server over standalone WebSocket until cancelled; reports the URL
        (``ws://host:port/mcp``). See :func:`mcptrio.transports.websocket_server.
        serve_websocket` for what each option bounds; ``serve_http`` serves WebSocket upgrades
        too, on its Streamable HTTP path."""
        from ..transports.websocket_server import serve_websocket

        await serve_websocket(
            self,
            host=host,
            port=port,
            path=path,
            allowed_origins=allowed_origins,
            allowed_hosts=allowed_hosts,
            max_frame_size=max_frame_size,
            max_connections=max_connections,
            handshake_timeout=handshake_timeout,
            send_timeout=send_timeout,
            close_timeout=close_timeout,
            ssl_context=ssl_context,
            task_status=task_status,
        )

    def run(
        self,
        transport: TransportName = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        parser: Literal["auto", "h11", "httptools"] = "auto",
        front_end: Literal["builtin", "hypercorn"] = "builtin",
        workers: int = 1,
        redis_url: str | None = None,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        """Run this server as the whole program: ``"stdio"`` (the default), ``"http"``
        (Streamable HTTP, WebSocket and the legacy HTTP+SSE endpoints) or ``"websocket"``.

        Over HTTP and WebSocket it binds ``host`` (loopback unless told otherwise) and ``port``
        (8000 unless told otherwise; 0 picks a free one) and writes the URL to stderr. Returns
        when stdin ends (stdio) or on Ctrl-C. Inside a Trio program, start the ``serve_*``
        method in your own nursery instead. See :func:`~.running.run_server`.

        Over HTTP, ``workers`` above 1 runs that many copies of this program on one port,
        supervised; ``redis_url`` is the Redis server they share state through, and ``grace``
        the seconds stopping workers give their requests (see ``docs/how-to/scale-out.md``).
        """
        run_server(
            cast("Server", self),
            transport,
            host=host,
            port=port,
            path=path,
            parser=parser,
            front_end=front_end,
            workers=workers,
            redis_url=redis_url,
            grace=grace,
        )

    def run_stdio(self) -> None:
        """Run a stdio server in this process: ``trio.run(self.serve_stdio)``."""
        trio.run(self.serve_stdio)
