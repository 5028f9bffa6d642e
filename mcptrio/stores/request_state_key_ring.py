"""The ``requestState`` key a worker seals with, and the retired keys it still opens with.

Workers sharing a Redis converge on the key Redis holds
(:func:`~.redis_request_state_key.keep_request_state_key`): when Redis comes back empty and two
workers offered different keys, the key that landed first is everyone's, and the others adopt it.
A state sealed just before the switch under the old key must still open, on any worker, until
it expires: so an adopted-away key is *retired*, not dropped, and opens states for ``grace``
seconds more (the sealed states' own lifetime, by default). The ring is what the server's
:class:`~mcptrio.server.request_state.RequestStateKey` reads on every seal and open; it holds
bytes only (no cipher: that is the server's), and its ``version`` tells the server when to
rebuild one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

__all__ = ["DEFAULT_GRACE", "KeyRing"]

#: Seconds a retired key still opens states: the lifetime of a sealed state
#: (:data:`mcptrio.server.request_state.DEFAULT_STATE_TTL`).
DEFAULT_GRACE: Final = 900.0


class KeyRing:
    """The key in use (``current``) and the retired keys accepted until their deadline."""

    __slots__ = ("_clock", "_retired", "current", "grace", "version")

    def __init__(
        self,
        key: bytes,
        *,
        grace: float = DEFAULT_GRACE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.current = key
        self.grace = grace
        #: Bumped on every change, so that a reader rebuilds what it derived from the keys.
        self.version = 0
        self._clock = clock
        self._retired: dict[bytes, float] = {}

    def adopt(self, key: bytes) -> bool:
        """Seal with ``key`` from now on; the key in use until now is retired. Whether anything
        changed."""
        if key == self.current:
            return False
        self._retired.pop(key, None)
        self._retired[self.current] = self._clock() + self.grace
        self.current = key
        self.version += 1
        return True

    def accept(self, key: bytes, seconds: float) -> None:
        """Open states sealed with ``key`` (retired elsewhere) for ``seconds`` more."""
        if key == self.current or key in self._retired or seconds <= 0:
            return
        self._retired[key] = self._clock() + min(seconds, self.grace)
        self.version += 1

    def accepted(self) -> list[bytes]:
        """The keys a state may be sealed with: the current one first, then the retired ones
        whose grace has not run out (the others are forgotten here)."""
        now = self._clock()
        expired = [key for key, deadline in self._retired.items() if deadline <= now]
        for key in expired:
            del self._retired[key]
        if expired:
            self.version += 1
        return [self.current, *self._retired]
