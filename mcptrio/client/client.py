"""The :class:`Client`: a connected, initialized session and a typed call per server feature.

Every call takes ``timeout`` (``None``: the client's ``request_timeout``), ``max_total_timeout``
and ``on_progress``, as :meth:`~mcptrio.runtime.session.Session.request` does: progress pushes
the timeout back, never past ``max_total_timeout``; a timeout raises
:class:`~mcptrio.protocol.errors.RequestTimeout`; leaving the caller's cancel scope sends
``notifications/cancelled``. An error answer raises the matching
:class:`~mcptrio.protocol.errors.McpError` subclass (``InvalidParams``, ``ResourceNotFound``...).

Listing comes one page at a time (``list_*``) or as an async iterator over every page
(``iter_*``), which refuses a cursor that repeats rather than loop for ever.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio
from msgspec import UNSET

from ..protocol.base import Request, Result
from ..protocol.errors import ConnectionClosed, McpError, RequestTimeout
from ..protocol.revisions import revision_of
from ..protocol.types import (
    CallToolRequest,
    CallToolResult,
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteResult,
    GetPromptRequest,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsRequest,
    ListPromptsResult,
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ListToolsRequest,
    ListToolsResult,
    PingRequest,
    Prompt,
    PromptReference,
    ReadResourceRequest,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    Root,
    ServerCapabilities,
    SetLevelRequest,
    SubscribeRequest,
    Tool,
    UnsubscribeRequest,
)
from ..protocol.types.common import PaginatedResult
from ..protocol.types.logging import LoggingLevel
from ..runtime.outgoing import ProgressCallback
from ..runtime.session import Session
from .errors import RepeatedCursor
from .notifications import ListKind, LogMessages, MergedUpdates, NotificationRouter
from .output_validation import OutputSchemas
from .server_requests import ServerRequestHandlers

__all__ = ["UNSUBSCRIBE_TIMEOUT", "Client"]

log = logging.getLogger("mcptrio.client")

ResultT = TypeVar("ResultT", bound=Result)
PageT = TypeVar("PageT", bound=PaginatedResult)
ItemT = TypeVar("ItemT")

#: How long leaving a ``subscribe`` block waits for the server to confirm the unsubscription.
UNSUBSCRIBE_TIMEOUT = 10.0


class Client:
    """A connected, initialized MCP client session (made by :func:`~mcptrio.open_client`)."""

    def __init__(
        self,
        session: Session,
        initialize_result: InitializeResult,
        *,
        request_timeout: float | None = None,
        handlers: ServerRequestHandlers | None = None,
        notifications: NotificationRouter | None = None,
        output_schemas: OutputSchemas | None = None,
    ) -> None:
        self.session = session
        self.initialize_result = initialize_result
        #: The timeout of every call that passes none (``None``: wait as long as it takes).
        self.request_timeout = request_timeout
        self._handlers = handlers if handlers is not None else ServerRequestHandlers()
        self._notifications = notifications if notifications is not None else NotificationRouter()
        self._output_schemas = output_schemas if output_schemas is not None else OutputSchemas()
        # Output schemas exist only in some revisions; the revision is settled for the session.
        self._has_output_schemas = revision_of(initialize_result.protocol_version).structured_output

    # ---------------------------------------------------------------- what was negotiated

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.initialize_result.protocol_version

    @property
    def server_info(self) -> Implementation:
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    @property
    def roots(self) -> list[Root] | None:
        """The roots this client answers ``roots/list`` with (``None``: it has none)."""
        return None if self._handlers.roots is None else list(self._handlers.roots)

    # ---------------------------------------------------------------- any request

    async def request(
        self,
        request: Request[ResultT],
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ResultT:
        """Send any request and return its typed result (see :meth:`Session.request`)."""
        return await self.session.request(
            request,
            timeout=self.request_timeout if timeout is None else timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def ping(
        self,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        await self.request(
            PingRequest(),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    # ---------------------------------------------------------------- tools

    async def list_tools(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ListToolsResult:
        """One page of ``tools/list`` (the tools' output schemas are remembered)."""
        page = await self.request(
            ListToolsRequest(cursor=_cursor(cursor)),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )
        self._output_schemas.learn(page.tools)
        return page

    async def iter_tools(
        self,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` from page to page."""
        generation = self._output_schemas.generation
        async for page in self._pages(self.list_tools, timeout, max_total_timeout, on_progress):
            for tool in page.tools:
                yield tool
        # A list change during the listing means the listing may already be stale.
        self._output_schemas.complete = generation == self._output_schemas.generation

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call tool ``name``; a tool failure comes back as a result with ``is_error`` set.

        With ``validate_output`` a result is checked against the tool's ``outputSchema``
        (learnt from the last listing; for a tool not listed yet, the tools are listed once
        first) and :class:`~mcptrio.client.errors.OutputValidationError` is raised on mismatch.
        Revisions before 2025-06-18 have no output schemas: nothing is checked there.
        """
        validate_output = validate_output and self._has_output_schemas
        if validate_output and not self._output_schemas.knows(name):
            async for _tool in self.iter_tools(
                timeout=timeout, max_total_timeout=max_total_timeout
            ):
                pass
        # Straight to the session (what request() does, one coroutine less per call).
        result = await self.session.request(
            CallToolRequest(name=name, arguments=UNSET if arguments is None else dict(arguments)),
            timeout=self.request_timeout if timeout is None else timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )
        if validate_output:
            self._output_schemas.check(name, result)
        return result

    # ---------------------------------------------------------------- resources

    async def list_resources(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ListResourcesResult:
        """One page of ``resources/list``."""
        return await self.request(
            ListResourcesRequest(cursor=_cursor(cursor)),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def iter_resources(
        self,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[Resource]:
        """Every resource, page after page."""
        async for page in self._pages(self.list_resources, timeout, max_total_timeout, on_progress):
            for resource in page.resources:
                yield resource

    async def list_resource_templates(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``."""
        return await self.request(
            ListResourceTemplatesRequest(cursor=_cursor(cursor)),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def iter_resource_templates(
        self,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page after page."""
        async for page in self._pages(
            self.list_resource_templates, timeout, max_total_timeout, on_progress
        ):
            for template in page.resource_templates:
                yield template

    async def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ReadResourceResult:
        """``resources/read``; an unknown URI raises ``ResourceNotFound`` (-32002)."""
        return await self.request(
            ReadResourceRequest(uri=uri),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def subscribe_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        """The raw ``resources/subscribe`` (prefer :meth:`subscribe`, which counts users)."""
        await self.request(
            SubscribeRequest(uri=uri),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def unsubscribe_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        """The raw ``resources/unsubscribe``."""
        await self.request(
            UnsubscribeRequest(uri=uri),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    @asynccontextmanager
    async def subscribe(
        self, uri: str, *, timeout: float | None = None
    ) -> AsyncIterator[AsyncIterator[str]]:
        """Subscribe to ``uri`` for the block; iterate to get each update (the URI).

        ::

            async with client.subscribe("file:///notes/a") as updates:
                async for uri in updates:
                    text = await client.read_resource(uri)

        Blocks on the same URI share one server subscription: the first subscribes, the last
        to leave unsubscribes (waiting at most :data:`UNSUBSCRIBE_TIMEOUT` seconds, even when
        the block is being cancelled). Updates that arrive while one is still unread are merged
        into it, so a slow reader never holds up the session. The iteration ends when the
        connection ends. Leaving the block with an error, or after the connection ended, never
        raises an unsubscription failure over it.
        """
        updates: MergedUpdates[str] = MergedUpdates()
        subscriptions = self._notifications.subscriptions
        await subscriptions.acquire(
            uri, updates, lambda: self.subscribe_resource(uri, timeout=timeout)
        )
        failed = True
        try:
            yield updates
            failed = False
        finally:
            with trio.CancelScope(shield=True) as scope:
                # A little past the request's own timeout, which then reports the failure.
                scope.deadline = trio.current_time() + UNSUBSCRIBE_TIMEOUT + 1.0
                try:
                    await subscriptions.release(uri, updates, self._unsubscribe_on_exit(uri))
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

    # ---------------------------------------------------------------- prompts, completion

    async def list_prompts(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ListPromptsResult:
        """One page of ``prompts/list``."""
        return await self.request(
            ListPromptsRequest(cursor=_cursor(cursor)),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def iter_prompts(
        self,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[Prompt]:
        """Every prompt, page after page."""
        async for page in self._pages(self.list_prompts, timeout, max_total_timeout, on_progress):
            for prompt in page.prompts:
                yield prompt

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> GetPromptResult:
        """``prompts/get``: the prompt's messages, filled with ``arguments``."""
        return await self.request(
            GetPromptRequest(name=name, arguments=UNSET if arguments is None else dict(arguments)),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CompleteResult:
        """``completion/complete``: suggestions for ``argument`` of ``ref``, typed so far
        ``value``. ``context`` (arguments already chosen) exists from 2025-06-18 and is left
        out for older servers."""
        request = CompleteRequest(
            ref=ref,
            argument=CompleteArgument(name=argument, value=value),
            context=UNSET if context is None else CompleteContext(arguments=dict(context)),
        )
        return await self.request(
            request,
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    # ---------------------------------------------------------------- logging, notifications

    async def set_logging_level(
        self,
        level: LoggingLevel,
        *,
        timeout: float | None = None,
        max_total_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        """``logging/setLevel``: ask for log messages at ``level`` and above."""
        await self.request(
            SetLevelRequest(level=level),
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            on_progress=on_progress,
        )

    @asynccontextmanager
    async def log_messages(self) -> AsyncIterator[LogMessages]:
        """The server's log messages from now on, for the block.

        The stream holds the last :data:`~mcptrio.client.notifications.LOG_BUFFER` unread
        messages; older ones are dropped and counted in ``messages.dropped``.
        """
        stream = LogMessages()
        async with self._registered(self._notifications.log_streams, stream):
            yield stream

    @asynccontextmanager
    async def list_changes(self) -> AsyncIterator[MergedUpdates[ListKind]]:
        """Which lists (``"tools"``, ``"resources"``, ``"prompts"``) changed, for the block;
        a kind that changes again before it is read is reported once."""
        stream: MergedUpdates[ListKind] = MergedUpdates()
        async with self._registered(self._notifications.list_change_streams, stream):
            yield stream

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

    # ---------------------------------------------------------------- roots

    async def set_roots(self, roots: Sequence[Root]) -> None:
        """Replace the roots answered to ``roots/list``; send
        ``notifications/roots/list_changed`` when ``roots.listChanged`` was declared."""
        await self._handlers.set_roots(self.session, roots)

    # ---------------------------------------------------------------- pagination

    async def _pages(
        self,
        list_page: Callable[..., Awaitable[PageT]],
        timeout: float | None,
        max_total_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> AsyncIterator[PageT]:
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            page = await list_page(
                cursor,
                timeout=timeout,
                max_total_timeout=max_total_timeout,
                on_progress=on_progress,
            )
            yield page
            next_cursor = page.next_cursor
            if not isinstance(next_cursor, str):
                return
            if next_cursor in seen:
                raise RepeatedCursor(
                    f"The server answered nextCursor {next_cursor!r} a second time; stopping"
                    " instead of listing for ever"
                )
            seen.add(next_cursor)
            cursor = next_cursor


def _cursor(cursor: str | None) -> str | Any:
    return UNSET if cursor is None else cursor
