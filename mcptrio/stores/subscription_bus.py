"""The subscription bus: list changes and resource updates, fanned out to every listener.

A server publishes two kinds of event: a list changed (``tools``, ``prompts``, ``resources``)
and a resource was updated (its URI). Every ``subscriptions/listen`` stream (2026-07-28) is a
:class:`Listener` of the bus; handshake-era sessions keep their own notifier
(:mod:`.session_state`), fed by the same calls on the server.

:class:`SubscriptionBus` is the interface; :class:`LocalSubscriptionBus` is the in-process one,
and :class:`~.redis_subscription_bus.RedisSubscriptionBus` the one shared by the workers of a
server through Redis. The module lives with the stores, below the server, so that a shared bus
can be built on it; :mod:`mcptrio.server.subscription_bus` re-exports it.

**Slow consumers.** Publishing never waits for a listener. What a listener has not yet sent is
kept *coalesced*: a set of the list kinds that changed and a set of the updated URIs it
subscribed to. Both notifications say only "look again", so two of them pending are worth one:
a listener that does not keep up gets fewer notifications, never a growing queue, and its
memory is bounded by the three kinds plus the URIs it subscribed to (at most
``max_uris_per_listener``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import Final, Literal, Protocol, TypeAlias, runtime_checkable

import trio

__all__ = [
    "DEFAULT_MAX_LISTENERS",
    "DEFAULT_MAX_URIS_PER_LISTENER",
    "Change",
    "ListKind",
    "Listener",
    "LocalSubscriptionBus",
    "RemoteWatcher",
    "SharedSubscriptionBus",
    "SubscriptionBus",
    "TooManyListeners",
]

#: The lists whose changes are announced (the server's ``session_state.ListKind``).
ListKind: TypeAlias = Literal["tools", "resources", "prompts"]
#: What a listener is told: a list kind changed, or ``("updated", uri)``.
Change: TypeAlias = tuple[Literal["list_changed"], ListKind] | tuple[Literal["updated"], str]

DEFAULT_MAX_LISTENERS: Final = 10_000
DEFAULT_MAX_URIS_PER_LISTENER: Final = 1_000


class TooManyListeners(Exception):
    """The bus already has its maximum number of listeners."""


class Listener:
    """One listen stream's view of the bus: what it asked for, and what is pending for it."""

    __slots__ = ("_changed", "_kinds", "_uris", "_wakeup", "closed")

    def __init__(self, kinds: Iterable[ListKind], uris: Iterable[str]) -> None:
        self._kinds = frozenset(kinds)
        self._uris = frozenset(uris)
        self._changed: dict[Change, None] = {}
        self._wakeup = trio.Event()
        self.closed = False

    def offer(self, change: Change) -> None:
        """Note ``change`` if this listener asked for it (merged with one already pending)."""
        kind, what = change
        wanted = what in self._kinds if kind == "list_changed" else what in self._uris
        if wanted and not self.closed:
            self._changed[change] = None
            self._wakeup.set()

    def resync(self) -> None:
        """Note everything this listener asked for as changed: what a bus does when it may have
        lost changes (a shared bus that lost its connection), since each notification only says
        "look again"."""
        if self.closed:
            return
        for kind in sorted(self._kinds):
            self._changed[("list_changed", kind)] = None
        for uri in self._uris:
            self._changed[("updated", uri)] = None
        if self._kinds or self._uris:
            self._wakeup.set()

    def close(self) -> None:
        """Stop: :meth:`changes` ends after what is pending."""
        self.closed = True
        self._wakeup.set()

    async def changes(self) -> AsyncIterator[Change]:
        """The changes, in the order they were first noted, until the listener is closed."""
        while True:
            if not self._changed:
                if self.closed:
                    return
                await self._wakeup.wait()
                self._wakeup = trio.Event()
                continue
            pending, self._changed = self._changed, {}
            for change in pending:
                yield change


class SubscriptionBus(Protocol):
    """Where a server publishes changes and its listen streams subscribe."""

    def publish(self, change: Change) -> None:
        """Tell every listener (never waits)."""

    def subscribe(self, kinds: Iterable[ListKind], uris: Iterable[str]) -> Listener:
        """A new listener; :class:`TooManyListeners` past the bus's limit."""

    def unsubscribe(self, listener: Listener) -> None:
        """Forget ``listener`` (it gets nothing more)."""


#: Told each change another worker published (``None``: changes may have been lost, so
#: everything may have changed).
RemoteWatcher: TypeAlias = Callable[["Change | None"], None]


@runtime_checkable
class SharedSubscriptionBus(SubscriptionBus, Protocol):
    """A bus shared with other workers, which can say what they changed: the server tells its
    handshake-era sessions (resource subscriptions, list-changed notifications), which listen
    on no bus of their own."""

    def watch_remote(self, watcher: RemoteWatcher) -> None:
        """Call ``watcher`` (it must not block) with every change another worker publishes."""


class LocalSubscriptionBus:
    """The in-process :class:`SubscriptionBus`."""

    def __init__(
        self,
        *,
        max_listeners: int = DEFAULT_MAX_LISTENERS,
        max_uris_per_listener: int = DEFAULT_MAX_URIS_PER_LISTENER,
    ) -> None:
        self.max_listeners = max_listeners
        self.max_uris_per_listener = max_uris_per_listener
        self._listeners: dict[Listener, None] = {}

    def __len__(self) -> int:
        return len(self._listeners)

    def all_listeners(self) -> tuple[Listener, ...]:
        """The listeners now subscribed."""
        return tuple(self._listeners)

    def publish(self, change: Change) -> None:
        for listener in self._listeners:
            listener.offer(change)

    def subscribe(self, kinds: Iterable[ListKind], uris: Iterable[str]) -> Listener:
        if len(self._listeners) >= self.max_listeners:
            raise TooManyListeners(f"The server already has {self.max_listeners} listen streams")
        uris = list(uris)
        if len(uris) > self.max_uris_per_listener:
            raise ValueError(
                f"A listen stream may subscribe to at most {self.max_uris_per_listener} resources"
            )
        listener = Listener(kinds, uris)
        self._listeners[listener] = None
        return listener

    def unsubscribe(self, listener: Listener) -> None:
        listener.close()
        self._listeners.pop(listener, None)
