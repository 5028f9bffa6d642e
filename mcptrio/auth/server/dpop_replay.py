"""Where a protected server remembers the DPoP proofs it has taken: each is taken once.

A proof is good for ``max_age`` seconds either side of its ``iat`` (RFC 9449 §11.1), so its
``jti`` is kept until then and a second use inside that window is refused. Two caches ship:

- :class:`MemoryReplayCache`, one worker's, bounded by ``max_entries``: entries leave when their
  proof has expired; a cache full of live entries refuses new proofs with
  :class:`~.verifier.VerifierUnavailable` (503) rather than forget one early, since forgetting a
  live entry would let its proof be replayed;
- :class:`RedisReplayCache`, shared by every worker of a server through its stores' Redis
  (``SET NX`` with the entry's lifetime as expiry), so a proof taken by one worker is refused by
  the others. Redis failing or not answering in time is a 503 as well.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import trio

from .verifier import VerifierUnavailable

if TYPE_CHECKING:
    from ...stores.redis_calls import RedisClient

__all__ = ["MemoryReplayCache", "RedisReplayCache", "ReplayCache"]


class ReplayCache(Protocol):
    """Remembers proof identifiers for a while."""

    async def first_use(self, key: bytes, lifetime: float) -> bool:
        """``True`` (and remember ``key`` for ``lifetime`` seconds) when ``key`` is not known;
        ``False`` when it is (a replay). :class:`VerifierUnavailable` when it cannot tell."""
        ...


@dataclass(eq=False)
class MemoryReplayCache:
    """One worker's proofs, at most ``max_entries`` live ones (see the module docstring)."""

    max_entries: int = 100_000
    _expiries: dict[bytes, float] = field(init=False, default_factory=dict)
    #: (expiry, key) of every entry, soonest first: what leaves next is at the front.
    _queue: list[tuple[float, bytes]] = field(init=False, default_factory=list)

    async def first_use(self, key: bytes, lifetime: float) -> bool:
        now = trio.current_time()
        self._forget_expired(now)
        if key in self._expiries:
            return False
        if len(self._expiries) >= self.max_entries:
            raise VerifierUnavailable(
                f"DPoP replay cache is full ({self.max_entries} live proofs): try again shortly"
            )
        expiry = now + lifetime
        self._expiries[key] = expiry
        heapq.heappush(self._queue, (expiry, key))
        return True

    def _forget_expired(self, now: float) -> None:
        queue = self._queue
        while queue and queue[0][0] <= now:
            _, key = heapq.heappop(queue)
            del self._expiries[key]


@dataclass(eq=False)
class RedisReplayCache:
    """Proofs every worker sharing ``redis`` (under ``prefix``) has taken."""

    redis: RedisClient
    prefix: str = "mcptrio:"
    timeout: float = 2.0

    async def first_use(self, key: bytes, lifetime: float) -> bool:
        # Imported here: coredis comes with the redis extra, which a server without Redis lacks.
        from coredis.tokens import PureToken

        from ...stores.redis_calls import StoreUnavailable, redis_call

        name = f"{self.prefix}dpop-proof:{key.hex()}"
        milliseconds = max(1, int(lifetime * 1000))
        try:
            with redis_call("remember a DPoP proof", self.timeout):
                stored = await self.redis.set(name, b"1", condition=PureToken.NX, px=milliseconds)
        except StoreUnavailable as exc:
            raise VerifierUnavailable(str(exc)) from None
        return bool(stored)
