"""What a shared store raises when its backend fails: :class:`StoreUnavailable`.

Kept apart from the Redis modules so that code catching it does not import coredis.
"""

from __future__ import annotations

from ..protocol.errors import LocalError

__all__ = ["StoreUnavailable"]


class StoreUnavailable(LocalError, default_message="The shared store is unavailable"):
    """Redis did not answer in time, could not be reached, or refused a call. A request whose
    handler meets it is answered -32603 with its message."""
