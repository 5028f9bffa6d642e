"""The :class:`Client`: a connected, initialized session and a typed call per server feature.

Every call takes the keywords of :class:`~mcptrio.client.options.CallOptions` (``timeout``,
``max_total_timeout``, ``on_progress``), as :meth:`~mcptrio.runtime.session.Session.request`
does: progress pushes the timeout back, never past ``max_total_timeout``; a timeout raises
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
from typing import Any, TypeVar, Unpack

import trio
from msgspec import UNSET

from ..protocol.base import Request, Result
from ..protocol.errors import ConnectionClosed, HeaderMismatch, McpError, RequestTimeout
from ..protocol.http_headers import PropertyPath
from ..protocol.revisions import revision_of
from ..protocol.types.common import PaginatedResult
from ..protocol.types.completion import (
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteResult,
    PromptReference,
    ResourceTemplateReference,
)
from ..protocol.types.discovery import DiscoverRequest
from ..protocol.types.input_required import InputRequiredResult
from ..protocol.types.lifecycle import (
    Implementation,
    InitializeResult,
    PingRequest,
    ServerCapabilities,
)
from ..protocol.types.logging import LoggingLevel, SetLevelRequest
from ..protocol.types.prompts import (
    GetPromptRequest,
    GetPromptResult,
    ListPromptsRequest,
    ListPromptsResult,
    Prompt,
)
from ..protocol.types.resources import (
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ReadResourceRequest,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SubscribeRequest,
    UnsubscribeRequest,
)
from ..protocol.types.roots import Root
from ..protocol.types.tools import (
    CallToolRequest,
    CallToolResult,
    ListToolsRequest,
    ListToolsResult,
    Tool,
)
from ..runtime.session import Session
from .errors import RepeatedCursor
from .header_params import HeaderParamsOfTools
from .input_required import answer_input_required
from .notifications import ListKind, LogMessages, MergedUpdates, NotificationRouter
from .options import CallOptions, check_options
from .output_validation import OutputSchemas
from .server_requests import ServerRequestRouter

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
        handlers: ServerRequestRouter,
        notifications: NotificationRouter,
    ) -> None:
        self.session = session
        self.initialize_result = initialize_result
        # Output schemas exist only in some revisions; the revision is settled for the session.
        self._has_output_schemas = revision_of(initialize_result.protocol_version).structured_output
        #: The timeout of every call that passes none (``None``: wait as long as it takes).
        self.request_timeout = request_timeout
        self._handlers = handlers
        self._notifications = notifications
        self._output_schemas = OutputSchemas()
        #: The ``x-mcp-header`` arguments of the listed tools (the stateless era's HTTP headers).
        self._header_params = HeaderParamsOfTools()
        # A changed tool list may have changed any tool's output schema.
        notifications.on_tools_changed = self._output_schemas.forget

    # ---------------------------------------------------------------- the connection

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.initialize_result.protocol_version

    @property
    def instructions(self) -> str | None:
        """The server's hint for the model, if it gave one."""
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    @property
    def server_info(self) -> Implementation:
        """The server's ``serverInfo``: its name, version and, by revision, title, icons..."""
        return self.initialize_result.server_info

    @property
    def roots(self) -> list[Root] | None:
        """The roots this client answers ``roots/list`` with (``None``: it has none)."""
        return None if self._handlers.roots is None else list(self._handlers.roots)

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared; a feature it lacks is ``UNSET``."""
        return self.initialize_result.capabilities

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name`` as last listed (stateless era)."""
        return self._header_params.get(name)

    # ---------------------------------------------------------------- any request

    async def request(
        self, request: Request[ResultT], /, **options: Unpack[CallOptions]
    ) -> ResultT:
        """Send any request and return its typed result (see :meth:`Session.request`)."""
        if options:
            check_options("A Client call", options, CallOptions)
        timeout = options.get("timeout")
        result = await self.session.request(
            request,
            timeout=self.request_timeout if timeout is None else timeout,
            max_total_timeout=options.get("max_total_timeout"),
            on_progress=options.get("on_progress"),
        )
        if isinstance(result, InputRequiredResult):
            return await self._answer_inputs(request, result, options)
        return result

    async def _answer_inputs(
        self, request: Request[ResultT], result: InputRequiredResult, options: CallOptions
    ) -> ResultT:
        """The stateless era asks the client for input in an answer, not in a request."""
        timeout = options.get("timeout")

        async def send(retry: Request[Any]) -> Result:
            return await self.session.request(
                retry,
                timeout=self.request_timeout if timeout is None else timeout,
                max_total_timeout=options.get("max_total_timeout"),
                on_progress=options.get("on_progress"),
            )

        return await answer_input_required(self.session, request, result, send, self._handlers)

    async def ping(self, **options: Unpack[CallOptions]) -> None:
        """Check that the server answers.

        The stateless era (2026-07-28) has no ``ping``: there the check is a
        ``server/discover``, the one request every server of that era must answer, and its
        result is dropped (a decision: see ``docs/explanation/client-design.md``).
        """
        if self.session.connection.request_meta is not None:
            await self.request(DiscoverRequest(), **options)
            return
        await self.request(PingRequest(), **options)

    # ---------------------------------------------------------------- tools

    async def list_tools(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListToolsResult:
        """One page of ``tools/list`` (the tools' output schemas are remembered).

        In the stateless era the tools' ``x-mcp-header`` arguments are remembered too (they
        travel in HTTP headers), and a tool whose annotations break the rules is left out of
        the page, with a warning, as the spec has clients do.
        """
        page = await self.request(ListToolsRequest(cursor=_cursor(cursor)), **options)
        if self.session.connection.request_meta is not None:
            page = self._header_params.learn(page)
        self._output_schemas.learn(page.tools)
        return page

    async def iter_tools(self, **options: Unpack[CallOptions]) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` from page to page."""
        generation = self._output_schemas.generation
        async for tool in self._items(self.list_tools, lambda page: page.tools, options):
            yield tool
        # A list change during the listing means the listing may already be stale.
        self._output_schemas.complete = generation == self._output_schemas.generation

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        **options: Unpack[CallOptions],
    ) -> CallToolResult:
        """Call tool ``name``; a tool failure comes back as a result with ``is_error`` set.

        With ``validate_output`` a result is checked against the tool's ``outputSchema``
        (learnt from the last listing; for a tool not listed yet, the tools are listed once
        first) and :class:`~mcptrio.client.errors.OutputValidationError` is raised on mismatch.
        Revisions before 2025-06-18 have no output schemas: nothing is checked there.
        """
        validate_output = validate_output and self._has_output_schemas
        if validate_output and not self._output_schemas.knows(name):
            listing = options.copy()
            listing.pop("on_progress", None)  # the progress of this call, not of the listing
            async for _tool in self.iter_tools(**listing):
                pass
        # Straight to the session (what request() does, one coroutine less per call).
        if options:
            check_options("A Client call", options, CallOptions)
        timeout = options.get("timeout")
        request = CallToolRequest(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        try:
            result = await self.session.request(
                request,
                timeout=self.request_timeout if timeout is None else timeout,
                max_total_timeout=options.get("max_total_timeout"),
                on_progress=options.get("on_progress"),
            )
        except HeaderMismatch:
            # The tool's x-mcp-header arguments may have changed: list again, then once more.
            if self.session.connection.request_meta is None:
                raise
            async for _tool in self.iter_tools():
                pass
            result = await self.request(request, **options)
        if isinstance(result, InputRequiredResult):
            result = await self._answer_inputs(request, result, options)
        if validate_output:
            self._output_schemas.check(name, result)
        return result

    # ---------------------------------------------------------------- resources

    async def list_resources(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListResourcesResult:
        """One page of ``resources/list``."""
        return await self.request(ListResourcesRequest(cursor=_cursor(cursor)), **options)

    def iter_resources(self, **options: Unpack[CallOptions]) -> AsyncIterator[Resource]:
        """Every resource, page after page."""
        return self._items(self.list_resources, lambda page: page.resources, options)

    async def list_resource_templates(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``."""
        return await self.request(ListResourceTemplatesRequest(cursor=_cursor(cursor)), **options)

    def iter_resource_templates(
        self, **options: Unpack[CallOptions]
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page after page."""
        return self._items(
            self.list_resource_templates, lambda page: page.resource_templates, options
        )

    async def read_resource(
        self,
        uri: str,
        **options: Unpack[CallOptions],
    ) -> ReadResourceResult:
        """``resources/read``; an unknown URI raises ``ResourceNotFound`` (-32002)."""
        return await self.request(ReadResourceRequest(uri=uri), **options)

    async def subscribe_resource(
        self,
        uri: str,
        **options: Unpack[CallOptions],
    ) -> None:
        """The raw ``resources/subscribe`` (prefer :meth:`subscribe`, which counts users)."""
        await self.request(SubscribeRequest(uri=uri), **options)

    async def unsubscribe_resource(
        self,
        uri: str,
        **options: Unpack[CallOptions],
    ) -> None:
        """The raw ``resources/unsubscribe``."""
        await self.request(UnsubscribeRequest(uri=uri), **options)

    @asynccontextmanager
    async def subscribe(
        self, uri: str, **options: Unpack[CallOptions]
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
        await subscriptions.acquire(uri, updates, lambda: self.subscribe_resource(uri, **options))
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
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListPromptsResult:
        """One page of ``prompts/list``: each prompt's name, description and arguments (to fill
        in with :meth:`get_prompt`)."""
        return await self.request(ListPromptsRequest(cursor=_cursor(cursor)), **options)

    def iter_prompts(self, **options: Unpack[CallOptions]) -> AsyncIterator[Prompt]:
        """Every prompt, page after page."""
        return self._items(self.list_prompts, lambda page: page.prompts, options)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        **options: Unpack[CallOptions],
    ) -> GetPromptResult:
        """``prompts/get``: the prompt's messages, filled with ``arguments``."""
        return await self.request(
            GetPromptRequest(name=name, arguments=UNSET if arguments is None else dict(arguments)),
            **options,
        )

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        **options: Unpack[CallOptions],
    ) -> CompleteResult:
        """``completion/complete``: suggestions for ``argument`` of ``ref``, typed so far
        ``value``. ``context`` (arguments already chosen) exists from 2025-06-18 and is left
        out for older servers."""
        request = CompleteRequest(
            ref=ref,
            argument=CompleteArgument(name=argument, value=value),
            context=UNSET if context is None else CompleteContext(arguments=dict(context)),
        )
        return await self.request(request, **options)

    # ---------------------------------------------------------------- logging, notifications

    async def set_logging_level(
        self,
        level: LoggingLevel,
        **options: Unpack[CallOptions],
    ) -> None:
        """``logging/setLevel``: ask for log messages at ``level`` and above.

        In the stateless era there is no such request: every later request carries ``level``
        in its ``_meta`` instead, as the spec has it.
        """
        meta = self.session.connection.request_meta
        if meta is not None:
            meta.log_level = level
            return
        await self.request(SetLevelRequest(level=level), **options)

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

    async def _items(
        self,
        list_page: Callable[..., Awaitable[PageT]],
        items_of: Callable[[PageT], list[ItemT]],
        options: CallOptions,
    ) -> AsyncIterator[ItemT]:
        """Every item of every page, following ``nextCursor``; a cursor seen before raises."""
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            page = await list_page(cursor, **options)
            for item in items_of(page):
                yield item
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
