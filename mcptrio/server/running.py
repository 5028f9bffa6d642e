"""``Server.run``: serve a server over one transport as a whole program, in one line.

::

    server.run()                                        # stdio
    server.run("http")                                  # http://127.0.0.1:8000/mcp
    server.run("websocket", port=9000)                  # ws://127.0.0.1:9000/mcp
    server.run("http", workers=4, redis_url="redis://localhost:6379")   # 4 processes, 1 port

:func:`run_server` is ``trio.run`` around the matching ``serve_*`` method, for a process whose
only job is this server; inside a Trio program of your own, start the ``serve_*`` method in your
nursery instead. Over HTTP and WebSocket the URL clients connect to is written to stderr as one
line (stdout is left alone: it may be a pipe someone reads).

SIGTERM (``docker stop``, systemd, Kubernetes) and Ctrl-C stop the run and it returns normally.
The first one drains, over every transport: no connection is accepted any more, open streams
end, the requests being served are answered, and the run returns once they have, or after
``grace`` seconds, cancelling what is left; a second signal stops at once.

With ``workers`` above 1 (HTTP, built-in front end) this process becomes a supervisor
(:mod:`.workers`) that binds the port and runs that many copies of the program as workers
(:mod:`.worker`); each copy calls ``run`` again and serves the supervisor's socket instead of
binding one. ``redis_url`` is where their shared state lives (:mod:`.scale_out`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, Final, Literal, Protocol, TextIO, TypedDict

import trio

from ..protocol.revisions import HANDSHAKE_SUPPORTED, STATELESS_SUPPORTED
from ..protocol.types import Implementation
from ..runtime.nurseries import open_unwrapping_nursery
from .development_authorization import (
    DEV_ISSUER_ENV,
    open_development_authorization,
    options_in_worker,
)
from .scale_out import check_redis_url, scale_out_if_given
from .serving_options import ServingOptions
from .stdio_serving import serve_stdio_session
from .worker import WorkerServer, serve_worker, take_worker_setup
from .workers import serve_workers

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "TRANSPORTS",
    "RunnableServer",
    "TransportName",
    "run_server",
    "serve_until_signalled",
]

#: The port ``Server.run`` and ``mcptrio run`` serve HTTP and WebSocket on unless told otherwise
#: (the port FastMCP and most Python MCP servers use, so clients' examples work unchanged).
DEFAULT_PORT: Final = 8000
#: Loopback only unless told otherwise: a development server is not exposed to the network.
DEFAULT_HOST: Final = "127.0.0.1"
#: Seconds stopping workers give the requests they are serving.
DEFAULT_GRACE: Final = 10.0

TransportName = Literal["stdio", "http", "websocket"]
TRANSPORTS: Final[tuple[TransportName, ...]] = ("stdio", "http", "websocket")

_NO_SHARED_SESSIONS = (
    "warning: {workers} workers and no Redis: a handshake-era session (revisions up to "
    f"{HANDSHAKE_SUPPORTED[0]}) lives on the worker that initialized it, and its other requests"
    " may reach another worker, which does not know it; give a Redis URL (--redis) to serve"
    f" them. Stateless ({STATELESS_SUPPORTED[0]}) requests are served by any worker."
)


class RunnableServer(WorkerServer, Protocol):
    """What :func:`run_server` runs: a server's sessions, name and lifespan (a
    :class:`~mcptrio.Server` has them), served over the transport asked for."""

    info: Implementation

    def open_lifespan(self) -> AbstractAsyncContextManager[Any]: ...


class RunOptions(TypedDict, total=False):
    """The options of :func:`run_server` that :meth:`mcptrio.Server.run` takes (each one's
    meaning is there)."""

    host: str
    port: int
    path: str
    parser: Literal["auto", "h11", "httptools"]
    front_end: Literal["builtin", "hypercorn"]
    workers: int
    redis_url: str | None
    grace: float
    serving: ServingOptions | None


def run_server(
    server: RunnableServer,
    transport: TransportName = "stdio",
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    path: str = "/mcp",
    parser: Literal["auto", "h11", "httptools"] = "auto",
    front_end: Literal["builtin", "hypercorn"] = "builtin",
    announce: TextIO | None = None,
    workers: int = 1,
    redis_url: str | None = None,
    grace: float = DEFAULT_GRACE,
    worker_command: Sequence[str] | None = None,
    serving: ServingOptions | None = None,
    metrics: bool = False,
    metrics_allow: Collection[str] | None = None,
) -> None:
    """Serve ``server`` over ``transport`` until stdin ends (stdio), SIGTERM or Ctrl-C (see the
    module docstring for how a signal stops it, within ``grace`` seconds).

    ``announce`` is where the URL line goes for HTTP and WebSocket (``None``: stderr).
    A port already in use raises ``OSError`` before anything is served.

    ``workers`` above 1 serves HTTP from that many processes on one port (see the module
    docstring): each runs ``worker_command`` (default: this program's command line, as it
    was started), is restarted when it crashes, and SIGTERM or Ctrl-C stops them all, giving
    the requests they serve ``grace`` seconds. Workers that keep crashing raise
    :class:`~.workers.WorkersFailed`. ``redis_url`` (a single process too) is passed to
    :func:`~.scale_out.open_scale_out`.

    ``serving`` sets how HTTP and WebSocket are served: the hosts and origins let in, the path
    (it overrides ``path``), TLS and authorization (:mod:`.serving_options`). ``metrics``
    serves Prometheus metrics at ``/metrics`` over HTTP to ``metrics_allow`` (loopback when
    ``None``; see :mod:`mcptrio.transports.http.endpoints.operations`).
    """
    serving = ServingOptions(path=path) if serving is None else serving
    path = serving.path
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}: use one of {', '.join(TRANSPORTS)}")
    serving.check_served(transport, host, port)
    if redis_url is not None:
        check_redis_url(redis_url)
    out = sys.stderr if announce is None else announce
    if transport == "http" and (setup := take_worker_setup()) is not None:
        in_worker = options_in_worker(serving, host, port)
        worker = partial(
            serve_worker,
            server,
            setup,
            path=path,
            parser=parser,
            security=in_worker.security(),
            ssl_context=in_worker.ssl_context(),
            adopt_sessions=serving.adopt_sessions,
            **_http_options(metrics, metrics_allow),
        )
        trio.run(worker)
        return
    if workers != 1:
        _check_workers(transport, front_end, workers, grace)
        if redis_url is None:
            print(_NO_SHARED_SESSIONS.format(workers=workers), file=out, flush=True)
        else:
            # Checked once here, before any worker starts: a missing extra or a Redis that is
            # not there would otherwise fail every worker, each restarted until the supervisor
            # gave up, every copy printing the same error.
            trio.run(_check_redis, redis_url)
        if metrics:
            # Missing, prometheus-client would fail every worker in turn: one line instead.
            from ..transports.http.endpoints.operations import require_metrics

            require_metrics()
        command = [sys.executable, *sys.orig_argv[1:]] if worker_command is None else worker_command
        supervise = partial(
            serve_workers,
            command,
            workers,
            host=host,
            port=port,
            grace=grace,
            redis_url=redis_url,
        )
        trio.run(_supervise, server, supervise, serving, (host, port), workers, out)
        return

    async def serve(stop: trio.Event) -> None:
        if transport == "stdio":
            await serve_stdio_session(server, shutdown=stop)
            return
        # A lone error (a port in use, say) leaves as itself, not in a group.
        async with (
            open_development_authorization(serving, host, port, out) as served,
            open_unwrapping_nursery() as nursery,
        ):
            if transport == "http":
                options = _http_options(metrics, metrics_allow)
                options["adopt_sessions"] = serving.adopt_sessions
                http = partial(
                    _serve_http,
                    server,
                    host,
                    port,
                    served,
                    parser,
                    front_end,
                    redis_url,
                    stop,
                    options,
                )
                base = await nursery.start(http)
                # Under --auth dev the URL is the one its tokens name.
                url = served.resource if serving.auth == "dev" else f"{base}{path}"
            else:
                url = await nursery.start(_serve_websocket, server, host, port, serving, stop)
            print(f"Serving {server.info.name} over {transport} at {url}", file=out, flush=True)

    # The first signal drains, within the grace (see _stop_on_signals).
    trio.run(serve_until_signalled, serve, grace)


async def serve_until_signalled(
    serve: Callable[[trio.Event], Awaitable[None]], grace: float
) -> None:
    """Run ``serve(stop)`` until it returns, or until SIGTERM or SIGINT: the first signal sets
    ``stop`` (the serving stops taking work and finishes what it has) and gives it ``grace``
    seconds; a second signal, or the grace running out, cancels what is left. Either way the
    run ends normally: a stop asked for is not an error."""
    stop = trio.Event()
    with (
        trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals,
        trio.CancelScope() as serving,
    ):
        # A lone error (a port in use, say) leaves as itself, not in a group.
        async with open_unwrapping_nursery() as nursery:
            nursery.start_soon(_stop_on_signals, signals, stop, serving, grace)
            await serve(stop)
            nursery.cancel_scope.cancel()


async def _stop_on_signals(
    signals: AsyncIterator[int], stop: trio.Event, serving: trio.CancelScope, grace: float
) -> None:
    async for _ in signals:
        if stop.is_set():
            serving.cancel()
            return
        stop.set()
        serving.deadline = trio.current_time() + grace


async def _check_redis(redis_url: str) -> None:
    """Connect to ``redis_url`` and ``PING`` it: ``ImportError`` without the ``redis`` extra,
    :class:`~mcptrio.stores.errors.StoreUnavailable` (one line: the URL and the reason) if
    Redis does not answer."""
    from ..stores.redis_calls import open_redis

    async with open_redis(redis_url):
        pass


def _check_workers(transport: str, front_end: str, workers: int, grace: float) -> None:
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if transport != "http":
        raise ValueError("several workers serve HTTP only (--transport http)")
    if front_end != "builtin":
        raise ValueError("several workers need the built-in front end (Hypercorn has its own)")
    if grace < 0:
        raise ValueError(f"grace must be 0 or more seconds, not {grace}")


async def _supervise(
    server: RunnableServer,
    supervise: Callable[..., Awaitable[None]],
    serving: ServingOptions,
    address: tuple[str, int],
    workers: int,
    out: TextIO,
) -> None:
    """Run the supervisor until SIGTERM or SIGINT, then stop it (and its workers) gracefully;
    a second signal stops them at once. A signal before every worker serves stops them too.
    Under ``--auth dev`` the supervisor serves the authorization server the workers use."""
    hurry = trio.Event()
    scheme = "http" if serving.certfile is None else "https"
    announce = _ServingLine(
        f"Serving {server.info.name} with {workers} workers over http at", scheme, serving.path, out
    )
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with (
            open_development_authorization(serving, *address, out) as served,
            open_unwrapping_nursery() as nursery,
        ):
            env = None
            if serving.auth == "dev":
                assert served.issuer is not None
                env = {**os.environ, DEV_ISSUER_ENV: served.issuer}
            with trio.CancelScope() as supervising:
                nursery.start_soon(_stop_workers_on_signals, signals, supervising, hurry)
                # In this task, not started in the nursery: a stop may come before the
                # supervisor reports its URL, and then there is nothing to report.
                await supervise(hurry=hurry, task_status=announce, env=env)
            # Stopped: the signal watcher goes too.
            nursery.cancel_scope.cancel()


class _ServingLine:
    """The ``task_status`` the supervisor reports its URL to: the URL goes out as the line
    saying what is served (the supervisor binds the socket; the workers speak TLS on it, if
    any)."""

    def __init__(self, words: str, scheme: str, path: str, out: TextIO) -> None:
        self._words, self._scheme, self._path, self._out = words, scheme, path, out

    def started(self, value: str | None = None) -> None:
        url = self._scheme + (value or "").removeprefix("http")
        print(f"{self._words} {url}{self._path}", file=self._out, flush=True)


async def _stop_workers_on_signals(
    signals: AsyncIterator[int], supervising: trio.CancelScope, hurry: trio.Event
) -> None:
    """The first signal stops the supervisor (its workers drain); the second hurries them."""
    async for _ in signals:
        if supervising.cancel_called:
            hurry.set()
            return
        supervising.cancel()


async def _serve_http(
    server: RunnableServer,
    host: str,
    port: int,
    serving: ServingOptions,
    parser: Literal["auto", "h11", "httptools"],
    front_end: Literal["builtin", "hypercorn"],
    redis_url: str | None,
    stop: trio.Event,
    http: dict[str, Any],
    *,
    task_status: trio.TaskStatus[str],
) -> None:
    from ..transports.http.endpoints.app import McpHttpApp
    from ..transports.http.serve import serve_http

    async with scale_out_if_given(server, redis_url) as options:
        app = McpHttpApp(server, path=serving.path, security=serving.security(), **http, **options)
        await serve_http(
            app,
            host,
            port,
            parser=parser,
            front_end=front_end,
            ssl_context=serving.ssl_context(),
            shutdown=stop,
            task_status=task_status,
        )


def _http_options(metrics: bool, metrics_allow: Collection[str] | None) -> dict[str, Any]:
    """The ``McpHttpApp`` options of ``run_server``'s own arguments."""
    if metrics_allow is None:
        return {"metrics": metrics}
    return {"metrics": metrics, "metrics_allow": metrics_allow}


async def _serve_websocket(
    server: RunnableServer,
    host: str,
    port: int,
    serving: ServingOptions,
    stop: trio.Event,
    *,
    task_status: trio.TaskStatus[str],
) -> None:
    from ..transports.websocket_server import serve_websocket

    security = serving.security()
    await serve_websocket(
        server,
        host=host,
        port=port,
        path=serving.path,
        allowed_hosts=security.origin_host.allowed_hosts,
        allowed_origins=security.origin_host.allowed_origins,
        ssl_context=serving.ssl_context(),
        shutdown=stop,
        task_status=task_status,
    )
