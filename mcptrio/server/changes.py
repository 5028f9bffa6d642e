"""How a server tells of its changes, and of the other workers' changes: :class:`ChangeNotices`.

A change (a tool, resource or prompt added or removed, a resource updated) goes three ways at
once, without waiting: to the subscription bus (the 2026-07-28 listen streams, and through a
shared bus the other workers), to the watchers (a parent server mounting this one), and to the
state of each handshake-era session (a pending ``list_changed``, a resource subscription's
update). A change made from a sync handler's thread is carried into the server's trio thread
first, where the notifiers live.

A handshake-era session listens on no bus, so when the bus is shared with other workers
(:class:`~mcptrio.stores.subscription_bus.SharedSubscriptionBus`, the Redis one) the server also
follows what the *other* workers publish and updates its sessions' states as it does for its own
changes: a session subscribed to a resource hears of an update made on any worker. When the bus
may have lost changes (Redis was away), every session is told that everything it follows
changed: its client reads again, which is what a resync costs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import trio

from ..stores.subscription_bus import Change, ListKind, SharedSubscriptionBus, SubscriptionBus
from .session_state import SessionStates

__all__ = ["ChangeNotices"]

_LIST_KINDS: Final[tuple[ListKind, ...]] = ("tools", "resources", "prompts")


class ChangeNotices:
    """Tells ``bus``, the watchers and the sessions in ``states`` of one server's changes."""

    __slots__ = ("_states", "_watchers", "bus", "trio_token")

    def __init__(self, bus: SubscriptionBus, states: SessionStates) -> None:
        #: Where list changes and resource updates reach the listen streams (2026-07-28).
        self.bus = bus
        self._states = states
        self._watchers: list[Callable[[Change], None]] = []
        #: The trio run serving the server, for changes made from a sync handler's thread.
        self.trio_token: trio.lowlevel.TrioToken | None = None

    def resource_updated(self, uri: str) -> int:
        """Tell of an update of ``uri``; how many sessions subscribed to it were told."""
        if self._from_thread(self.resource_updated, uri):
            return 0
        self.bus.publish(("updated", uri))
        self._tell_watchers(("updated", uri))
        return sum(state.resource_updated(uri) for state in self._states.running())

    def list_changed(self, kind: ListKind) -> None:
        """Tell that the list of ``kind`` changed."""
        if self._from_thread(self.list_changed, kind):
            return
        self.bus.publish(("list_changed", kind))
        self._tell_watchers(("list_changed", kind))
        for state in self._states.running():
            state.mark_changed(kind)

    def watch(self, watcher: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``watcher`` with every change from now on; returns what stops it."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def follow_remote(self) -> None:
        """Follow the changes other workers publish on the bus, if it is shared (following one
        bus twice is following it once)."""
        bus = self.bus
        if isinstance(bus, SharedSubscriptionBus):
            bus.watch_remote(self._remote_change)

    def _tell_watchers(self, change: Change) -> None:
        for watcher in tuple(self._watchers):
            watcher(change)

    def _from_thread(self, fn: Callable[..., object], *args: Any) -> bool:
        """Whether this call came from a thread (a sync handler's): then ``fn`` is run in the
        server's trio thread instead, where the notifiers live."""
        token = self.trio_token
        if trio.lowlevel.in_trio_run() or token is None:
            return False
        token.run_sync_soon(fn, *args)
        return True

    def _remote_change(self, change: Change | None) -> None:
        for state in self._states.running():
            if change is None:
                for kind in _LIST_KINDS:
                    state.mark_changed(kind)
                for uri in state.subscriptions:
                    state.resource_updated(uri)
            elif change[0] == "updated":
                state.resource_updated(change[1])
            else:
                state.mark_changed(change[1])
