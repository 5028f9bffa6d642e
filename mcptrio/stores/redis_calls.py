"""How the Redis stores talk to Redis: one client, a deadline on every call, one error type.

Every store built on Redis goes through :func:`redis_call`: the call runs under a Trio deadline
(``timeout`` seconds, :data:`DEFAULT_TIMEOUT` unless told otherwise), and whatever goes wrong
with Redis (refused, reset, no answer in time, an error reply) comes out as
:class:`StoreUnavailable`, which names the operation and the cause. A request whose handler
meets it is answered -32603 with that message: a worker whose Redis is gone fails its requests
quickly and clearly, and never hangs.

Nothing is cached across a failure: the client's pool drops a broken connection and opens a new
one on the next call, so a Redis that comes back (restarted, failed over behind the same
address) is used again without restarting the server. :func:`open_redis` makes a client set up
for that (short connect and read timeouts, one immediate retry on a connection error, which is
what a pooled connection that Redis closed while it was idle needs).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Final, TypeAlias

import anyio
import coredis
import coredis.exceptions
import trio
from coredis.retry import ConstantRetryPolicy, ExponentialBackoffRetryPolicy

from .errors import StoreUnavailable, backend_failures

__all__ = [
    "DEFAULT_TIMEOUT",
    "RedisClient",
    "StoreUnavailable",
    "follow_channel",
    "open_redis",
    "pubsub_retry_policy",
    "redis_call",
    "unwrapped",
]

log = logging.getLogger("mcptrio.stores")

#: The client every Redis store takes: bytes in, bytes out.
RedisClient: TypeAlias = "coredis.Redis[bytes]"

#: Seconds any one Redis call may take before it fails with :class:`StoreUnavailable`.
DEFAULT_TIMEOUT: Final = 2.0


# coredis runs on anyio: a connection closed under a call can raise anyio's errors too.
_REDIS_FAILURES = (
    coredis.exceptions.RedisError,
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


@contextmanager
def redis_call(
    what: str, timeout: float = DEFAULT_TIMEOUT, error: type[StoreUnavailable] = StoreUnavailable
) -> Iterator[None]:
    """Run the block under a ``timeout`` deadline; Redis failures become :class:`StoreUnavailable`.

    ``what`` names the operation in the message (``"store an SSE event"``); ``error`` is the
    subclass of :class:`StoreUnavailable` to raise. A cancellation from outside passes through
    untouched.
    """
    try:
        with trio.fail_after(timeout):
            yield
    except trio.TooSlowError:
        backend_failures.add()
        raise error(f"Redis did not answer within {timeout}s ({what})") from None
    except _REDIS_FAILURES as exc:
        backend_failures.add()
        raise error(f"Redis failed ({what}): {type(exc).__name__}: {exc}") from exc


async def follow_channel(
    redis: RedisClient,
    channel: str,
    on_message: Callable[[bytes], None],
    on_resubscribed: Callable[[], None],
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Call ``on_message`` with every message published on ``channel``, until cancelled;
    reports once subscribed. After losing Redis it subscribes again by itself (50 ms to 1 s
    apart) and then calls ``on_resubscribed``: messages published meanwhile are lost, and the
    caller must make up for them. Both callbacks must not block."""
    started = False
    while True:
        try:
            async with redis.pubsub(
                channels=[channel], retry_policy=pubsub_retry_policy()
            ) as pubsub:
                subscribed = False
                if not started:
                    task_status.started()
                    started = True
                async for message in pubsub:
                    kind = message["type"]
                    if kind == "message":
                        data = message["data"]
                        on_message(data if isinstance(data, bytes) else str(data).encode())
                    elif kind == "subscribe":
                        if subscribed:
                            on_resubscribed()
                        subscribed = True
        except BaseExceptionGroup as group:
            # coredis's pubsub runs a task group: a failure comes wrapped, and when this task
            # is cancelled the failure to unsubscribe from a closed connection comes with the
            # Cancelled. That Cancelled (with anything else that is not a Redis failure) goes
            # on; a Redis failure alone is handled as below.
            failures, rest = group.split(_REDIS_FAILURES)
            if rest is not None:
                raise rest from None
            exc = unwrapped(failures) if failures is not None else group
            backend_failures.add()
            if not started:
                raise StoreUnavailable(f"Redis failed (subscribe to {channel}): {exc}") from exc
            log.warning("subscription to %s lost (%s); subscribing again", channel, exc)
            await trio.sleep(0.5)
            on_resubscribed()
        except _REDIS_FAILURES as exc:
            if trio.current_effective_deadline() == -math.inf:
                # Being cancelled: coredis failed to unsubscribe from a connection that is gone.
                await trio.lowlevel.checkpoint()
            backend_failures.add()
            if not started:
                raise StoreUnavailable(f"Redis failed (subscribe to {channel}): {exc}") from exc
            log.warning("subscription to %s lost (%s); subscribing again", channel, exc)
            await trio.sleep(0.5)
            on_resubscribed()


def pubsub_retry_policy() -> ExponentialBackoffRetryPolicy:
    """How a subscriber reconnects: forever, from 50 ms up to 1 s apart (coredis's default waits
    up to 16 s, too long for a bus whose listeners should hear again soon after Redis is back)."""
    return ExponentialBackoffRetryPolicy(
        (coredis.exceptions.ConnectionError, TimeoutError, OSError),
        retries=None,
        base_delay=0.05,
        max_delay=1.0,
        jitter=True,
    )


@asynccontextmanager
async def open_redis(url: str, *, timeout: float = DEFAULT_TIMEOUT) -> AsyncIterator[RedisClient]:
    """A coredis client for ``url`` (``redis://host:port/db``, ``rediss://``, ``unix://``) for the
    ``async with`` block, checked with a ``PING`` first (:class:`StoreUnavailable` if Redis is
    not there). Its connect and read timeouts are ``timeout``."""
    client: RedisClient = coredis.Redis.from_url(
        url,
        decode_responses=False,
        connect_timeout=timeout,
        stream_timeout=timeout,
        # A pooled connection Redis closed while idle fails once; the retry takes a fresh one.
        retry_policy=ConstantRetryPolicy((coredis.exceptions.ConnectionError,), retries=1, delay=0),
    )
    try:
        async with client:
            with redis_call(f"connect to {_redacted(url)}", timeout):
                await client.ping()
            yield client
    except BaseExceptionGroup as group:
        # coredis's pool runs a task group: what leaves the block comes wrapped in a group.
        raise unwrapped(group) from None


def unwrapped(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception a group holds (through nested groups), else the group itself."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user}:***@{host}" if user else f"{scheme}{sep}***@{host}"
