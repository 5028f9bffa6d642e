"""The plug point of scale-out: what a server serving beside others needs from Redis.

:func:`open_scale_out` is the one place where a process that serves an endpoint together with
other processes (the workers of ``mcptrio run --workers N``, or several machines given the same
``--redis URL``) turns the Redis URL into the keyword options of
:class:`~mcptrio.transports.http.endpoints.app.McpHttpApp`: the stores and the session directory
that let any worker answer any request. ``Server.run(..., redis_url=URL)``, ``mcptrio run
--redis URL`` and each worker process call it once, around the whole time they serve, and pass
what it yields to ``McpHttpApp(server, **options)``.

It opens the Redis stores (:func:`mcptrio.open_stores`: the SSE event store, the task store,
the subscription bus and the shared ``requestState`` key) and hands them to the server, and
yields a Redis session directory (:class:`~mcptrio.stores.redis_session_directory.
RedisSessionDirectory`) as the app's ``session_directory``: a handshake-era request for a session
another worker owns is forwarded there (see ``docs/explanation/session-relay.md``); and a
``session_keeper``: the Redis records of the sessions and the server's snapshots of them
(:mod:`.session_snapshot`), so that when a session's worker dies or restarts another adopts it
(see ``docs/explanation/session-adoption.md``). One coredis client serves them all. Everything
is closed when the block ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from .session_snapshot import SessionSnapshots, StatefulServer

if TYPE_CHECKING:
    from ..stores.bundle import Stores

__all__ = [
    "REDIS_SCHEMES",
    "ScaledServer",
    "check_redis_url",
    "open_scale_out",
    "scale_out_if_given",
]


class ScaledServer(StatefulServer, Protocol):
    """A server that keeps what its workers share in a bundle of stores, and whose sessions'
    state can be snapshotted (a :class:`~mcptrio.Server` is one)."""

    def use_stores(self, stores: Stores) -> None: ...


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
async def open_scale_out(
    server: ScaledServer, redis_url: str, *, prefix: str = "mcptrio:", **stores_options: Any
) -> AsyncIterator[dict[str, Any]]:
    """The ``McpHttpApp`` keyword options that make this process one of several serving
    ``server`` at the same endpoint through the Redis server at ``redis_url``, open for the
    block's duration. It is entered before ``server`` is served: it gives the server its shared
    stores (:meth:`~mcptrio.server.server.Server.use_stores`). ``prefix`` starts every Redis
    key, so that several deployments can share one Redis (every worker of one must use the same);
    ``stores_options`` go to :func:`~mcptrio.stores.bundle.open_stores` (its bounds and TTLs).
    """
    check_redis_url(redis_url)
    # Imported here: coredis is the optional ``redis`` extra.
    from ..stores.bundle import open_stores
    from ..stores.redis_session_directory import RedisSessionDirectory
    from ..stores.redis_session_records import RedisSessionRecords
    from ..transports.http.endpoints.session_keeping import SessionKeeper

    async with open_stores(redis_url, prefix=prefix, **stores_options) as stores:
        if stores.redis is None:
            raise ValueError(f"{redis_url!r} opened no Redis client")
        server.use_stores(stores)
        records = RedisSessionRecords(stores.redis, prefix=prefix)
        yield {
            "session_directory": RedisSessionDirectory(stores.redis, prefix=prefix),
            "session_keeper": SessionKeeper(records, SessionSnapshots(server)),
        }


def scale_out_if_given(
    server: ScaledServer, redis_url: str | None
) -> AbstractAsyncContextManager[dict[str, Any]]:
    """:func:`open_scale_out` when there is a ``redis_url``, else no options (one process on
    its own)."""
    return open_scale_out(server, redis_url) if redis_url else nullcontext({})
