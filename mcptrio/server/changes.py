"""How a server tells of its changes, and of the other workers' changes.

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
from typing import TYPE_CHECKING, Any, Final, cast

import trio

from ..stores.subscription_bus import Change, ListKind, SharedSubscriptionBus

if TYPE_CHECKING:
    from .server import Server

__all__ = ["ChangeMethods"]

_LIST_KINDS: Final[tuple[ListKind, ...]] = ("tools", "resources", "prompts")


class ChangeMethods:
    """The :class:`~mcptrio.server.server.Server` methods that tell of changes."""

    def notify_resource_updated(self, uri: str) -> int:
        """Tell every session subscribed to ``uri`` that it changed; returns how many.

        Never blocks: each subscription is an actor with a queue of one, and an update that
        finds one already pending is merged into it (see :mod:`.session_state`).
        """
        server = cast("Server", self)
        if self._from_thread(self.notify_resource_updated, uri):
            return 0
        server.subscriptions.publish(("updated", uri))
        self._tell_watchers(("updated", uri))
        return sum(state.resource_updated(uri) for state in server.session_states())

    def follow_remote_changes(self) -> None:
        """Follow the changes other workers publish on this server's bus, if it is shared
        (called whenever the bus is set; following one bus twice is following it once)."""
        bus = cast("Server", self).subscriptions
        if isinstance(bus, SharedSubscriptionBus):
            bus.watch_remote(self._remote_change)

    def _changed(self, kind: ListKind) -> None:
        server = cast("Server", self)
        if self._from_thread(self._changed, kind):
            return
        if kind == "tools":
            server._header_params.clear()
        server.subscriptions.publish(("list_changed", kind))
        self._tell_watchers(("list_changed", kind))
        for state in server.session_states():
            state.mark_changed(kind)

    def _tell_watchers(self, change: Change) -> None:
        for watcher in tuple(cast("Server", self)._watchers):
            watcher(change)

    def _from_thread(self, fn: Callable[..., object], *args: Any) -> bool:
        """Whether this call came from a thread (a sync handler's): then ``fn`` is run in the
        server's trio thread instead, where the notifiers live."""
        token = cast("Server", self)._trio_token
        if trio.lowlevel.in_trio_run() or token is None:
            return False
        token.run_sync_soon(fn, *args)
        return True

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
