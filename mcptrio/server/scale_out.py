"""The plug point of scale-out: what a server serving beside others needs from Redis.

:func:`open_scale_out` is the one place where a process that serves an endpoint together with
other processes (the workers of ``mcptrio run --workers N``, or several machines given the same
``--redis URL``) turns the Redis URL into the keyword options of
:class:`~mcptrio.transports.http.endpoints.app.McpHttpApp`: the stores and the session directory
that let any worker answer any request. ``Server.run(..., redis_url=URL)``, ``mcptrio run
--redis URL`` and each worker process call it once, around the whole time they serve, and pass
what it yields to ``McpHttpApp(server, **options)``.

What it yields today is nothing: the Redis stores and the session directory are plugged in here
(connect in the context manager, hand the stores to the server, yield the session directory as
an option, close them when it exits). Until then a
worker given a URL serves exactly as one without, and ``run`` does not warn about the handshake
era for want of ``--redis``: the URL is taken to mean "the shared state is there".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .server import Server

__all__ = ["REDIS_SCHEMES", "check_redis_url", "open_scale_out"]

#: The URL schemes of a Redis (or Valkey) server that coredis connects to.
REDIS_SCHEMES = ("redis", "rediss", "unix")


def check_redis_url(url: str) -> str:
    """``url`` if it names a Redis server (``redis://``, ``rediss://``, ``unix://``); a
    ``ValueError`` that says so otherwise. Nothing is connected to."""
    scheme = urlsplit(url).scheme
    if scheme not in REDIS_SCHEMES:
        schemes = ", ".join(f"{name}://" for name in REDIS_SCHEMES)
        raise ValueError(f"{url!r} is not a Redis URL (use {schemes})")
    return url


@asynccontextmanager
async def open_scale_out(server: Server, redis_url: str) -> AsyncIterator[dict[str, Any]]:
    """The ``McpHttpApp`` keyword options that make this process one of several serving
    ``server`` at the same endpoint through the Redis server at ``redis_url``, open for the
    block's duration. It is entered before ``server`` is served, so it may also give the server
    itself what it shares (its stores).

    This is the plug point (see the module docstring): it yields ``{}`` until the Redis stores
    and the session directory are connected here.
    """
    check_redis_url(redis_url)
    yield {}
