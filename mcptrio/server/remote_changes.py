"""Changes made on other workers, told to this worker's handshake-era sessions.

A 2026-07-28 listen stream hears every worker's changes through the subscription bus it
listens on. A handshake-era session listens on no bus: it hears of a change through its own
state (a resource subscription, a pending ``list_changed``), which the server updates when it
makes the change itself. When the bus is shared with other workers
(:class:`~mcptrio.stores.subscription_bus.SharedSubscriptionBus`, the Redis one), the server
also follows what the others publish and updates its sessions' states the same way, so that a
session subscribed to a resource hears of an update made on any worker. When the bus may have
lost changes (Redis was away), every session is told that everything it follows changed: its
client reads again, which is what a resync costs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

from ..stores.subscription_bus import Change, ListKind, SharedSubscriptionBus

if TYPE_CHECKING:
    from .server import Server

__all__ = ["RemoteChangeMethods"]

_LIST_KINDS: Final[tuple[ListKind, ...]] = ("tools", "resources", "prompts")


class RemoteChangeMethods:
    """The :class:`~mcptrio.server.server.Server` methods that follow other workers' changes."""

    __slots__ = ()

    def follow_remote_changes(self) -> None:
        """Follow the changes other workers publish on this server's bus, if it is shared
        (called whenever the bus is set; following one bus twice is following it once)."""
        bus = cast("Server", self).subscriptions
        if isinstance(bus, SharedSubscriptionBus):
            bus.watch_remote(self._remote_change)

    def _remote_change(self, change: Change | None) -> None:
        for state in cast("Server", self).session_states():
            if change is None:
                for kind in _LIST_KINDS:
                    state.mark_changed(kind)
                for uri in state.subscriptions:
                    state.resource_updated(uri)
            elif change[0] == "updated":
                state.resource_updated(change[1])
            else:
                state.mark_changed(change[1])
