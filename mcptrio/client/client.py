"""The :class:`Client`: a connected, initialized session and a typed call per server feature.

Every call takes the keywords of :class:`~mcptrio.client.options.CallOptions` (``timeout``,
``max_total_timeout``, ``on_progress``), as :meth:`~mcptrio.runtime.session.Session.request`
does: progress pushes the timeout back, never past ``max_total_timeout``; a timeout raises
:class:`~mcptrio.protocol.errors.RequestTimeout`; leaving the caller's cancel scope sends
``notifications/cancelled``. An error answer raises the matching
:class:`~mcptrio.protocol.errors.McpError` subclass (``InvalidParams``, ``ResourceNotFound``...).

Listing comes one page at a time (``list_*``) or as an async iterator over every page
(``iter_*``), which refuses a cursor that repeats rather than loop for ever.

In the stateless era (2026-07-28) list pages, reads and ``server/discover`` answers are cached
for the ``ttlMs`` the server gives (:mod:`~mcptrio.client.cache`; ``cache=`` per call), and the
server's notifications come on listen streams (:meth:`Client.listen`; ``subscribe()``,
``list_changes()`` and the callbacks use the client's own, :mod:`~mcptrio.client.listen_actor`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, Unpack, overload

import trio

from ..protocol.base import Request, RequestId, Result
from ..protocol.errors import HeaderMismatch, InvalidParams, RequestTimeout, ResourceNotFound
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
from ..protocol.types.discovery import DiscoverRequest, DiscoverResult
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
from .cache import CachePolicy, ResultCache, cache_key, cache_mode
from .client_streams import UNSUBSCRIBE_TIMEOUT, ClientStreams
from .errors import RepeatedCursor
from .header_params import HeaderParamsOfTools
from .input_required import answer_input_required
from .notifications import NotificationRouter
from .options import CallOptions, check_options
from .output_validation import OutputSchemas
from .server_requests import ReceiveHook, ServerRequestRouter
from .skill_calls import SkillCalls
from .tasks import TaskHandle, start_tool_task

__all__ = ["UNSUBSCRIBE_TIMEOUT", "Client", "SendHook"]

log = logging.getLogger("mcptrio.client")

ResultT = TypeVar("ResultT", bound=Result)
#: Wraps each request a client sends: ``hook(request, send)`` returns ``send``'s awaitable
#: (or one around it); ``send(request, on_id=None)`` sends ``request`` (perhaps changed, of the
#: same type) and waits for its result, calling ``on_id`` with the id it goes under. For
#: tracing (:mod:`mcptrio.otel`).
SendHook = Callable[
    [Request[Any], Callable[..., Awaitable[Any]]],
    Awaitable[Any],
]
PageT = TypeVar("PageT", bound=PaginatedResult)
ItemT = TypeVar("ItemT")


class Client(SkillCalls, ClientStreams):
    """A connected, initialized MCP client session (made by :func:`~mcptrio.open_client`).

    Its notification streams (``subscribe``, ``listen``, ``list_changes``, ``log_messages``)
    are documented in :class:`~mcptrio.client.client_streams.ClientStreams`.
    """

    def __init__(
        self,
        session: Session,
        initialize_result: InitializeResult,
        *,
        request_timeout: float | None = None,
        handlers: ServerRequestRouter,
        notifications: NotificationRouter,
        listen_timeout: float = 10.0,
        cache: CachePolicy | None = None,
    ) -> None:
        self.session = session
        self.initialize_result = initialize_result
        # Output schemas exist only in some revisions; the revision is settled for the session.
        self._has_output_schemas = revision_of(initialize_result.protocol_version).structured_output
        #: The timeout of every call that passes none (``None``: wait as long as it takes).
        self.request_timeout = request_timeout
        self._handlers = handlers
        self._output_schemas = OutputSchemas()
        #: The ``x-mcp-header`` arguments of the listed tools (the stateless era's HTTP headers).
        self._header_params = HeaderParamsOfTools()
        stateless = session.connection.request_meta is not None
        #: The results kept for their ``ttlMs`` (stateless era; handshake-era results have none,
        #: so nothing is kept there). See :mod:`~mcptrio.client.cache`.
        self.cache = ResultCache((cache or CachePolicy()).size if stateless else 0)
        #: Wraps every request this client sends from now on (:data:`SendHook`); ``None``, the
        #: default, costs one attribute test a request.
        self.send_hook: SendHook | None = None
        self._start_streams(session, notifications, listen_timeout)

    # ---------------------------------------------------------------- the connection

    @property
    def receive_hook(self) -> ReceiveHook | None:
        """Wraps the answering of every request the server sends from now on (sampling,
        elicitation, roots; in the stateless era those an input-required result carries);
        ``None``, the default, costs one attribute test a request."""
        return self._handlers.hook

    @receive_hook.setter
    def receive_hook(self, hook: ReceiveHook | None) -> None:
        self._handlers.hook = hook

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
        """What the server declared; a feature it lacks is ``None``."""
        return self.initialize_result.capabilities

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name`` as last listed (stateless era)."""
        return self._header_params.get(name)

    # ---------------------------------------------------------------- any request

    async def request(
        self, request: Request[ResultT], /, **options: Unpack[CallOptions]
    ) -> ResultT:
        """Send any request and return its typed result (see :meth:`Session.request`); a
        cacheable one may be answered from the cache (``cache=``, see
        :mod:`~mcptrio.client.cache`)."""
        return await self._cached(request, options)

    async def _cached(
        self,
        request: Request[ResultT],
        options: CallOptions,
        learn: Callable[[ResultT], ResultT] | None = None,
    ) -> ResultT:
        """:meth:`request`; ``learn`` sees each answer from the server (not those from the
        cache, which it saw when they came) and returns what is stored and returned."""
        if options:
            check_options("A Client call", options, CallOptions)
        mode = cache_mode(options)
        key = cache_key(request)

        async def ask() -> ResultT:
            result = await self._send(request, options)
            return result if learn is None else learn(result)

        if key is None:
            return await ask()
        return await self.cache.fetch(key, mode, ask)

    def _session_request(
        self, request: Request[ResultT], options: CallOptions
    ) -> Awaitable[ResultT]:
        """The session's request for ``request`` with ``options``, through the send hook when
        there is one (a plain function: no coroutine of its own)."""
        hook = self.send_hook
        if hook is None:
            return self._plain_request(request, options)
        return hook(request, functools.partial(self._exchange, options=options))

    def _plain_request(
        self,
        request: Request[ResultT],
        options: CallOptions,
        on_id: Callable[[RequestId], object] | None = None,
    ) -> Awaitable[ResultT]:
        timeout = options.get("timeout")
        return self.session.request(
            request,
            timeout=self.request_timeout if timeout is None else timeout,
            max_total_timeout=options.get("max_total_timeout"),
            on_progress=options.get("on_progress"),
            on_id=on_id,
        )

    async def _exchange(
        self,
        request: Request[ResultT],
        on_id: Callable[[RequestId], object] | None = None,
        *,
        options: CallOptions,
    ) -> ResultT:
        """What a send hook wraps: the request and the input rounds it takes (stateless era),
        so that the hook sees one call, as in the handshake era, and every retry carries what
        the hook put in the request (its trace context)."""
        result = await self._plain_request(request, options, on_id)
        if isinstance(result, InputRequiredResult):
            return await self._answer_inputs(request, result, options)
        return result

    async def _send(self, request: Request[ResultT], options: CallOptions) -> ResultT:
        result = await self._session_request(request, options)
        if isinstance(result, InputRequiredResult):
            return await self._answer_inputs(request, result, options)
        return result

    async def _answer_inputs(
        self, request: Request[ResultT], result: InputRequiredResult, options: CallOptions
    ) -> ResultT:
        """The stateless era asks the client for input in an answer, not in a request."""
        timeout = options.get("timeout")

        async def send(retry: Request[Any]) -> Result:
            return await self._plain_request(retry, options)

        # The call's timeout bounds the whole exchange, the client's own handlers included (a
        # user who takes too long), as it does in the handshake era, where the server's request
        # to the client runs while the call waits.
        limits = [
            x
            for x in (
                self.request_timeout if timeout is None else timeout,
                options.get("max_total_timeout"),
            )
            if x is not None
        ]
        if not limits:
            return await answer_input_required(self.session, request, result, send, self._handlers)
        with trio.move_on_after(min(limits)):
            return await answer_input_required(self.session, request, result, send, self._handlers)
        raise RequestTimeout(
            f"{request.METHOD} did not complete within {min(limits)} s"
            " (answering the server's requests for input included)"
        )

    async def ping(self, **options: Unpack[CallOptions]) -> None:
        """Check that the server answers.

        The stateless era (2026-07-28) has no ``ping``: there the check is a
        ``server/discover``, the one request every server of that era must answer, and its
        result is dropped (a decision: see ``docs/explanation/client-design.md``).
        """
        if options:
            check_options("A Client call", options, CallOptions)
        if self.session.connection.request_meta is not None:
            # Never from the cache: the point is to hear from the server now.
            await self._send(DiscoverRequest(), options)
            return
        await self._send(PingRequest(), options)

    async def discover(self, **options: Unpack[CallOptions]) -> DiscoverResult:
        """``server/discover`` (stateless era): the revisions, capabilities and instructions the
        server offers now, cached for its ``ttlMs`` like a list page. The handshake era has no
        such request (:class:`~mcptrio.protocol.errors.CapabilityNotNegotiated`)."""
        return await self.request(DiscoverRequest(), **options)

    # ---------------------------------------------------------------- tools

    async def list_tools(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListToolsResult:
        """One page of ``tools/list`` (the tools' output schemas are remembered).

        In the stateless era the tools' ``x-mcp-header`` arguments are remembered too (they
        travel in HTTP headers), and a tool whose annotations break the rules is left out of
        the page, with a warning, as the spec has clients do.
        """
        return await self._cached(ListToolsRequest(cursor=_cursor(cursor)), options, self._learn)

    def _learn(self, page: ListToolsResult) -> ListToolsResult:
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

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        as_task: Literal[False] = False,
        **options: Unpack[CallOptions],
    ) -> CallToolResult: ...
    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        as_task: Literal[True],
        task_ttl: float | None = None,
        **options: Unpack[CallOptions],
    ) -> TaskHandle[CallToolResult]: ...
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        as_task: bool = False,
        task_ttl: float | None = None,
        **options: Unpack[CallOptions],
    ) -> CallToolResult | TaskHandle[CallToolResult]:
        """Call tool ``name``; a tool failure comes back as a result with ``is_error`` set.

        With ``validate_output`` a result is checked against the tool's ``outputSchema``
        (learnt from the last listing; for a tool not listed yet, the tools are listed once
        first) and :class:`~mcptrio.client.errors.OutputValidationError` is raised on mismatch.
        Revisions before 2025-06-18 have no output schemas: nothing is checked there.

        With ``as_task`` the server runs the call as a task and this returns at once with a
        :class:`~mcptrio.client.tasks.TaskHandle` to poll, await and cancel (``task_ttl``:
        how long, in seconds, the server should keep it; it may grant less). See
        :func:`~mcptrio.client.tasks.start_tool_task`.
        """
        if as_task:
            return await start_tool_task(self, name, arguments, task_ttl, options)
        validate_output = validate_output and self._has_output_schemas
        if validate_output and not self._output_schemas.knows(name):
            listing = options.copy()
            listing.pop("on_progress", None)  # the progress of this call, not of the listing
            # A tool missing from what was listed: the listing may be stale, whatever its ttlMs.
            listing.setdefault("cache", "refresh")
            async for _tool in self.iter_tools(**listing):
                pass
        # Straight to the session (what request() does, one coroutine less per call).
        if options:
            check_options("A Client call", options, CallOptions)
        request = CallToolRequest(
            name=name, arguments=None if arguments is None else dict(arguments)
        )
        try:
            if self.send_hook is None and not options:
                result = await self.session.request(request, timeout=self.request_timeout)
            elif self.send_hook is None:
                timeout = options.get("timeout")
                result = await self.session.request(
                    request,
                    timeout=self.request_timeout if timeout is None else timeout,
                    max_total_timeout=options.get("max_total_timeout"),
                    on_progress=options.get("on_progress"),
                )
            else:
                result = await self._session_request(request, options)
        except HeaderMismatch:
            # The tool's x-mcp-header arguments may have changed: list again, then once more.
            if self.session.connection.request_meta is None:
                raise
            async for _tool in self.iter_tools(cache="refresh"):
                pass
            result = await self.request(request, **options)
        if isinstance(result, InputRequiredResult):
            result = await self._answer_inputs(request, result, options)
        if not isinstance(result, CallToolResult):
            # A task (2026-07-28 extension) this call did not declare it could take.
            raise InvalidParams(
                f"The server answered tools/call {name!r} with a {type(result).__name__}, which"
                " this call did not ask for (as_task=True declares the tasks extension)"
            )
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
        """``resources/read``; an unknown URI raises ``ResourceNotFound`` in both eras.

        The stateless era (2026-07-28) answers a missing resource -32602 (SEP-2164) where
        earlier revisions had -32002 of its own. Since -32602 is the error that revision names
        for it, a -32602 answer to ``resources/read`` there is raised as ``ResourceNotFound``
        with the code as it came (-32602), so that ``except ResourceNotFound`` works in either
        era (a decision: see ``docs/explanation/client-design.md``).
        """
        try:
            return await self.request(ReadResourceRequest(uri=uri), **options)
        except InvalidParams as exc:
            if type(exc) is not InvalidParams or self.session.connection.request_meta is None:
                raise
            raise ResourceNotFound(exc.message, exc.data, code=exc.code) from exc

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
            GetPromptRequest(name=name, arguments=None if arguments is None else dict(arguments)),
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
            context=None if context is None else CompleteContext(arguments=dict(context)),
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
            if options:
                check_options("A Client call", options, CallOptions)
            meta.log_level = level
            await trio.lowlevel.checkpoint()
            return
        await self.request(SetLevelRequest(level=level), **options)

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
    return cursor
