"""One worker process of ``run --workers N``: serve HTTP on the socket the supervisor bound.

The supervisor (:mod:`.workers`) starts each worker as the same command it was started with,
and tells it through its environment that it is one:

- ``MCPTRIO_LISTEN_FD``: the socket the supervisor bound, inherited; the worker accepts from
  it, or (``MCPTRIO_REUSE_PORT`` set) from a socket of its own bound beside it with
  ``SO_REUSEPORT`` (see :mod:`.worker_sockets`); either way they all serve one port;
- ``MCPTRIO_SUPERVISOR_FD``: this worker's end of a socket pair with the supervisor. The worker
  writes ``ready`` on it once it serves; the supervisor's end closing (it died, even by
  SIGKILL) stops the worker as a signal would, so no worker outlives its supervisor;
- ``MCPTRIO_GRACE``: seconds a stopping worker gives the requests it is serving;
- ``MCPTRIO_WORKER_ID`` (``w0``, ``w1``...): stable across restarts of the same slot, for logs
  and for the server's own use; ``MCPTRIO_REDIS_URL``: the ``--redis`` URL, if any.

The descriptors (and ``MCPTRIO_REUSE_PORT``) are taken out of the environment as soon as they
are read, so that a process this worker starts does not believe it is a worker too.

A worker stops on SIGTERM, on SIGINT, or when the supervisor goes: it closes its copy of the
listening socket (the others keep accepting), closes idle connections, ends its open streams,
answers the requests it is serving, and exits once they are done or ``grace`` seconds have
passed, whichever is first; what is still running then is cancelled, and so it is at once on a
second signal.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Literal, Protocol

import trio

from ..runtime.session import SessionFactory
from ..transports.http.endpoints.security import HttpSecurity
from .scale_out import ScaledServer, scale_out_if_given
from .worker_sockets import listen_beside

__all__ = [
    "GRACE_ENV",
    "LISTEN_FD_ENV",
    "REDIS_URL_ENV",
    "REUSE_PORT_ENV",
    "SUPERVISOR_FD_ENV",
    "WORKER_ID_ENV",
    "WorkerServer",
    "WorkerSetup",
    "serve_worker",
    "take_worker_setup",
]

LISTEN_FD_ENV: Final = "MCPTRIO_LISTEN_FD"
SUPERVISOR_FD_ENV: Final = "MCPTRIO_SUPERVISOR_FD"
GRACE_ENV: Final = "MCPTRIO_GRACE"
WORKER_ID_ENV: Final = "MCPTRIO_WORKER_ID"
REDIS_URL_ENV: Final = "MCPTRIO_REDIS_URL"
REUSE_PORT_ENV: Final = "MCPTRIO_REUSE_PORT"

#: What a worker writes to its supervisor once it serves.
READY: Final = b"ready\n"


class WorkerServer(SessionFactory, ScaledServer, Protocol):
    """What a worker serves: the sessions of a server that shares its state through stores (a
    :class:`~mcptrio.Server` is one)."""


@dataclass(frozen=True)
class WorkerSetup:
    """What the supervisor handed this worker (see the module docstring)."""

    listening: socket.socket
    supervisor: socket.socket
    worker_id: str
    grace: float
    redis_url: str | None
    #: Whether the worker listens on a socket of its own beside ``listening`` (SO_REUSEPORT).
    reuse_port: bool = False


def take_worker_setup() -> WorkerSetup | None:
    """This process's :class:`WorkerSetup` when a supervisor started it, else ``None``.

    The descriptors leave the environment (see the module docstring): call it once."""
    listen_fd = os.environ.pop(LISTEN_FD_ENV, None)
    supervisor_fd = os.environ.pop(SUPERVISOR_FD_ENV, None)
    reuse_port = os.environ.pop(REUSE_PORT_ENV, "")
    if listen_fd is None or supervisor_fd is None:
        return None
    listening = socket.socket(fileno=int(listen_fd))
    return WorkerSetup(
        listening=listening,
        supervisor=socket.socket(fileno=int(supervisor_fd)),
        worker_id=os.environ.get(WORKER_ID_ENV, ""),
        grace=float(os.environ.get(GRACE_ENV, "10")),
        redis_url=os.environ.get(REDIS_URL_ENV) or None,
        reuse_port=bool(reuse_port),
    )


async def serve_worker(
    server: WorkerServer,
    setup: WorkerSetup,
    *,
    path: str = "/mcp",
    parser: Literal["auto", "h11", "httptools"] = "auto",
    security: HttpSecurity | None = None,
    ssl_context: ssl.SSLContext | None = None,
    **http: Any,
) -> None:
    """Serve ``server`` as one worker until told to stop (see the module docstring), with the
    endpoint's ``security`` and, given an ``ssl_context``, over HTTPS; returns once it has
    stopped. ``http`` are more ``McpHttpApp`` options (``metrics``...)."""
    from ..transports.http.endpoints.app import McpHttpApp
    from ..transports.http.serve import serve_http

    link = trio.SocketStream(trio.socket.from_stdlib_socket(setup.supervisor))
    stop = trio.Event()
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with link, scale_out_if_given(server, setup.redis_url) as options:
            app = McpHttpApp(server, path=path, security=security, **http, **options)
            # A queue of its own joins the port's only now that the worker can serve: opened
            # earlier, the connections the kernel hands it while it connects to Redis would
            # wait (and be reset if it failed to start).
            listening = listen_beside(setup.listening) if setup.reuse_port else setup.listening
            listener = trio.SocketListener(trio.socket.from_stdlib_socket(listening))
            async with trio.open_nursery() as hurrying:
                async with trio.open_nursery() as nursery:
                    serving = partial(
                        serve_http,
                        app,
                        parser=parser,
                        ssl_context=ssl_context,
                        listeners=[listener],
                        shutdown=stop,
                    )
                    await nursery.start(serving)
                    await link.send_all(READY)
                    async with trio.open_nursery() as waiting:
                        waiting.start_soon(_set_on_signal, signals, stop)
                        waiting.start_soon(_set_on_eof, link, stop)
                        await stop.wait()
                        waiting.cancel_scope.cancel()
                    # serve_http returns once drained; past the grace, or on a second signal,
                    # what is left is cancelled.
                    nursery.cancel_scope.deadline = trio.current_time() + setup.grace
                    hurrying.start_soon(_cancel_on_signal, signals, nursery.cancel_scope)
                hurrying.cancel_scope.cancel()


async def _set_on_signal(signals: AsyncIterator[int], stop: trio.Event) -> None:
    async for _ in signals:
        stop.set()
        return


async def _cancel_on_signal(signals: AsyncIterator[int], scope: trio.CancelScope) -> None:
    async for _ in signals:
        scope.cancel()
        return


async def _set_on_eof(link: trio.SocketStream, stop: trio.Event) -> None:
    """The supervisor never writes: anything read, or the end, means it is gone."""
    with suppress(trio.BrokenResourceError):
        await link.receive_some()
    stop.set()
