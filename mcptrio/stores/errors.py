"""What a shared store raises when its backend fails: :class:`StoreUnavailable`; and how many
times it failed in this process: :data:`backend_failures`.

Kept apart from the Redis modules so that code catching it (or reading the count: the metrics)
does not import coredis.
"""

from __future__ import annotations

from ..protocol.errors import LocalError

__all__ = ["FailureCount", "StoreUnavailable", "backend_failures"]


class StoreUnavailable(LocalError, default_message="The shared store is unavailable"):
    """Redis did not answer in time, could not be reached, or refused a call. A request whose
    handler meets it is answered -32603 with its message."""


class FailureCount:
    """A count that only goes up: how many calls to a store's backend failed."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def add(self) -> None:
        self.value += 1


#: Every failed call to Redis in this process, by any store (a lost subscription too), since it
#: started: what the ``mcptrio_redis_errors_total`` metric reports.
backend_failures = FailureCount()
