"""The ``requestState`` key, shared by every worker through Redis.

An input-required result (MRTR, 2026-07-28) carries its state sealed with AES-GCM under the
server's key (:mod:`mcptrio.server.request_state`), and the client's retry may land on any
worker: they must all seal and open with one key. Without a key given
(``Server(request_state_key=...)`` or ``MCPTRIO_REQUEST_STATE_KEY``) each process draws its own;
:func:`shared_request_state_key` makes the first worker's draw everyone's instead: each worker
offers a fresh random key with ``SET NX`` under ``<prefix>request-state-key`` and uses whatever
is there afterwards (its own if it came first).

Redis restarted without persistence (or flushed) forgets the key while the workers keep using
it, and a worker starting after that draws another: two keys, and a state sealed on one worker
fails on the other. :func:`keep_request_state_key` makes the workers converge on one key again:
each worker offers its key every ``interval`` seconds (``SET NX``) and then *adopts* whatever
Redis holds, so within an interval of the loss every worker seals with the key that landed
first. A worker that adopts a key retires its old one into ``<prefix>request-state-key:retired``
(a sorted set, scored by when the key's grace ends: the lifetime of a sealed state), and every
worker accepts the retired keys it finds there until then
(:class:`~.request_state_key_ring.KeyRing`): a state sealed under the old key before the switch
still opens on any worker until it expires. A key given in configuration needs none of this.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Final, TypeGuard

import trio
from coredis.response.types import ScoredMember
from coredis.tokens import PureToken

from .redis_calls import DEFAULT_TIMEOUT, RedisClient, StoreUnavailable, redis_call
from .request_state_key_ring import KeyRing

__all__ = [
    "DEFAULT_KEY_CHECK_INTERVAL",
    "converge_request_state_key",
    "keep_request_state_key",
    "shared_request_state_key",
]

log = logging.getLogger("mcptrio.stores")

#: Seconds between two offers of the key in use (:func:`keep_request_state_key`).
DEFAULT_KEY_CHECK_INTERVAL: Final = 2.0
_KEY_SIZES: Final = (16, 24, 32)


def _name(prefix: str) -> str:
    return f"{prefix}request-state-key"


def _retired_name(prefix: str) -> str:
    return f"{prefix}request-state-key:retired"


def _is_key(value: object) -> TypeGuard[bytes]:
    return isinstance(value, bytes) and len(value) in _KEY_SIZES


async def shared_request_state_key(
    redis: RedisClient, *, prefix: str = "mcptrio:", timeout: float = DEFAULT_TIMEOUT
) -> bytes:
    """The 32-byte key every worker using ``prefix`` on this Redis shares (made by the first
    to ask). :class:`~.redis_calls.StoreUnavailable` if Redis fails, or holds something that
    is not an AES key under that name."""
    with redis_call("share the requestState key", timeout):
        await redis.set(_name(prefix), secrets.token_bytes(32), condition=PureToken.NX)
        key = await redis.get(_name(prefix))
    if key is None or len(key) not in _KEY_SIZES:
        raise StoreUnavailable(
            f"Redis key {_name(prefix)!r} does not hold a requestState key (16, 24 or 32 bytes)"
        )
    return bytes(key)


async def keep_request_state_key(
    redis: RedisClient,
    ring: KeyRing,
    *,
    prefix: str = "mcptrio:",
    interval: float | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Keep ``ring`` on the key Redis holds, until cancelled (see the module docstring): offer
    the key in use, adopt the one Redis holds, accept the retired ones (then it reports itself
    started); then again every ``interval`` seconds (:data:`DEFAULT_KEY_CHECK_INTERVAL` if not
    given, read when it starts). A Redis that is away is tried again at the next interval."""
    if interval is None:
        interval = DEFAULT_KEY_CHECK_INTERVAL
    while True:
        try:
            await converge_request_state_key(redis, ring, prefix=prefix, timeout=timeout)
        except StoreUnavailable as exc:
            log.warning("requestState key not checked: %s", exc.message)
        task_status.started()
        task_status = trio.TASK_STATUS_IGNORED
        await trio.sleep(interval)


async def converge_request_state_key(
    redis: RedisClient, ring: KeyRing, *, prefix: str = "mcptrio:", timeout: float = DEFAULT_TIMEOUT
) -> None:
    """One round of :func:`keep_request_state_key`."""
    retired_name = _retired_name(prefix)
    with redis_call("keep the requestState key", timeout):
        await redis.set(_name(prefix), ring.current, condition=PureToken.NX)
        held = await redis.get(_name(prefix))
        now = time.time()
        if _is_key(held):
            retired = ring.current
            if ring.adopt(bytes(held)):
                # Scored by the wall-clock time its grace ends, the same for every worker.
                await redis.zadd(retired_name, {retired: now + ring.grace})
                await redis.pexpire(retired_name, max(int(ring.grace * 1000), 1))
                log.warning(
                    "Redis holds another requestState key than this worker's: this worker uses"
                    " it from now on (states sealed with the old one open for %.0f s more)",
                    ring.grace,
                )
        elif held is not None:
            log.error("Redis key %r does not hold a requestState key", _name(prefix))
        await redis.zremrangebyscore(retired_name, float("-inf"), now)
        for entry in await redis.zrange(retired_name, 0, -1, withscores=True):
            if isinstance(entry, ScoredMember) and _is_key(entry.member):
                ring.accept(bytes(entry.member), entry.score - now)
