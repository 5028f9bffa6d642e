"""Run any HttpApp on each of mcptrio's HTTP front ends, for tests; see this folder's conftest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from mcptrio.transports.http.engine.exchange import HttpApp

__all__ = ["FRONT_ENDS", "open_front_end"]

FRONT_ENDS = ["builtin-h11", "builtin-httptools", "hypercorn"]


@asynccontextmanager
async def open_front_end(front_end: str, app: HttpApp, **limits: Any) -> AsyncIterator[str]:
    """Serve ``app`` on ``front_end`` (one of :data:`FRONT_ENDS`) and yield its base URL.

    ``limits`` are :class:`~mcptrio.transports.http.engine.builtin_server.ServerLimits` fields. On
    Hypercorn, the ones it has an equivalent for are mapped onto its config
    (``keep_alive_timeout``, ``max_head_size``, ``header_timeout``); the others are ignored.
    The server runs in a nursery this context manager owns and is cancelled on exit. The app's
    ``run`` (``McpHttpApp`` has one) is *not* started here: start it yourself, or use
    ``serve_http``, which does.
    """
    async with trio.open_nursery() as nursery:
        if front_end.startswith("builtin-"):
            from mcptrio.transports.http.engine.builtin_server import ServerLimits, serve_builtin

            parser = front_end.removeprefix("builtin-")
            url = await nursery.start(
                _serve_builtin, app, parser, ServerLimits(**limits), serve_builtin
            )
        elif front_end == "hypercorn":
            from hypercorn.config import Config

            from mcptrio.transports.http.engine.asgi import serve_hypercorn

            config = Config()
            config.accesslog = None
            if "keep_alive_timeout" in limits:
                config.keep_alive_timeout = limits["keep_alive_timeout"]
            if "max_head_size" in limits:
                config.h11_max_incomplete_size = limits["max_head_size"]
            if "header_timeout" in limits:
                config.read_timeout = int(limits["header_timeout"]) or 1
            url = await nursery.start(_serve_hypercorn, app, config, serve_hypercorn)
        else:
            raise ValueError(f"unknown front end {front_end!r}; expected one of {FRONT_ENDS}")
        try:
            yield url
        finally:
            nursery.cancel_scope.cancel()


async def _serve_builtin(
    app: HttpApp, parser: str, limits: Any, serve: Any, *, task_status: Any
) -> None:
    await serve(app, parser=parser, limits=limits, task_status=task_status)


async def _serve_hypercorn(app: HttpApp, config: Any, serve: Any, *, task_status: Any) -> None:
    await serve(app, config=config, task_status=task_status)
