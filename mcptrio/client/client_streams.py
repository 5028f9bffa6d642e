"""What a :class:`~mcptrio.Client` reads of the server's notifications: log messages, list
changes, resource subscriptions and listen streams, in both eras.

:class:`ClientStreams` holds them for one client, which answers its ``subscribe``, ``listen``,
``list_changes`` and ``log_messages`` with it. In the handshake era the server sends list
changes unasked and resource updates after ``resources/subscribe``; in the stateless era
(2026-07-28) it sends them only on ``subscriptions/listen`` streams, so there ``subscribe()``,
``list_changes()`` and the ``on_list_changed`` callback are fed by the client's own listen
stream (:mod:`.listen_actor`), and ``listen()`` opens a stream of the block's own. The methods
behave the same in both eras; the differences are in :meth:`ClientStreams.listen`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final, Unpack

import trio

from ..protocol.base import Notification
from ..protocol.errors import CapabilityNotNegotiated, ConnectionClosed, McpError, RequestTimeout
from ..protocol.types import (
    ResourceUpdatedNotification,
    ServerCapabilities,
    SubscribeRequest,
    SubscriptionFilter,
    UnsubscribeRequest,
)
from .errors import SubscriptionRefused
from .listen import (
    LIST_KIND_OF,
    ListenStream,
    declared_kinds,
    listen_filter,
    offers_subscriptions,
    open_listen,
    open_session_listen,
    uris_of,
)
from .listen_actor import ListenActor
from .notifications import ListKind, LogMessages, MergedUpdates, NotificationRouter
from .options import CallOptions, check_options
from .output_validation import OutputSchemas
from .sending import RequestSender

__all__ = ["UNSUBSCRIBE_TIMEOUT", "ClientStreams"]

log = logging.getLogger("mcptrio.client")

#: How long leaving a ``subscribe`` block waits for the server to confirm the unsubscription.
UNSUBSCRIBE_TIMEOUT: Final = 10.0


class ClientStreams:
    """The notification streams of one client (see the module docstring); the client's
    methods of the same names document them."""

    def __init__(
        self,
        sender: RequestSender,
        capabilities: ServerCapabilities,
        notifications: NotificationRouter,
        output_schemas: OutputSchemas,
        listen_timeout: float,
    ) -> None:
        self._sender = sender
        self.session = sender.session
        self._capabilities = capabilities
        self._output_schemas = output_schemas
        notifications.on_change = self._changed
        self._notifications = notifications
        self._listen_timeout = listen_timeout
        # The stateless era's notifications come only on listen streams: the client's own
        # stream, kept by this actor in the session's nursery, feeds subscribe(), list_changes()
        # and the callbacks.
        self._listener: ListenActor | None = None
        if self.session.connection.request_meta is not None:
            self._listener = ListenActor(self.session, notifications, timeout=listen_timeout)
            self.session.start_actor(self._listener.run)

    def _changed(self, notification: Notification) -> None:
        """A list changed or a resource was updated: forget what that makes stale."""
        if isinstance(notification, ResourceUpdatedNotification):
            self._sender.settings.cache.resource_updated(notification.uri)
            return
        kind = LIST_KIND_OF[type(notification)]
        self._sender.settings.cache.list_changed(kind)
        if kind == "tools":
            # A changed tool list may have changed any tool's output schema.
            self._output_schemas.forget()

    async def listen_for_callbacks(self) -> None:
        """Stateless era, with an ``on_list_changed`` callback: open the client's listen stream
        for the kinds the server announces (:func:`~mcptrio.open_client` calls it once)."""
        if self._listener is None or self._notifications.callbacks.on_list_changed is None:
            return
        kinds = declared_kinds(self._capabilities)
        if kinds:
            try:
                await self._listener.want(kinds=kinds)
            except McpError as exc:
                # Logged by the actor; the callback hears nothing until a block asks anew.
                log.debug("no listen stream for the callbacks: %s", exc)

    # ---------------------------------------------------------------- resource subscriptions

    async def subscribe_resource(self, uri: str, **options: Unpack[CallOptions]) -> None:
        """The raw ``resources/subscribe`` (prefer :meth:`subscribe`, which counts users);
        handshake era only."""
        await self._sender.request(SubscribeRequest(uri=uri), **options)

    async def unsubscribe_resource(self, uri: str, **options: Unpack[CallOptions]) -> None:
        """The raw ``resources/unsubscribe``; handshake era only."""
        await self._sender.request(UnsubscribeRequest(uri=uri), **options)

    @asynccontextmanager
    async def subscribe(
        self, uri: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[AsyncIterator[str]]:
        """Subscribe to ``uri`` for the block (see :meth:`mcptrio.Client.subscribe`)."""
        if options:
            check_options("subscribe()", options, CallOptions)
        updates: MergedUpdates[str] = MergedUpdates()
        if self._notifications.closed:
            updates.close()
        if self._listener is not None:
            async with self._listened_uri(uri, updates):
                yield updates
            return
        subscriptions = self._notifications.subscriptions
        await subscriptions.acquire(uri, updates, lambda: self.subscribe_resource(uri, **options))
        failed = True
        try:
            yield updates
            failed = False
        finally:
            await self._leave_subscription(uri, updates, failed)

    @asynccontextmanager
    async def _listened_uri(self, uri: str, updates: MergedUpdates[str]) -> AsyncIterator[None]:
        """The stateless era's ``subscribe()``: ``uri`` on the client's own listen stream."""
        assert self._listener is not None
        if not offers_subscriptions(self._capabilities):
            raise CapabilityNotNegotiated(
                f"Cannot subscribe to {uri}: the server did not declare capability"
                " resources.subscribe"
            )
        subscriptions = self._notifications.subscriptions
        # Counted with the handshake era's subscriptions only to route updates to the blocks;
        # the listen actor counts the wishes itself.
        await subscriptions.acquire(uri, updates, _nothing)
        try:
            honoured = await self._listener.want(uris=(uri,))
            try:
                if uri not in uris_of(honoured):
                    raise SubscriptionRefused(
                        f"The server acknowledged the listen stream without {uri}"
                    )
                yield
            finally:
                self._listener.unwant(uris=(uri,))
        finally:
            with trio.CancelScope(shield=True):  # no request: only the lock, taken at once
                await subscriptions.release(uri, updates, _nothing)

    async def _leave_subscription(
        self, uri: str, stream: MergedUpdates[str] | None, failed: bool
    ) -> None:
        """Leave a handshake-era subscription of ``uri``; the last user unsubscribes, shielded
        from the caller's cancellation but not past :data:`UNSUBSCRIBE_TIMEOUT`. A failure is
        raised only when the block itself did not fail (``failed``), and never once the
        connection is gone."""
        subscriptions = self._notifications.subscriptions
        with trio.CancelScope(shield=True) as scope:
            # A little past the request's own timeout, which then reports the failure.
            scope.deadline = trio.current_time() + UNSUBSCRIBE_TIMEOUT + 1.0
            try:
                await subscriptions.release(uri, stream, self._unsubscribe_on_exit(uri))
            except ConnectionClosed:
                pass  # Once the connection is gone there is nothing to unsubscribe from.
            except McpError:
                if not failed:
                    raise
                log.warning("unsubscribing from %s failed", uri, exc_info=True)
        if scope.cancelled_caught and not failed:
            raise RequestTimeout(f"The server did not confirm unsubscribing from {uri}")

    def _unsubscribe_on_exit(self, uri: str) -> Callable[[], Awaitable[None]]:
        async def unsubscribe() -> None:
            if not self.session.closed.is_set():
                await self.unsubscribe_resource(uri, timeout=UNSUBSCRIBE_TIMEOUT)

        return unsubscribe

    # ---------------------------------------------------------------- listen streams

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Iterable[str] = (),
    ) -> AsyncIterator[ListenStream]:
        """A stream of the server's notifications for the block (see
        :meth:`mcptrio.Client.listen`)."""
        if isinstance(uris, str):
            raise TypeError("listen(uris=...) takes a sequence of URIs, not one string")
        wanted: tuple[tuple[ListKind, bool], ...] = (
            ("tools", tools),
            ("prompts", prompts),
            ("resources", resources),
        )
        kinds = [kind for kind, asked_for in wanted if asked_for]
        asked = listen_filter(kinds, uris)
        if asked == SubscriptionFilter():
            raise ValueError(
                "listen() was asked for nothing: give tools, prompts, resources or uris"
            )
        if self._listener is not None:
            async with open_listen(
                self.session, self._notifications, asked, self._listen_timeout
            ) as stream:
                yield stream
            return
        subscriptions = self._notifications.subscriptions

        async def join(uri: str) -> None:
            await subscriptions.acquire(uri, None, lambda: self.subscribe_resource(uri))

        async def leave(uri: str, failed: bool) -> None:
            await self._leave_subscription(uri, None, failed)

        async with open_session_listen(
            self._notifications, self._capabilities, asked, join, leave
        ) as stream:
            if self._notifications.closed:
                stream.end("connection")
            yield stream

    # ---------------------------------------------------------------- logs and list changes

    @asynccontextmanager
    async def log_messages(self) -> AsyncIterator[LogMessages]:
        """The server's log messages from now on, for the block."""
        stream = LogMessages()
        meta = self.session.connection.request_meta
        if meta is not None and meta.log_level is None:
            # The stateless era logs only at a level the request names: a client reading the
            # log asks for every level, as a handshake-era server sends before setLevel.
            meta.log_level = "debug"
        async with self._registered(self._notifications.log_streams, stream):
            yield stream

    @asynccontextmanager
    async def list_changes(self) -> AsyncIterator[MergedUpdates[ListKind]]:
        """Which lists changed, for the block (see :meth:`mcptrio.Client.list_changes`)."""
        stream: MergedUpdates[ListKind] = MergedUpdates()
        async with self._registered(self._notifications.list_change_streams, stream):
            kinds = (
                declared_kinds(self._capabilities)
                if self._listener is not None and not self._notifications.closed
                else frozenset[ListKind]()
            )
            if not kinds:
                yield stream
                return
            assert self._listener is not None
            await self._listener.want(kinds=kinds)
            try:
                yield stream
            finally:
                self._listener.unwant(kinds=kinds)

    @asynccontextmanager
    async def _registered(
        self, streams: set[Any], stream: LogMessages | MergedUpdates[Any]
    ) -> AsyncIterator[None]:
        if self._notifications.closed:
            stream.close()
        streams.add(stream)
        try:
            yield
        finally:
            streams.discard(stream)
            stream.close()


async def _nothing() -> None:
    """No request to send: the stateless era has no ``resources/(un)subscribe``."""
