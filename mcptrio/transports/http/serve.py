"""``serve_http``: one call to serve an MCP server, an HttpApp, or several, on either front end."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal

import trio

from .engine.builtin_server import ServerLimits, serve_builtin
from .engine.exchange import HttpApp
from .engine.parser_choice import ParserName
from .engine.router import HttpRouter

__all__ = ["as_http_app", "serve_http"]


def as_http_app(target: Any) -> HttpApp:
    """``target`` as an :class:`~.engine.exchange.HttpApp`.

    An HttpApp is used as is; a mapping of path prefix to targets becomes an
    :class:`~.engine.router.HttpRouter`; anything with a ``session(transport)`` method (a
    :class:`mcptrio.Server`) is wrapped in ``McpHttpApp``.
    """
    if isinstance(target, Mapping):
        return HttpRouter({prefix: as_http_app(inner) for prefix, inner in target.items()})
    if callable(getattr(target, "handle_http", None)):
        app: HttpApp = target
        return app
    if callable(getattr(target, "session", None)):
        from .endpoints.app import McpHttpApp

        return McpHttpApp(target)
    raise TypeError(f"cannot serve {target!r} over HTTP: not an HttpApp, a mapping or a server")


async def serve_http(
    target: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    front_end: Literal["builtin", "hypercorn"] = "builtin",
    parser: ParserName = "auto",
    limits: ServerLimits | None = None,
    ssl_context: ssl.SSLContext | None = None,
    listeners: Sequence[trio.SocketListener] | None = None,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``target`` over HTTP until cancelled; reports the base URL (``http://host:port``).

    ``target`` is a server, an :class:`~.engine.exchange.HttpApp`, or a mapping of path prefix
    to either (served by an :class:`~.engine.router.HttpRouter`, longest prefix first). If the app
    has a ``run`` method (``McpHttpApp`` keeps its sessions there), it is started first, in this
    call's nursery, so sessions end when the call is cancelled.

    ``front_end="builtin"`` is the built-in HTTP/1.1 server (``parser``, ``limits``);
    ``"hypercorn"`` is Hypercorn's trio worker, where ``limits`` maps onto its config as far
    as it has equivalents (keep-alive and header timeouts, head size).

    The lifespan of every server served (``Server(lifespan=...)``) is entered before anything is
    served and left after the serving stops (see :mod:`mcptrio.server.lifespan`).

    A ``shutdown`` event stops either front end gracefully: when it is set, no connection is
    accepted any more (by the built-in one after ``limits.stop_listening_after``, the time a
    balancer takes to stop sending connections), requests being served are answered, then the
    app's ``drain`` (if it has one: ``McpHttpApp`` answers what other workers forwarded to it)
    runs, and the call returns (the sessions ending with it). Bound that wait yourself;
    cancelling the call cuts it short. The built-in front end also takes ``listeners`` to serve
    instead of binding ``host:port``. See :func:`~.engine.builtin_server.serve_builtin`.
    """
    app = as_http_app(target)
    if front_end != "builtin" and listeners is not None:
        raise ValueError("listeners are an option of the built-in front end")
    served = _Served(host, port, front_end, parser, limits, ssl_context, listeners, shutdown)
    async with contextlib.AsyncExitStack() as lifespans:
        for lifespan in _lifespans(app):
            await lifespans.enter_async_context(lifespan)
        await _serve(app, served, task_status)


async def _drain(app: HttpApp) -> None:
    """The app's own graceful stop, once the front end has drained (see :func:`serve_http`)."""
    drain = getattr(app, "drain", None)
    if callable(drain):
        await drain()


@dataclass(frozen=True)
class _Served:
    """Where and how :func:`serve_http` serves."""

    host: str
    port: int
    front_end: str
    parser: ParserName
    limits: ServerLimits | None
    ssl_context: ssl.SSLContext | None
    listeners: Sequence[trio.SocketListener] | None
    shutdown: trio.Event | None


async def _serve(app: HttpApp, served: _Served, task_status: trio.TaskStatus[str]) -> None:
    host, port, limits = served.host, served.port, served.limits
    async with trio.open_nursery() as nursery:
        run = getattr(app, "run", None)
        if callable(run):
            await nursery.start(run)
        if served.front_end == "builtin":

            async def builtin(task_status: trio.TaskStatus[str]) -> None:
                await serve_builtin(
                    app,
                    host=host,
                    port=port,
                    parser=served.parser,
                    limits=limits,
                    ssl_context=served.ssl_context,
                    listeners=served.listeners,
                    shutdown=served.shutdown,
                    task_status=task_status,
                )
                # It returns only after a graceful shutdown: the sessions end with it.
                await _drain(app)
                nursery.cancel_scope.cancel()

            url = await nursery.start(builtin)
        elif served.front_end == "hypercorn":
            from .engine.asgi import serve_hypercorn

            config = hypercorn_config(limits) if limits is not None else None

            async def hypercorn(task_status: trio.TaskStatus[str]) -> None:
                await serve_hypercorn(
                    app,
                    host=host,
                    port=port,
                    config=config,
                    ssl_context=served.ssl_context,
                    shutdown=served.shutdown,
                    task_status=task_status,
                )
                # It returns only after a graceful shutdown: the sessions end with it.
                await _drain(app)
                nursery.cancel_scope.cancel()

            url = await nursery.start(hypercorn)
        else:
            raise ValueError(
                f"unknown front end {served.front_end!r}: use 'builtin' or 'hypercorn'"
            )
        _allow_bound_address(app, host, int(url.rsplit(":", 1)[1]))
        task_status.started(url)


def _lifespans(app: HttpApp) -> list[AbstractAsyncContextManager[Any]]:
    """The lifespans of the servers behind ``app`` (a server's ``open_lifespan``)."""
    if isinstance(app, HttpRouter):
        return [lifespan for _prefix, inner in app.routes for lifespan in _lifespans(inner)]
    open_lifespan = getattr(getattr(app, "server", None), "open_lifespan", None)
    return [open_lifespan()] if callable(open_lifespan) else []


def _allow_bound_address(app: HttpApp, host: str, port: int) -> None:
    """Let clients name the server by the (non-loopback) address it is bound to."""
    if isinstance(app, HttpRouter):
        for _prefix, inner in app.routes:
            _allow_bound_address(inner, host, port)
        return
    security = getattr(app, "security", None)
    allow = getattr(security, "allow_bound_address", None)
    if callable(allow):
        allow(host, port)


def hypercorn_config(limits: ServerLimits) -> Any:
    """A ``hypercorn.config.Config`` with the parts of ``limits`` Hypercorn has."""
    from hypercorn.config import Config

    config = Config()
    config.accesslog = None
    config.keep_alive_timeout = limits.keep_alive_timeout
    config.h11_max_incomplete_size = limits.max_head_size
    config.read_timeout = max(1, round(limits.header_timeout))
    config.h2_max_header_list_size = limits.max_head_size
    return config
