"""Several HTTP workers in this process, each a server of its own made by ``make_server``, with
its own Redis client, stores and session directory (:func:`mcptrio.server.scale_out.
open_scale_out`, as ``mcptrio run --workers`` gives each worker process), behind a round-robin
load balancer: the scale-out topology, in one test. The workers share nothing but Redis."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio
from round_robin_balancer import serve_round_robin

import mcptrio
from mcptrio.server.scale_out import open_scale_out
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.serve import serve_http

__all__ = ["Worker", "Workers", "open_workers"]


@dataclass
class Worker:
    app: McpHttpApp
    server: mcptrio.Server
    port: int
    scope: trio.CancelScope

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        """End this worker (its sessions end; it leaves the directory)."""
        self.scope.cancel()


@dataclass
class Workers:
    workers: list[Worker]
    url: str

    def forwarded(self) -> int:
        return sum(w.app.relay.forwarded for w in self.workers if w.app.relay is not None)


async def _run_worker(
    make_server: Callable[[], mcptrio.Server],
    redis_url: str,
    prefix: str,
    app_options: dict[str, Any],
    stores_options: dict[str, Any],
    *,
    task_status: trio.TaskStatus[Worker],
) -> None:
    with trio.CancelScope() as scope:
        server = make_server()
        async with open_scale_out(server, redis_url, prefix=prefix, **stores_options) as options:
            app = McpHttpApp(server, **options, **app_options)
            async with trio.open_nursery() as nursery:
                url = await nursery.start(partial(serve_http, app, "127.0.0.1", 0))
                task_status.started(Worker(app, server, int(url.rsplit(":", 1)[1]), scope))


@asynccontextmanager
async def open_workers(
    make_server: Callable[[], mcptrio.Server],
    redis_url: str,
    count: int = 2,
    *,
    stores_options: dict[str, Any] | None = None,
    **app_options: Any,
) -> AsyncIterator[Workers]:
    """``count`` workers behind a round-robin balancer (``Workers.url``), each serving a
    ``make_server()`` of its own as ``McpHttpApp(server, **app_options)``, with the Redis stores
    (``open_stores(redis_url, **stores_options)``) under a key prefix of the call's own."""
    prefix = f"test{secrets.token_hex(4)}:"
    async with trio.open_nursery() as nursery:
        workers = [
            await nursery.start(
                _run_worker, make_server, redis_url, prefix, app_options, stores_options or {}
            )
            for _ in range(count)
        ]
        port = await nursery.start(serve_round_robin, [w.port for w in workers])
        yield Workers(workers, f"http://127.0.0.1:{port}")
        nursery.cancel_scope.cancel()
