"""What a server keeps per session, and the actors that talk to that session unprompted.

Every session of a :class:`~mcptrio.server.Server` gets a :class:`ServerSessionState` and a
*notifier* actor in the session's own nursery, so whatever transport runs the session (stdio,
HTTP, WebSocket, in memory), its server-side tasks end with it.

- **List changes.** Adding or removing a tool, resource or prompt marks the kind changed on
  every session and wakes its notifier, which sends one ``notifications/<kind>/list_changed``
  per kind. Marks made while a notification is being sent are merged into the next one, so a
  burst of a thousand registrations costs a session at most two notifications per kind.
- **Subscriptions.** Each ``resources/subscribe`` starts one subscription actor fed by a
  channel of capacity one. :meth:`Server.notify_resource_updated` puts a token in the channel of
  every session subscribed to that URI without waiting. *Slow-subscriber policy:* when the
  token is still there (the subscriber has not been told about the previous update yet), the new
  update is merged into it, because ``notifications/resources/updated`` carries no content, only
  "read it again". A subscriber is therefore never more than one notification behind per URI,
  its memory is bounded, and after the last update it is always notified at least once. A session
  holds at most ``max_subscriptions`` distinct URIs (``Server(max_subscriptions=...)``, 1000 by
  default): one more is refused with -32600, so a client cannot grow the server by subscribing
  to every URI a template matches.
- **Log messages** from the stdlib bridge (records emitted outside any request) go through a
  bounded queue of :data:`LOG_QUEUE_SIZE` messages; past that the oldest are dropped and the
  drop is counted in :attr:`ServerSessionState.dropped_log_messages`.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Literal

import trio

from ..protocol.base import Notification
from ..protocol.errors import ConnectionClosed, InvalidRequest, McpError
from ..protocol.types import (
    LoggingMessageNotification,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)
from ..protocol.types.logging import LOGGING_LEVELS, LoggingLevel
from ..runtime.session import Session

__all__ = ["LOG_QUEUE_SIZE", "ListKind", "ServerSessionState"]

log = logging.getLogger("mcptrio.server")

ListKind = Literal["tools", "resources", "prompts"]
LOG_QUEUE_SIZE = 256

_LIST_CHANGED: dict[str, type[Notification]] = {
    "tools": ToolListChangedNotification,
    "resources": ResourceListChangedNotification,
    "prompts": PromptListChangedNotification,
}
_SEVERITY = {level: index for index, level in enumerate(LOGGING_LEVELS)}


class ServerSessionState:
    """One session's log level, subscriptions and pending unprompted notifications."""

    def __init__(self, session: Session, max_subscriptions: int = 1000) -> None:
        self.session = session
        self.max_subscriptions = max_subscriptions
        #: The level the client asked for with ``logging/setLevel``; ``None`` sends everything.
        self.log_level: LoggingLevel | None = None
        self.dropped_log_messages = 0
        self._subscriptions: dict[str, trio.MemorySendChannel[None]] = {}
        self._changed: set[ListKind] = set()
        self._logs: deque[LoggingMessageNotification] = deque(maxlen=LOG_QUEUE_SIZE)
        self._wake = trio.Event()

    # ------------------------------------------------------------ logging

    def log_enabled(self, level: LoggingLevel) -> bool:
        threshold = self.log_level
        return threshold is None or _SEVERITY[level] >= _SEVERITY[threshold]

    def enqueue_log(self, message: LoggingMessageNotification) -> None:
        """Queue a log message for the notifier (never blocks; drops the oldest when full)."""
        if len(self._logs) == self._logs.maxlen:
            self.dropped_log_messages += 1
        self._logs.append(message)
        self._wake.set()

    # ------------------------------------------------------------ list changes

    def mark_changed(self, kind: ListKind) -> None:
        self._changed.add(kind)
        self._wake.set()

    # ------------------------------------------------------------ subscriptions

    @property
    def subscriptions(self) -> frozenset[str]:
        return frozenset(self._subscriptions)

    def subscribe(self, uri: str) -> None:
        """Start the subscription actor for ``uri`` (subscribing twice is one subscription)."""
        if uri in self._subscriptions:
            return
        if len(self._subscriptions) >= self.max_subscriptions:
            raise InvalidRequest(
                f"This session already has {self.max_subscriptions} subscriptions, the most it"
                " may hold; unsubscribe from one first"
            )
        send, receive = trio.open_memory_channel[None](1)
        self.session.start_actor(self._subscription, uri, receive)
        self._subscriptions[uri] = send

    def unsubscribe(self, uri: str) -> bool:
        send = self._subscriptions.pop(uri, None)
        if send is None:
            return False
        send.close()
        return True

    def resource_updated(self, uri: str) -> bool:
        """Tell the subscription actor of ``uri`` (if any) about an update, without waiting."""
        send = self._subscriptions.get(uri)
        if send is None:
            return False
        try:
            send.send_nowait(None)
        except trio.WouldBlock:
            pass  # An update is already pending; it covers this one (see the module docs).
        except trio.ClosedResourceError:
            return False
        return True

    async def _subscription(self, uri: str, updates: trio.MemoryReceiveChannel[None]) -> None:
        async with updates:
            async for _ in updates:
                try:
                    await self.session.notify(ResourceUpdatedNotification(uri=uri))
                except ConnectionClosed:
                    return

    # ------------------------------------------------------------ the notifier actor

    async def run_notifier(self) -> None:
        """Send list changes and queued log messages until the session ends."""
        await self.session.handshake_complete.wait()
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            while self._logs:
                if not await self._send(self._logs.popleft()):
                    return
            changed, self._changed = self._changed, set()
            for kind in ("tools", "resources", "prompts"):
                if kind in changed and not await self._send(_LIST_CHANGED[kind]()):
                    return

    async def _send(self, notification: Notification) -> bool:
        try:
            await self.session.notify(notification)
        except ConnectionClosed:
            return False
        except McpError as exc:
            # Not negotiated with this client (e.g. the capability was not declared for it).
            log.debug("not sending %s: %s", notification.METHOD, exc)
        return True
