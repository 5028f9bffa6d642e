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
- **Listen streams** (2026-07-28): a notification whose ``_meta`` names a subscription (the id of
  a ``subscriptions/listen`` request, :mod:`.listen`) goes where that listen says: the client's
  own listen stream feeds the callbacks and streams above, as the handshake era's notifications
  do; a ``client.listen()`` block's feeds that block alone. One naming a listen already closed
  is dropped.

Every stream ends (its ``async for`` finishes) when the connection ends.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar

import trio

from ..protocol.base import Notification, RequestId
from ..protocol.request_meta import SUBSCRIPTION_ID_KEY
from ..protocol.types import (
    ElicitationCompleteNotification,
    LoggingMessageNotification,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    SubscriptionsAcknowledgedNotification,
    ToolListChangedNotification,
)
from ..runtime.session import NotificationHandler, Session

if TYPE_CHECKING:
    from .listen import ListenRecord, ListenStream

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
        self,
        uri: str,
        stream: MergedUpdates[str] | None,
        subscribe: Callable[[], Awaitable[object]],
    ) -> None:
        """Add a user of ``uri``; the first one awaits ``subscribe()`` (the server request).

        ``stream`` (``None``: the user reads updates elsewhere) receives updates from before
        ``subscribe()`` returns, so none sent right after the server's confirmation is missed.
        """
        sub = self._by_uri.setdefault(uri, _Subscription())
        sub.users += 1
        if stream is not None:
            sub.streams.add(stream)
        try:
            async with sub.lock:
                if not sub.active:
                    await subscribe()
                    sub.active = True
        except BaseException:
            sub.users -= 1
            if stream is not None:
                sub.streams.discard(stream)
            self._drop_if_unused(uri, sub)
            raise

    async def release(
        self,
        uri: str,
        stream: MergedUpdates[str] | None,
        unsubscribe: Callable[[], Awaitable[object]],
    ) -> None:
        """Remove a user of ``uri``; the last one awaits ``unsubscribe()``."""
        sub = self._by_uri.get(uri)
        if stream is not None:
            stream.close()
            if sub is not None:
                sub.streams.discard(stream)
        if sub is None:
            return
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

    In the stateless era (2026-07-28) list changes and resource updates come only on listen
    streams: ``on_list_changed`` makes the client keep one open for the kinds the server
    announces, and ``on_resource_updated`` hears the URIs of the open ``subscribe()`` blocks.

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
        #: Called first with every list change and resource update, wherever it came from (the
        #: client forgets what it may no longer trust: output schemas, cached results).
        self.on_change: Callable[[Notification], None] | None = None
        self.log_streams: set[LogMessages] = set()
        self.list_change_streams: set[MergedUpdates[ListKind]] = set()
        self.subscriptions = Subscriptions()
        #: The listen requests in flight (2026-07-28), by id: the subscription ids.
        self.listens: dict[RequestId, ListenRecord] = {}
        #: ``client.listen()`` blocks of the handshake era, fed from the session's notifications.
        self.session_listens: set[ListenStream] = set()
        self.closed = False

    async def __call__(self, session: Session, notification: Notification) -> None:
        meta = notification.meta
        if isinstance(meta, dict) and SUBSCRIPTION_ID_KEY in meta:
            record = self.listens.get(meta[SUBSCRIPTION_ID_KEY])
            if record is None:
                pass  # the stream of a listen already closed: nobody is listening
            elif isinstance(notification, SubscriptionsAcknowledgedNotification):
                record.acknowledge(notification.notifications)
            elif record.stream is not None:
                # A client.listen() block's stream: that block alone reads it.
                self._changed(notification)
                record.stream.offer(notification)
            else:
                await self._deliver(notification)
        else:
            await self._deliver(notification)
            for stream in self.session_listens:
                stream.offer(notification)
        if self.callbacks.on_notification is not None:
            await _call(self.callbacks.on_notification, session, notification)

    def _changed(self, notification: Notification) -> None:
        if self.on_change is not None and (
            type(notification) in _LIST_KINDS
            or isinstance(notification, ResourceUpdatedNotification)
        ):
            self.on_change(notification)

    async def _deliver(self, notification: Notification) -> None:
        """To the callbacks and streams (the handshake era's notifications, and the stateless
        era's on the client's own listen stream)."""
        callbacks = self.callbacks
        match notification:
            case LoggingMessageNotification():
                for messages in self.log_streams:
                    messages.push(notification)
                await _call(callbacks.on_log, notification)
            case ResourceUpdatedNotification(uri=uri):
                self._changed(notification)
                self.subscriptions.updated(uri)
                await _call(callbacks.on_resource_updated, uri)
            case ElicitationCompleteNotification(elicitation_id=elicitation_id):
                await _call(callbacks.on_elicitation_complete, elicitation_id)
            case _ if type(notification) in _LIST_KINDS:
                self._changed(notification)
                kind = _LIST_KINDS[type(notification)]
                for changes in self.list_change_streams:
                    changes.push(kind)
                await _call(callbacks.on_list_changed, kind)

    def end_listened_streams(self) -> None:
        """The client's own listen stream ended: end the streams it fed (not the logs)."""
        for changes in self.list_change_streams:
            changes.close()
        self.subscriptions.close()

    def close(self) -> None:
        """The connection ended: end every stream."""
        self.closed = True
        for messages in self.log_streams:
            messages.close()
        self.end_listened_streams()
        for stream in self.session_listens:
            stream.close()

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
