"""Listen streams: the stateless era's ``subscriptions/listen`` (2026-07-28), and
:meth:`Client.listen() <mcptrio.Client.listen>` in both eras.

A listen request is a request whose answer comes last: the server first sends
``notifications/subscriptions/acknowledged`` (the part of the filter it honours), then the
notifications asked for, each tagged with the listen request's id in
``_meta["io.modelcontextprotocol/subscriptionId"]``, and answers
(:class:`~mcptrio.protocol.types.SubscriptionsListenResult`) only when it ends the stream. The
client ends it by leaving the request: over HTTP that closes the POST's response stream, over
stdio, WebSocket and in memory the session sends ``notifications/cancelled``.

Here:

- :class:`ListenStream` is what a ``client.listen()`` block reads: the notifications, bounded
  (see its docs for the slow-consumer policy), ending when the stream does;
- :class:`ListenRecord` is one listen request in flight: what it asked, what the server
  honoured, where its notifications go; :func:`run_listen` runs the request;
- :func:`open_listen` opens one listen for a ``client.listen()`` block (stateless era), and
  :func:`open_session_listen` gives the handshake era's equivalent, fed from the session's own
  notifications after ``resources/subscribe``.

The client's own listen stream, which feeds ``subscribe()``, ``list_changes()`` and the
callbacks in the stateless era, is the actor in :mod:`.listen_actor`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeAlias

import trio

from ..protocol.base import Notification, RequestId
from ..protocol.errors import ConnectionClosed, McpError, RequestTimeout
from ..protocol.types import (
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ServerCapabilities,
    SubscriptionFilter,
    SubscriptionsListenRequest,
    ToolListChangedNotification,
)
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.session import Session
from .errors import ClientError
from .notifications import ListKind, NotificationRouter, _Stream

__all__ = [
    "LIST_KIND_OF",
    "ListenEnd",
    "ListenRecord",
    "ListenStream",
    "declared_kinds",
    "listen_filter",
    "open_listen",
    "open_session_listen",
    "run_listen",
]

log = logging.getLogger("mcptrio.client")

#: How a listen stream ended: the server ended it (a ``SubscriptionsListenResult``), the
#: connection (or the stream's transport) closed, the client left it, or an error answered it.
ListenEnd: TypeAlias = Literal["server", "connection", "client", "error"]

_KIND_FIELDS: dict[ListKind, str] = {
    "tools": "tools_list_changed",
    "prompts": "prompts_list_changed",
    "resources": "resources_list_changed",
}
#: The list kind each list-changed notification is about.
LIST_KIND_OF: dict[type[Notification], ListKind] = {
    ToolListChangedNotification: "tools",
    PromptListChangedNotification: "prompts",
    ResourceListChangedNotification: "resources",
}


def listen_filter(kinds: Iterable[ListKind] = (), uris: Iterable[str] = ()) -> SubscriptionFilter:
    """The filter asking for ``kinds`` of list change and updates of ``uris`` (in a stable
    order, so equal wishes make equal filters)."""
    wanted = set(kinds)
    uri_list = sorted(set(uris))
    return SubscriptionFilter(
        tools_list_changed=True if "tools" in wanted else None,
        prompts_list_changed=True if "prompts" in wanted else None,
        resources_list_changed=True if "resources" in wanted else None,
        resource_subscriptions=uri_list if uri_list else None,
    )


def kinds_of(filter: SubscriptionFilter) -> frozenset[ListKind]:
    """The list kinds ``filter`` asks for."""
    return frozenset(kind for kind, field in _KIND_FIELDS.items() if getattr(filter, field) is True)


def uris_of(filter: SubscriptionFilter) -> frozenset[str]:
    """The resource URIs ``filter`` asks for."""
    uris = filter.resource_subscriptions
    return frozenset(uris) if isinstance(uris, list) else frozenset()


def declared_kinds(capabilities: ServerCapabilities) -> frozenset[ListKind]:
    """The list kinds whose changes the server says it announces (``listChanged``)."""
    offered: tuple[tuple[ListKind, object], ...] = (
        ("tools", capabilities.tools),
        ("prompts", capabilities.prompts),
        ("resources", capabilities.resources),
    )
    return frozenset(
        kind for kind, capability in offered if getattr(capability, "list_changed", None) is True
    )


def offers_subscriptions(capabilities: ServerCapabilities) -> bool:
    """Whether the server takes resource subscriptions (``resources.subscribe``)."""
    resources = capabilities.resources
    return resources is not None and resources.subscribe is True


class ListenStream(_Stream[Notification]):
    """The notifications of one ``client.listen()`` block, read with ``async for``.

    Items are the notifications as received (``ToolListChangedNotification``,
    ``PromptListChangedNotification``, ``ResourceListChangedNotification``,
    ``ResourceUpdatedNotification``), only those the server acknowledged (:attr:`acknowledged`).

    **Slow consumers.** The buffer holds each distinct notification at most once: a list change
    of a kind, or an update of a URI, that arrives while an equal one is still unread is merged
    into it (counted in :attr:`merged`), as :class:`~mcptrio.client.MergedUpdates` does. These
    notifications carry no content, only "look again", so the buffer is bounded by the three
    kinds plus the URIs asked for, and a slow reader never holds up the session.

    **Ending.** The iteration ends, after what is buffered, when the block is left, the server
    ends the stream, or the connection closes; :attr:`ended` then says which. A stream that the
    server ended with an error raises it (:attr:`error`) from the iteration.
    """

    def __init__(self, asked: SubscriptionFilter) -> None:
        super().__init__()
        #: What the block asked for.
        self.asked = asked
        #: What the server agreed to send (set before the block starts).
        self.acknowledged = SubscriptionFilter()
        #: The listen request's id (the ``subscriptionId``); ``None`` in the handshake era.
        self.subscription_id: RequestId | None = None
        #: How the stream ended (``None`` while it is open).
        self.ended: ListenEnd | None = None
        #: The error the server answered the listen request with, if it did.
        self.error: McpError | None = None
        #: How many notifications were merged into one already unread.
        self.merged = 0
        self._kinds: frozenset[ListKind] = frozenset()
        self._uris: frozenset[str] = frozenset()
        self._pending: dict[tuple[str, str | None], Notification] = {}

    def acknowledge(self, honoured: SubscriptionFilter) -> None:
        self.acknowledged = honoured
        self._kinds = kinds_of(honoured)
        self._uris = uris_of(honoured)

    def offer(self, notification: Notification) -> None:
        """Buffer ``notification`` if this stream was granted it (never blocks)."""
        if self.closed:
            return
        if isinstance(notification, ResourceUpdatedNotification):
            if notification.uri not in self._uris:
                return
            key: tuple[str, str | None] = (notification.METHOD, notification.uri)
        else:
            kind = LIST_KIND_OF.get(type(notification))
            if kind is None or kind not in self._kinds:
                return
            key = (notification.METHOD, None)
        if key in self._pending:
            self.merged += 1
            return
        self._pending[key] = notification
        self._wake()

    def end(self, how: ListenEnd, error: McpError | None = None) -> None:
        if self.ended is None:
            self.ended = how
            self.error = error
        self.close()

    async def __anext__(self) -> Notification:
        try:
            return await super().__anext__()
        except StopAsyncIteration:
            if self.error is not None:
                raise self.error from None
            raise

    def _has_item(self) -> bool:
        return bool(self._pending)

    def _take(self) -> Notification:
        key = next(iter(self._pending))
        return self._pending.pop(key)


class ListenRecord:
    """One ``subscriptions/listen`` request in flight (see the module docs).

    ``stream`` is the ``client.listen()`` block's stream its notifications go to, or ``None``
    for the client's own listen, whose notifications go to the callbacks and streams.
    ``on_end`` is called once, when the request has ended.
    """

    __slots__ = (
        "acknowledged",
        "asked",
        "ended",
        "error",
        "honoured",
        "on_end",
        "rid",
        "scope",
        "stream",
    )

    def __init__(
        self,
        asked: SubscriptionFilter,
        stream: ListenStream | None = None,
        on_end: Callable[[ListenRecord], None] | None = None,
    ) -> None:
        self.asked = asked
        self.stream = stream
        self.on_end = on_end
        self.rid: RequestId | None = None
        #: What the server honours, once it acknowledged.
        self.honoured: SubscriptionFilter | None = None
        #: Set when the server acknowledged, or the request ended before it did.
        self.acknowledged = trio.Event()
        #: Cancelling it ends the listen (the client leaves the request).
        self.scope = trio.CancelScope()
        self.ended: ListenEnd | None = None
        self.error: McpError | None = None

    def acknowledge(self, honoured: SubscriptionFilter) -> None:
        if self.honoured is not None:
            return  # the first acknowledgement is the one; a repeat changes nothing
        self.honoured = honoured
        if self.stream is not None:
            self.stream.acknowledge(honoured)
        self.acknowledged.set()

    def close(self) -> None:
        """Leave the listen request (the server is told, as for any request left)."""
        self.scope.cancel()

    def _finish(self, how: ListenEnd, error: McpError | None) -> None:
        self.ended = how
        self.error = error
        self.acknowledged.set()
        if self.stream is not None:
            self.stream.end(how, error)
        if self.on_end is not None:
            self.on_end(self)

    async def wait_acknowledged(self, timeout: float) -> SubscriptionFilter:
        """The honoured filter, once the server acknowledged; raises (and leaves the listen)
        if it answers with an error, ends, or does not acknowledge within ``timeout``."""
        with trio.move_on_after(timeout):
            await self.acknowledged.wait()
        if self.honoured is not None:
            return self.honoured
        self.close()
        if self.error is not None:
            raise self.error
        if self.ended == "connection":
            raise ConnectionClosed("The connection closed before the listen was acknowledged")
        if self.ended is not None:
            raise ClientError("The server ended the listen stream before acknowledging it")
        raise RequestTimeout(f"The server did not acknowledge subscriptions/listen in {timeout} s")


async def run_listen(session: Session, router: NotificationRouter, record: ListenRecord) -> None:
    """Send ``record``'s listen request and wait for it to end (see the module docs).

    Its id is registered with ``router`` before the request is sent, so the acknowledgement and
    every notification are recognised however early they come; it is forgotten when the request
    ends, so what the server sends after that is dropped.
    """

    def registered(rid: RequestId) -> None:
        record.rid = rid
        router.listens[rid] = record
        if record.stream is not None:
            record.stream.subscription_id = rid

    how: ListenEnd = "client"
    error: McpError | None = None
    try:
        with record.scope:
            try:
                await session.request(
                    SubscriptionsListenRequest(notifications=record.asked), on_id=registered
                )
                how = "server"
            except ConnectionClosed:
                how = "connection"
            except McpError as exc:
                how, error = "error", exc
    finally:
        if record.rid is not None:
            router.listens.pop(record.rid, None)
        record._finish(how, error)


@asynccontextmanager
async def open_listen(
    session: Session, router: NotificationRouter, asked: SubscriptionFilter, timeout: float
) -> AsyncIterator[ListenStream]:
    """One listen request for a ``client.listen()`` block (stateless era), acknowledged before
    the block starts; leaving the block leaves the request. The request runs in a nursery of
    this block's own."""
    stream = ListenStream(asked)
    record = ListenRecord(asked, stream)
    async with open_unwrapping_nursery() as nursery:
        nursery.start_soon(run_listen, session, router, record)
        try:
            await record.wait_acknowledged(timeout)
            yield stream
        finally:
            record.close()
            stream.end("client")


@asynccontextmanager
async def open_session_listen(
    router: NotificationRouter,
    capabilities: ServerCapabilities,
    asked: SubscriptionFilter,
    join: Callable[[str], Awaitable[object]],
    leave: Callable[[str, bool], Awaitable[None]],
) -> AsyncIterator[ListenStream]:
    """A ``client.listen()`` block in the handshake era, fed from the session's notifications.

    The server sends list changes unasked when it declares ``listChanged``, so those kinds are
    "acknowledged" as declared; each URI is subscribed with ``resources/subscribe`` when the
    server declares ``resources.subscribe``, shared with ``subscribe()`` blocks on it:
    ``join(uri)`` joins or starts the subscription, ``leave(uri, failed)`` leaves it (raising
    its failure only when the block did not fail).
    """
    kinds = kinds_of(asked) & declared_kinds(capabilities)
    uris = uris_of(asked) if offers_subscriptions(capabilities) else frozenset[str]()
    stream = ListenStream(asked)
    stream.acknowledge(listen_filter(kinds, uris))
    # Registered first: an update sent right after a subscription is confirmed is not missed.
    router.session_listens.add(stream)
    joined: list[str] = []
    failed = True
    try:
        for uri in sorted(uris):
            await join(uri)
            joined.append(uri)
        yield stream
        failed = False
    finally:
        router.session_listens.discard(stream)
        stream.end("client")
        for uri in joined:
            await leave(uri, failed)


def describe(filter: SubscriptionFilter) -> str:
    """``filter`` for a log line."""
    parts: list[Any] = sorted(kinds_of(filter))
    parts += sorted(uris_of(filter))
    return ", ".join(parts) or "nothing"
