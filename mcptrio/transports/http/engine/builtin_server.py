"""The built-in HTTP/1.1 front end: serves an :class:`~.exchange.HttpApp` on trio sockets.

:func:`serve_builtin` listens, and runs each accepted connection in a task of its own
(:class:`~.builtin_connection.BuiltinConnection`, where the request loop and its theory of
operation are).

Limits (:class:`ServerLimits`) defend against slow or hostile clients: a request head must
arrive within ``header_timeout``; an idle keep-alive connection is closed after
``keep_alive_timeout``; heads over ``max_head_size`` get 431; each wait for body bytes and each
write has its own deadline; a body the app did not read is discarded up to
``discard_body_limit``, past which the connection is closed.

Connection slots (:mod:`.connection_slots`): at most ``max_connections`` connections are served
at once, and ``max_connections_per_client`` per client address when set. A client that finds
no slot free takes the one of the connection that has waited longest on its client (idle, still
sending its head, or holding a GET stream); when every connection is busy serving a request it
is answered 503 with ``Retry-After`` and closed, never left in the listen backlog.
"""

from __future__ import annotations

import contextlib
import errno
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio

from .builtin_connection import RECEIVE_SIZE, BuiltinConnection
from .builtin_exchange import TEXT_PLAIN
from .connection_slots import MAX_REFUSING, ConnectionSlots
from .exchange import HttpApp
from .h11_parser import H11RequestParser
from .parser import RequestParser, response_head
from .parser_choice import ParserName, httptools_chosen
from .server_limits import ServerLimits
from .wait_timer import WaitTimer
from .watch_hub import WatchHub

__all__ = ["ServerLimits", "serve_builtin"]

logger = logging.getLogger("mcptrio.transports.http")

_ACCEPT_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}


def _parser_factory(parser: ParserName) -> Callable[[int], RequestParser]:
    if httptools_chosen(parser):
        from .httptools_parser import HttptoolsRequestParser

        return HttptoolsRequestParser
    return H11RequestParser


@dataclass(frozen=True, slots=True)
class _Site:
    """What every connection of one :func:`serve_builtin` call shares."""

    app: HttpApp
    parser_type: Callable[[int], RequestParser]
    limits: ServerLimits
    ssl_context: object | None
    scheme: str
    #: Who holds the ``max_connections`` connection slots.
    slots: ConnectionSlots
    #: The deadlines of the connections' waits on their clients (see :mod:`.wait_timer`).
    timer: WaitTimer
    #: Watches plain TCP connections while their responses stream (see :mod:`.watch_hub`).
    hub: WatchHub | None = None


async def serve_builtin(
    app: HttpApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    parser: ParserName = "auto",
    limits: ServerLimits | None = None,
    ssl_context: object | None = None,
    listeners: Sequence[trio.SocketListener] | None = None,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; reports the base URL when listening.

    ``parser`` is ``"httptools"`` (fast, C), ``"h11"`` (pure Python) or ``"auto"`` (httptools
    when importable). ``ssl_context`` (an ``ssl.SSLContext``) serves HTTPS through
    ``trio.SSLStream``. Cancelling the call closes the listener and every connection.

    ``listeners`` are served instead of binding ``host:port`` (a socket another process bound
    and handed down, as the workers of :mod:`mcptrio.server.workers` do); the call closes them.

    ``shutdown`` stops the server gracefully when set: streams that wait on their client are
    cut, requests being served are answered (without keep-alive), a request arriving on an idle
    connection too; new connections are still accepted and served that way for
    ``limits.stop_listening_after`` seconds, then the listeners are closed (the connections the
    kernel had accepted already are served first), and the call returns once every connection
    has ended, an idle one at the latest after ``keep_alive_timeout`` (see
    :mod:`.connection_slots`). Bound that wait with a deadline of your own (a request may take
    long); cancelling the call cuts what is left.
    """
    import ssl

    if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
        raise TypeError("ssl_context must be an ssl.SSLContext")
    parser_type = _parser_factory(parser)
    limits = limits or ServerLimits()
    if listeners is None:
        listeners = await trio.open_tcp_listeners(port, host=host)
    sockname = listeners[0].socket.getsockname()
    scheme = "https" if ssl_context is not None else "http"
    bound_host = f"[{sockname[0]}]" if ":" in sockname[0] else sockname[0]
    slots = ConnectionSlots(limits.max_connections, limits.max_connections_per_client)
    # TLS connections are read through their stream: their watchers are tasks.
    hub = WatchHub.open() if ssl_context is None else None
    site = _Site(app, parser_type, limits, ssl_context, scheme, slots, WaitTimer(), hub)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(site.timer.run)
            if hub is not None:
                nursery.start_soon(hub.run)
            async with trio.open_nursery() as connections:
                stop_accepting = [trio.CancelScope() for _ in listeners]
                async with trio.open_nursery() as accepting:
                    for listener, scope in zip(listeners, stop_accepting, strict=True):
                        accepting.start_soon(_accept_loop, listener, site, connections, scope)
                    task_status.started(f"{scheme}://{bound_host}:{sockname[1]}")
                    if shutdown is not None:
                        await shutdown.wait()
                        # Draining before the listener closes: the connections accepted from
                        # now on (the listen backlog's last ones included) are answered
                        # without keep-alive too.
                        slots.drain()
                        # Listening a while longer, so that a balancer told of the stop has
                        # stopped sending connections when the listener closes (see
                        # ServerLimits.stop_listening_after).
                        await trio.sleep(limits.stop_listening_after)
                        for scope in stop_accepting:
                            scope.cancel()
                # Only a shutdown gets here: the listeners are closed; let the connections end.
            nursery.cancel_scope.cancel()
    finally:
        if hub is not None:
            hub.close()


async def _accept_loop(
    listener: trio.SocketListener,
    site: _Site,
    connections: trio.Nursery,
    stop_accepting: trio.CancelScope,
) -> None:
    """Accept and serve until ``stop_accepting`` is cancelled (a graceful stop); then serve the
    connections already waiting in the listen backlog before closing the listener. Their
    clients saw them accepted and may have sent a request: closing the listener would reset
    them, and a client cannot tell whether such a request ran."""
    async with listener:
        with stop_accepting:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as error:
                    if error.errno in _ACCEPT_ERRNOS:
                        logger.error("accept failed (%s); pausing 100 ms", error)
                        await trio.sleep(0.1)
                        continue
                    raise
                await _serve_accepted(stream, site, connections)
        # A readable listening socket has a connection to accept: this accept does not block.
        while listener.socket.is_readable():
            try:
                stream = await listener.accept()
            except OSError:
                break
            await _serve_accepted(stream, site, connections)


async def _serve_accepted(
    stream: trio.SocketStream, site: _Site, connections: trio.Nursery
) -> None:
    """Serve an accepted connection if it gets a slot; else refuse it (see the module)."""
    slots = site.slots
    try:
        peer = stream.socket.getpeername()
        client: tuple[str, int] | None = (peer[0], peer[1])
    except OSError:
        client = None
    if slots.admit(client[0] if client is not None else None):
        connections.start_soon(_serve_connection, stream, site, client)
    elif slots.refusing < MAX_REFUSING:
        slots.refusing += 1
        connections.start_soon(_refuse_for_want_of_a_slot, stream, site)
    else:
        await trio.aclose_forcefully(stream)


async def _refuse_for_want_of_a_slot(stream: trio.SocketStream, site: _Site) -> None:
    """503 with ``Retry-After``, then close: every slot is busy (see :mod:`.connection_slots`).

    Bounded in time like a lingering close: the request is not read, only drained for a moment
    so that the answer is not lost to a reset."""
    body = b"the server is serving as many connections as it may; retry later"
    retry = (b"retry-after", b"%d" % site.limits.retry_after)
    head = response_head(503, [*TEXT_PLAIN, retry], content_length=len(body), keep_alive=False)
    try:
        with trio.move_on_after(site.limits.linger_timeout):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(head + body)
                await stream.send_eof()
                drained = 0
                while drained < RECEIVE_SIZE and (data := await stream.receive_some(RECEIVE_SIZE)):
                    drained += len(data)
    finally:
        site.slots.refusing -= 1
        await trio.aclose_forcefully(stream)


async def _serve_connection(
    stream: trio.SocketStream, site: _Site, client: tuple[str, int] | None
) -> None:
    ssl_context = site.ssl_context
    host = client[0] if client is not None else None
    connection: BuiltinConnection | None = None
    try:
        wrapped: trio.abc.Stream = stream
        if ssl_context is not None:
            import ssl

            assert isinstance(ssl_context, ssl.SSLContext)
            wrapped = trio.SSLStream(stream, ssl_context, server_side=True, https_compatible=True)
        limits = site.limits
        connection = BuiltinConnection(
            wrapped, site.app, site.parser_type(limits.max_head_size), limits, site.timer
        )
        connection.scheme = site.scheme
        connection.client = client
        connection.client_host = host
        connection.slots = site.slots
        if site.hub is not None and connection.fd is not None:
            # Its watcher is the hub's: no nursery for it, which every streaming connection would
            # otherwise keep for its whole life.
            connection.hub = site.hub
            with connection.scope:
                await connection.run()
        else:
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
        if connection is not None:
            site.timer.ended(connection)
            connection.release_slot()
        else:
            site.slots.release(None, host)
        await trio.aclose_forcefully(stream)
