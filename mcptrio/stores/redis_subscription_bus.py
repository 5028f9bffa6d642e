"""A :class:`~.subscription_bus.SubscriptionBus` shared by every worker through Redis pub/sub.

A change published on any worker reaches the listen streams of every worker. Each process keeps
its own listeners in a :class:`~.subscription_bus.LocalSubscriptionBus` (the same bounds: at most
``max_listeners`` here, ``max_uris_per_listener`` each) and runs two actors
(:func:`open_redis_subscription_bus`):

- the **publisher** sends what :meth:`RedisSubscriptionBus.publish` noted to the channel
  ``<prefix>bus``. ``publish`` itself never waits: it tells this process's listeners at once and
  notes the change in a bounded, coalesced outbox (a change already waiting is not noted twice);
- the **subscriber** hands every change another worker published to this process's listeners.

**Slow consumers, and lost messages.** Every notification on the bus says only "look again", so
nothing is queued per listener: what a listener has not sent yet is a set of pending changes,
bounded by what it asked for (see :mod:`.subscription_bus`). A listen stream that does not keep
up gets fewer notifications, never a growing queue, and a publisher never waits for it. The
subscriber never waits either, so a slow listener cannot hold up the others nor make Redis
disconnect this process. When messages may have been lost, the policy is *resync*: every
listener is told that everything it asked for changed (it is sent one notification per list
kind and resource it subscribed to), and its client reads again. That happens

- when the subscriber connects again after losing Redis (Redis restarted, the connection
  reset, or Redis dropped it for an output buffer over its ``client-output-buffer-limit``);
- on every worker, when a publisher's outbox overflows (``max_pending`` distinct changes
  waiting because Redis is slow or gone): the outbox is emptied and one ``resync`` message is
  published in its place.

While Redis is unreachable the publisher retries (50 ms to 1 s apart), and this process's own
listeners keep hearing this process's changes.

Messages are msgpack ``[origin, kind, what]``: ``origin`` is this bus's random id (a bus ignores
its own messages, its listeners heard them already), ``kind`` is ``"list_changed"``,
``"updated"`` or ``"resync"``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
import trio

from .redis_calls import (
    DEFAULT_TIMEOUT,
    RedisClient,
    StoreUnavailable,
    follow_channel,
    redis_call,
    unwrapped,
)
from .subscription_bus import (
    DEFAULT_MAX_LISTENERS,
    DEFAULT_MAX_URIS_PER_LISTENER,
    Change,
    Listener,
    ListKind,
    LocalSubscriptionBus,
    RemoteWatcher,
)

__all__ = ["DEFAULT_MAX_PENDING", "RedisSubscriptionBus", "open_redis_subscription_bus"]

log = logging.getLogger("mcptrio.stores")

#: Distinct changes a publisher's outbox holds before it is replaced by one ``resync``.
DEFAULT_MAX_PENDING: Final = 1024
_RESYNC: Final = ("resync", "")
_LIST_KINDS: Final = frozenset({"tools", "resources", "prompts"})

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(tuple[str, str, str]).decode


class RedisSubscriptionBus:
    """The :class:`~.subscription_bus.SubscriptionBus` of one worker, shared with the others
    through Redis (see the module docstring). Made and run by
    :func:`open_redis_subscription_bus`."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        prefix: str = "mcptrio:",
        max_listeners: int = DEFAULT_MAX_LISTENERS,
        max_uris_per_listener: int = DEFAULT_MAX_URIS_PER_LISTENER,
        max_pending: int = DEFAULT_MAX_PENDING,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.redis = redis
        self.channel = f"{prefix}bus"
        self.max_pending = max_pending
        self.timeout = timeout
        self.local = LocalSubscriptionBus(
            max_listeners=max_listeners, max_uris_per_listener=max_uris_per_listener
        )
        self._remote_watchers: list[RemoteWatcher] = []
        self.origin = secrets.token_hex(8)
        # The outbox: changes to publish, oldest first, each once.
        self._pending: dict[tuple[str, str], None] = {}
        self._has_pending = trio.Event()
        #: How many times the outbox overflowed, and how many resyncs this bus's listeners got.
        self.overflows = 0
        self.resyncs = 0

    def __len__(self) -> int:
        return len(self.local)

    # ------------------------------------------------------------------ the interface

    def publish(self, change: Change) -> None:
        """Tell this process's listeners now, and the other workers' through the publisher."""
        self.local.publish(change)
        self._note(change)

    def subscribe(self, kinds: Iterable[ListKind], uris: Iterable[str]) -> Listener:
        return self.local.subscribe(kinds, uris)

    def unsubscribe(self, listener: Listener) -> None:
        self.local.unsubscribe(listener)

    def watch_remote(self, watcher: RemoteWatcher) -> None:
        if watcher not in self._remote_watchers:
            self._remote_watchers.append(watcher)

    def resync(self) -> None:
        """Tell every listener of this process that everything it asked for changed."""
        self.resyncs += 1
        for listener in self.local.all_listeners():
            listener.resync()
        for watcher in self._remote_watchers:
            watcher(None)

    # ------------------------------------------------------------------ the actors

    def _note(self, change: tuple[str, str]) -> None:
        pending = self._pending
        if change in pending:
            return
        if len(pending) >= self.max_pending:
            # Too much to send: one resync tells every worker as much, in bounded space.
            self.overflows += 1
            pending.clear()
            change = _RESYNC
        pending[change] = None
        self._has_pending.set()

    async def publisher(self) -> None:
        """Send the outbox to Redis, until cancelled; retries while Redis is away."""
        delay = 0.05
        while True:
            await self._has_pending.wait()
            self._has_pending = trio.Event()
            while self._pending:
                change = next(iter(self._pending))
                try:
                    with redis_call("publish a change", self.timeout):
                        await self.redis.publish(self.channel, _encode((self.origin, *change)))
                except StoreUnavailable as exc:
                    log.warning("subscription bus: %s; retrying in %.2fs", exc.message, delay)
                    await trio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                delay = 0.05
                # A resync that replaced the outbox meanwhile must not be dropped for this.
                if next(iter(self._pending), None) == change:
                    del self._pending[change]

    async def subscriber(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Hand the other workers' changes to this process's listeners, until cancelled;
        reconnects by itself, and resyncs the listeners when it does."""
        await follow_channel(
            self.redis, self.channel, self._receive, self._resubscribed, task_status=task_status
        )

    def _resubscribed(self) -> None:
        log.info("subscription bus: subscribed again; resyncing listeners")
        self.resync()

    def _receive(self, data: bytes) -> None:
        try:
            origin, kind, what = _decode(data)
        except (msgspec.DecodeError, TypeError):
            log.warning("subscription bus: ignored a message that is not a change: %r", data)
            return
        if origin == self.origin:
            return
        if kind == "resync":
            self.resync()
        elif kind == "updated":
            self._from_elsewhere(("updated", what))
        elif kind == "list_changed" and what in _LIST_KINDS:
            self._from_elsewhere(("list_changed", what))  # type: ignore[arg-type]

    def _from_elsewhere(self, change: Change) -> None:
        self.local.publish(change)
        for watcher in self._remote_watchers:
            watcher(change)


@asynccontextmanager
async def open_redis_subscription_bus(
    redis: RedisClient, **options: Any
) -> AsyncIterator[RedisSubscriptionBus]:
    """A :class:`RedisSubscriptionBus` (``options`` are its keyword arguments) with its
    publisher and subscriber running for the ``async with`` block; on the way out every
    listener is closed (its listen stream ends gracefully)."""
    bus = RedisSubscriptionBus(redis, **options)
    try:
        async with trio.open_nursery() as nursery:
            with redis_call("subscribe to the subscription bus", bus.timeout):
                await nursery.start(bus.subscriber)
            nursery.start_soon(bus.publisher)
            yield bus
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise unwrapped(group) from None
    finally:
        for listener in bus.local.all_listeners():
            bus.local.unsubscribe(listener)
