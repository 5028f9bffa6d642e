"""The server's notifications, delivered as the application wants them.

Everything here is fed by the session's reader, in arrival order, and none of it may block that
reader (it would stop every answer behind it):

- **Callbacks** (:class:`NotificationCallbacks`, sync or async) run inline in the reader: keep
  them quick. One that raises is logged and the others still run.
- **Streams** are bounded and each has an explicit policy for a slow consumer.
  :class:`LogMessages` keeps the last :data:`LOG_BUFFER` messages, dropping the oldest and
  counting them in ``dropped``. :class:`MergedUpdates` (list changes, resource updates) holds
  each distinct item at most once: an update that arrives while an equal one is still pending is
  merged into it, because such a notification carries no content, only "look again".
- **Subscriptions**: :class:`Subscriptions` counts the users of each URI, so several
  ``client.subscribe(uri)`` blocks share one server-side subscription, subscribed by the first
  and unsubscribed by the last.

Every stream ends (its ``async for`` finishes) when the connection ends.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar

import trio

from ..protocol.base import Notification
from ..protocol.types import (
    ElicitationCompleteNotification,
    LoggingMessageNotification,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)
from ..runtime.session import NotificationHandler, Session

__all__ = [
    "LOG_BUFFER",
    "Callback",
    "ListKind",
    "LogMessages",
    "MergedUpdates",
    "NotificationCallbacks",
    "NotificationRouter",
    "Subscriptions",
]

log = logging.getLogger("mcptrio.client")

T = TypeVar("T")
ListKind: TypeAlias = Literal["tools", "resources", "prompts"]
#: A notification callback: plain or async, called with one argument.
Callback: TypeAlias = Callable[[T], Awaitable[None] | None]
#: How many log messages a :class:`LogMessages` stream holds before dropping the oldest.
LOG_BUFFER = 100

_LIST_KINDS: dict[type[Notification], ListKind] = {
    ToolListChangedNotification: "tools",
    ResourceListChangedNotification: "resources",
    PromptListChangedNotification: "prompts",
}


class _Stream(ABC, Generic[T]):
    """A bounded, non-blocking buffer read by ``async for``; ends when closed and drained."""

    def __init__(self) -> None:
        self._lot = trio.lowlevel.ParkingLot()
        self.closed = False

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        while not self._has_item():
            if self.closed:
                raise StopAsyncIteration
            await self._lot.park()
        await trio.lowlevel.checkpoint()
        return self._take()

    def close(self) -> None:
        self.closed = True
        self._lot.unpark_all()

    def _wake(self) -> None:
        self._lot.unpark_all()

    @abstractmethod
    def _has_item(self) -> bool: ...

    @abstractmethod
    def _take(self) -> T: ...


class LogMessages(_Stream[LoggingMessageNotification]):
    """The server's log messages; on overflow the oldest go, counted in :attr:`dropped`."""

    def __init__(self, maxlen: int = LOG_BUFFER) -> None:
        super().__init__()
        self._buffer: deque[LoggingMessageNotification] = deque(maxlen=maxlen)
        #: How many messages were dropped because this stream's reader fell behind.
        self.dropped = 0

    def push(self, message: LoggingMessageNotification) -> None:
        if self.closed:
            return
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped += 1
        self._buffer.append(message)
        self._wake()

    def _has_item(self) -> bool:
        return bool(self._buffer)

    def _take(self) -> LoggingMessageNotification:
        return self._buffer.popleft()


class MergedUpdates(_Stream[T]):
    """Items in arrival order, each held at most once while it waits (see the module docs)."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[T, None] = {}
        #: How many updates were merged into one already pending.
        self.merged = 0

    def push(self, item: T) -> None:
        if self.closed:
            return
        if item in self._pending:
            self.merged += 1
            return
        self._pending[item] = None
        self._wake()

    def _has_item(self) -> bool:
        return bool(self._pending)

    def _take(self) -> T:
        item = next(iter(self._pending))
        del self._pending[item]
        return item


class _Subscription:
    __slots__ = ("active", "lock", "streams", "users")

    def __init__(self) -> None:
        self.users = 0
        self.active = False
        self.lock = trio.Lock()
        self.streams: set[MergedUpdates[str]] = set()


class Subscriptions:
    """Resource subscriptions by URI, shared and reference-counted (see the module docs)."""

    def __init__(self) -> None:
        self._by_uri: dict[str, _Subscription] = {}

    def __contains__(self, uri: str) -> bool:
        sub = self._by_uri.get(uri)
        return sub is not None and sub.active

    def users(self, uri: str) -> int:
        sub = self._by_uri.get(uri)
        return 0 if sub is None else sub.users

    async def acquire(
        self, uri: str, stream: MergedUpdates[str], subscribe: Callable[[], Awaitable[object]]
    ) -> None:
        """Add a user of ``uri``; the first one awaits ``subscribe()`` (the server request)."""
        sub = self._by_uri.setdefault(uri, _Subscription())
        sub.users += 1
        try:
            async with sub.lock:
                if not sub.active:
                    await subscribe()
                    sub.active = True
        except BaseException:
            sub.users -= 1
            self._drop_if_unused(uri, sub)
            raise
        sub.streams.add(stream)

    async def release(
        self, uri: str, stream: MergedUpdates[str], unsubscribe: Callable[[], Awaitable[object]]
    ) -> None:
        """Remove a user of ``uri``; the last one awaits ``unsubscribe()``."""
        stream.close()
        sub = self._by_uri.get(uri)
        if sub is None:
            return
        sub.streams.discard(stream)
        sub.users -= 1
        if sub.users:
            return
        async with sub.lock:
            # Someone may have come back while we waited for the lock.
            if sub.users or not sub.active:
                return
            sub.active = False
            self._drop_if_unused(uri, sub)
            await unsubscribe()

    def _drop_if_unused(self, uri: str, sub: _Subscription) -> None:
        if sub.users == 0 and not sub.active and self._by_uri.get(uri) is sub:
            del self._by_uri[uri]

    def updated(self, uri: str) -> None:
        sub = self._by_uri.get(uri)
        if sub is not None:
            for stream in sub.streams:
                stream.push(uri)

    def close(self) -> None:
        for sub in self._by_uri.values():
            for stream in sub.streams:
                stream.close()


@dataclass(frozen=True, kw_only=True)
class NotificationCallbacks:
    """What a client calls for the server's notifications; each is plain or async.

    ``on_log(LoggingMessageNotification)``, ``on_list_changed(kind)`` (``"tools"``,
    ``"resources"`` or ``"prompts"``), ``on_resource_updated(uri)`` and
    ``on_elicitation_complete(elicitation_id)`` are called for those notifications;
    ``on_notification(session, notification)``, the low-level hook, for every notification
    except progress about a request this client is waiting on (that goes to the request's
    ``on_progress``).

    They all run in the session's reader, in the order messages arrive, so while one waits
    nothing else is read from the server: keep them quick, or use the client's streams
    (:meth:`~mcptrio.Client.log_messages`, :meth:`~mcptrio.Client.list_changes`,
    :meth:`~mcptrio.Client.subscribe`). One that raises is logged; the others still run.
    """

    on_log: Callback[LoggingMessageNotification] | None = None
    on_list_changed: Callback[ListKind] | None = None
    on_resource_updated: Callback[str] | None = None
    on_elicitation_complete: Callback[str] | None = None
    on_notification: NotificationHandler | None = None


class NotificationRouter:
    """The client session's ``handle_notification``: callbacks, streams and the raw hook."""

    def __init__(self, callbacks: NotificationCallbacks) -> None:
        self.callbacks = callbacks
        #: Called first when the server's tool list changed (the client forgets output schemas).
        self.on_tools_changed: Callable[[], None] | None = None
        self.log_streams: set[LogMessages] = set()
        self.list_change_streams: set[MergedUpdates[ListKind]] = set()
        self.subscriptions = Subscriptions()
        self.closed = False

    async def __call__(self, session: Session, notification: Notification) -> None:
        callbacks = self.callbacks
        match notification:
            case LoggingMessageNotification():
                for messages in self.log_streams:
                    messages.push(notification)
                await _call(callbacks.on_log, notification)
            case ResourceUpdatedNotification(uri=uri):
                self.subscriptions.updated(uri)
                await _call(callbacks.on_resource_updated, uri)
            case ElicitationCompleteNotification(elicitation_id=elicitation_id):
                await _call(callbacks.on_elicitation_complete, elicitation_id)
            case _ if type(notification) in _LIST_KINDS:
                kind = _LIST_KINDS[type(notification)]
                if kind == "tools" and self.on_tools_changed is not None:
                    self.on_tools_changed()
                for changes in self.list_change_streams:
                    changes.push(kind)
                await _call(callbacks.on_list_changed, kind)
        if callbacks.on_notification is not None:
            await _call(callbacks.on_notification, session, notification)

    def close(self) -> None:
        """The connection ended: end every stream."""
        self.closed = True
        for messages in self.log_streams:
            messages.close()
        for changes in self.list_change_streams:
            changes.close()
        self.subscriptions.close()

    async def close_when_session_ends(self, session: Session) -> None:
        """A session actor: lives as long as the session, then ends every stream."""
        try:
            await trio.sleep_forever()
        finally:
            self.close()


async def _call(callback: Callable[..., Any] | None, *args: Any) -> None:
    if callback is None:
        return
    try:
        outcome = callback(*args)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        log.exception("notification callback %r failed", callback)
