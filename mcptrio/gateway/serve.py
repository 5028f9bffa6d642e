"""Serving a gateway from its configuration file: what ``python -m mcptrio.gateway`` (and the
``mcptrio gateway`` command) run.

::

    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_gateway_config, "gateway.json")
"""

from __future__ import annotations

import os
from typing import Any, Literal

import trio

from .config import load_gateway_options
from .gateway import Gateway

__all__ = ["serve_gateway", "serve_gateway_config"]


async def serve_gateway(
    gateway: Gateway,
    *,
    transport: Literal["http", "stdio"] = "http",
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    **http_options: Any,
) -> None:
    """Run ``gateway``'s upstreams and serve it, until cancelled.

    Over ``"http"`` (Streamable HTTP at ``path``, WebSocket and the legacy HTTP+SSE endpoints on
    the same port; ``http_options`` are :meth:`~mcptrio.Server.serve_http`'s, ``shutdown`` for a
    graceful stop among them) it reports the endpoint's URL; over ``"stdio"`` it serves one
    session on this process's stdin and stdout, reports ``"stdio"``, and returns when stdin
    ends. Readiness is reported once every upstream has been tried once.
    """
    async with trio.open_nursery() as nursery:
        await nursery.start(gateway.serve_upstreams)
        if transport == "stdio":
            task_status.started("stdio")
            await gateway.serve_stdio()
            nursery.cancel_scope.cancel()
            return

        async def serve_http(task_status: trio.TaskStatus[str]) -> None:
            await gateway.serve_http(host, port, path=path, task_status=task_status, **http_options)
            # It returns only after a graceful shutdown (``shutdown=``): the upstreams go too.
            nursery.cancel_scope.cancel()

        base: str = await nursery.start(serve_http)
        task_status.started(base + path)


async def serve_gateway_config(
    config: str | os.PathLike[str],
    *,
    name: str = "mcptrio-gateway",
    transport: Literal["http", "stdio"] = "http",
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve a :class:`Gateway` over the upstreams of the file ``config`` (see
    :mod:`.config`): :func:`serve_gateway` with a gateway built from it."""
    gateway = Gateway(name, **load_gateway_options(config))
    await serve_gateway(
        gateway, transport=transport, host=host, port=port, path=path, task_status=task_status
    )
