"""What a server keeps per session, and the actors that talk to that session unprompted.

Every session of a :class:`~mcptrio.server.Server` gets a :class:`ServerSessionState`, and a
*notifier* actor in the session's own nursery while it has something to send, so whatever
transport runs the session (stdio, HTTP, WebSocket, in memory), its server-side tasks end with
it. The notifier is started by the first mark or log message (or when the session starts, if
one came before), waits for the handshake, sends until nothing is left, and ends: an idle
session has no task waiting for work that may never come, nor its wake-up event and queue (see
``docs/explanation/payload-cost.md``). The log queue and the set of marks are made when first
used, and let go of once empty.

- **List changes.** Adding or removing a tool, resource or prompt marks the kind changed on
  every session and starts its notifier (unless it runs), which sends one
  ``notifications/<kind>/list_changed`` per kind. Marks made while a notification is being
  sent are merged into the next one, so a burst of a thousand registrations costs a session
  at most two notifications per kind.
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
import weakref
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

__all__ = ["LOG_QUEUE_SIZE", "ListKind", "ServerSessionState", "SessionStates"]

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

    # A server holds one per session: no per-instance dictionary.
    __slots__ = (
        "_changed",
        "_logs",
        "_notifying",
        "_subscriptions",
        "dropped_log_messages",
        "log_level",
        "max_subscriptions",
        "session",
    )

    def __init__(self, session: Session, max_subscriptions: int = 1000) -> None:
        self.session = session
        self.max_subscriptions = max_subscriptions
        #: The level the client asked for with ``logging/setLevel``; ``None`` sends everything.
        self.log_level: LoggingLevel | None = None
        self.dropped_log_messages = 0
        # Made when first used (see the module docstring); the table of subscriptions by the
        # first subscribe, which most sessions never send.
        self._subscriptions: dict[str, trio.MemorySendChannel[None]] | None = None
        self._changed: set[ListKind] | None = None
        self._logs: deque[LoggingMessageNotification] | None = None
        # Whether the notifier runs (or is started and about to).
        self._notifying = False

    # ------------------------------------------------------------ logging

    def log_enabled(self, level: LoggingLevel) -> bool:
        threshold = self.log_level
        return threshold is None or _SEVERITY[level] >= _SEVERITY[threshold]

    def enqueue_log(self, message: LoggingMessageNotification) -> None:
        """Queue a log message for the notifier (never blocks; drops the oldest when full)."""
        logs = self._logs
        if logs is None:
            logs = self._logs = deque(maxlen=LOG_QUEUE_SIZE)
        if len(logs) == logs.maxlen:
            self.dropped_log_messages += 1
        logs.append(message)
        self._start_notifier()

    # ------------------------------------------------------------ list changes

    def mark_changed(self, kind: ListKind) -> None:
        if self._changed is None:
            self._changed = set()
        self._changed.add(kind)
        self._start_notifier()

    # ------------------------------------------------------------ subscriptions

    @property
    def subscriptions(self) -> frozenset[str]:
        return frozenset(self._subscriptions or ())

    def subscribe(self, uri: str) -> None:
        """Start the subscription actor for ``uri`` (subscribing twice is one subscription)."""
        subscriptions = self._subscriptions
        if subscriptions is None:
            subscriptions = self._subscriptions = {}
        if uri in subscriptions:
            return
        if len(subscriptions) >= self.max_subscriptions:
            raise InvalidRequest(
                f"This session already has {self.max_subscriptions} subscriptions, the most it"
                " may hold; unsubscribe from one first"
            )
        send, receive = trio.open_memory_channel[None](1)
        self.session.start_actor(self._subscription, uri, receive)
        subscriptions[uri] = send

    def unsubscribe(self, uri: str) -> bool:
        subscriptions = self._subscriptions
        send = None if subscriptions is None else subscriptions.pop(uri, None)
        if send is None:
            return False
        send.close()
        return True

    def resource_updated(self, uri: str) -> bool:
        """Tell the subscription actor of ``uri`` (if any) about an update, without waiting."""
        subscriptions = self._subscriptions
        send = None if subscriptions is None else subscriptions.get(uri)
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

    @property
    def has_pending(self) -> bool:
        """Whether log messages or list changes wait for the notifier."""
        return bool(self._logs or self._changed)

    def session_started(self) -> None:
        """The session runs now: start the notifier if something came before."""
        if self.has_pending:
            self._start_notifier()

    def _start_notifier(self) -> None:
        if self._notifying:
            return
        try:
            self.session.start_actor(self.run_notifier)
        except ConnectionClosed:
            # Not running yet (session_started will start it) or ended (nothing to send to).
            return
        self._notifying = True

    async def run_notifier(self) -> None:
        """Send the list changes and log messages waiting, and those that come meanwhile; end
        once none is left (the next one starts the notifier again)."""
        self._notifying = True
        try:
            await self.session.handshake_complete.wait()
            # No checkpoint between the last check and the end: nothing can come unseen.
            while self.has_pending:
                logs = self._logs
                while logs:
                    if not await self._send(logs.popleft()):
                        return
                changed, self._changed = self._changed, None
                if changed:
                    for kind in ("tools", "resources", "prompts"):
                        if kind in changed and not await self._send(_LIST_CHANGED[kind]()):
                            return
                if logs is not None and not logs and logs is self._logs:
                    # An empty queue is let go of: an idle session keeps none.
                    self._logs = None
        finally:
            self._notifying = False

    async def _send(self, notification: Notification) -> bool:
        try:
            await self.session.notify(notification)
        except ConnectionClosed:
            return False
        except McpError as exc:
            # Not negotiated with this client (e.g. the capability was not declared for it).
            log.debug("not sending %s: %s", notification.METHOD, exc)
        return True


class SessionStates:
    """The :class:`ServerSessionState` of every session of one server, kept while its session
    runs (a session that ends takes its state with it)."""

    __slots__ = ("_states",)

    def __init__(self) -> None:
        self._states: weakref.WeakKeyDictionary[Session, ServerSessionState] = (
            weakref.WeakKeyDictionary()
        )

    def of(self, session: Session, max_subscriptions: int) -> ServerSessionState:
        """The state of ``session``, made (with ``max_subscriptions``) on first use."""
        state = self._states.get(session)
        if state is None:
            state = self._states[session] = ServerSessionState(session, max_subscriptions)
        return state

    def running(self) -> list[ServerSessionState]:
        """The state of every session that has not ended."""
        return [s for s in list(self._states.values()) if not s.session.is_ended]

    def session_started(self, session: Session) -> None:
        """A session's ``on_start``: its notifier may start now."""
        state = self._states.get(session)
        if state is not None:
            state.session_started()

    def session_ended(self, session: Session) -> None:
        """A session's ``on_end``: its state goes (left in the weak dictionary, the state would
        keep its session, and so itself)."""
        self._states.pop(session, None)
