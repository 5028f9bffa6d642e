"""The ``requestState`` key, shared by every worker through Redis.

An input-required result (MRTR, 2026-07-28) carries its state sealed with AES-GCM under the
server's key (:mod:`mcptrio.server.request_state`), and the client's retry may land on any
worker: they must all seal and open with one key. Without a key given
(``Server(request_state_key=...)`` or ``MCPTRIO_REQUEST_STATE_KEY``) each process draws its own;
:func:`shared_request_state_key` makes the first worker's draw everyone's instead: each worker
offers a fresh random key with ``SET NX`` under ``<prefix>request-state-key`` and uses whatever
is there afterwards (its own if it came first).

Redis restarted without persistence forgets the key while the workers keep using it, and a
worker starting after that would draw another. :func:`keep_request_state_key` closes that gap:
each worker offers the key it uses again every ``interval`` seconds, so the key is back in Redis
within an interval of a restart. A key given in configuration needs none of this (and is the
choice for deployments where Redis may be flushed).
"""

from __future__ import annotations

import logging
import secrets
from typing import Final

import trio
from coredis.tokens import PureToken

from .redis_calls import DEFAULT_TIMEOUT, RedisClient, StoreUnavailable, redis_call

__all__ = ["DEFAULT_KEY_CHECK_INTERVAL", "keep_request_state_key", "shared_request_state_key"]

log = logging.getLogger("mcptrio.stores")

#: Seconds between two offers of the key in use (:func:`keep_request_state_key`).
DEFAULT_KEY_CHECK_INTERVAL: Final = 10.0
_KEY_SIZES: Final = (16, 24, 32)


def _name(prefix: str) -> str:
    return f"{prefix}request-state-key"


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
    key: bytes,
    *,
    prefix: str = "mcptrio:",
    interval: float = DEFAULT_KEY_CHECK_INTERVAL,
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """Offer ``key`` again every ``interval`` seconds (``SET NX``), until cancelled, so that a
    Redis that lost it gets it back; logs an error if Redis holds another key (sealed states
    of this worker then fail on the others)."""
    while True:
        await trio.sleep(interval)
        try:
            with redis_call("keep the requestState key", timeout):
                await redis.set(_name(prefix), key, condition=PureToken.NX)
                held = await redis.get(_name(prefix))
        except StoreUnavailable as exc:
            log.warning("requestState key not checked: %s", exc.message)
            continue
        if held is not None and bytes(held) != key:
            log.error(
                "Redis holds another requestState key than this worker's (%r was replaced):"
                " give every worker one key (MCPTRIO_REQUEST_STATE_KEY)",
                _name(prefix),
            )
