"""Several HTTP workers of one server in this process, each with its own Redis connection and
session directory, behind a round-robin load balancer: the scale-out topology, in one test."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import coredis
import trio
from round_robin_balancer import serve_round_robin

import mcptrio
from mcptrio.stores.redis_session_directory import RedisSessionDirectory
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.serve import serve_http

__all__ = ["Worker", "Workers", "open_workers"]


@dataclass
class Worker:
    app: McpHttpApp
    port: int
    scope: trio.CancelScope

    def stop(self) -> None:
        """End this worker (its sessions end; it leaves the directory)."""
        self.scope.cancel()


@dataclass
class Workers:
    workers: list[Worker]
    url: str
    redis: coredis.Redis[bytes]
    prefix: str
    stopped: list[Worker] = field(default_factory=list)

    def forwarded(self) -> int:
        return sum(w.app.relay.forwarded for w in self.workers if w.app.relay is not None)


async def _run_worker(
    server: mcptrio.Server,
    redis_url: str,
    prefix: str,
    name: str,
    app_options: dict[str, Any],
    *,
    task_status: trio.TaskStatus[Worker],
) -> None:
    with trio.CancelScope() as scope:
        async with coredis.Redis.from_url(redis_url) as redis:
            directory = RedisSessionDirectory(
                redis, instance=f"{name}_{secrets.token_hex(3)}", prefix=prefix
            )
            app = McpHttpApp(server, session_directory=directory, **app_options)
            async with trio.open_nursery() as nursery:
                url = await nursery.start(partial(serve_http, app, "127.0.0.1", 0))
                task_status.started(Worker(app, int(url.rsplit(":", 1)[1]), scope))


@asynccontextmanager
async def open_workers(
    server: mcptrio.Server, redis_url: str, count: int = 2, **app_options: Any
) -> AsyncIterator[Workers]:
    """``count`` workers of ``server`` behind a round-robin balancer (``Workers.url``), each an
    ``McpHttpApp(server, **app_options)``."""
    prefix = f"test{secrets.token_hex(4)}:"
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(coredis.Redis.from_url(redis_url))
        nursery = await stack.enter_async_context(trio.open_nursery())
        workers = [
            await nursery.start(_run_worker, server, redis_url, prefix, f"w{i}", app_options)
            for i in range(count)
        ]
        port = await nursery.start(serve_round_robin, [w.port for w in workers])
        yield Workers(workers, f"http://127.0.0.1:{port}", redis, prefix)
        nursery.cancel_scope.cancel()
