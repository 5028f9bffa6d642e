"""What a :class:`~.server.Server` answers to each request method it serves.

:class:`MethodHandlers` holds one handler per request type (``routes``); the server looks the
request's type up there and awaits the handler with the request's :class:`~.context.Context`.
The four list methods are one handler made four times (:meth:`MethodHandlers._lister`): one
cursor scheme, one page size, and definitions in the newest shape (the session's connection fits
them to the negotiated revision).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..protocol.base import EmptyResult, Request, Result
from ..protocol.errors import ResourceNotFound
from ..protocol.types import (
    CallToolRequest,
    CompleteRequest,
    CompleteResult,
    GetPromptRequest,
    GetPromptResult,
    ListPromptsRequest,
    ListPromptsResult,
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ListToolsRequest,
    ListToolsResult,
    ReadResourceRequest,
    ReadResourceResult,
    SetLevelRequest,
    SubscribeRequest,
    SubscriptionsListenRequest,
    UnsubscribeRequest,
)
from ..protocol.types.common import PaginatedRequest
from .context import Context
from .forwarding import ForwardedResource, ForwardedTemplate, ForwardedTool
from .listen import listen
from .pagination import paginate
from .resources import read_resource, read_static
from .task_calls import ServerTasks
from .tools import RegisteredTool

if TYPE_CHECKING:
    from .server import Server

__all__ = ["MethodHandlers", "Route"]

Route = Callable[[Context, Any], Awaitable[Result]]
D = TypeVar("D", covariant=True)


class _Described(Protocol[D]):
    @property
    def definition(self) -> D: ...


class MethodHandlers:
    """The request handlers of one server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.routes: dict[type[Request[Any]], Route] = {
            CallToolRequest: self.call_tool,
            ListToolsRequest: self._lister(ListToolsResult, "tools", server.tools),
            ListResourcesRequest: self._lister(ListResourcesResult, "resources", server.resources),
            ListResourceTemplatesRequest: self._lister(
                ListResourceTemplatesResult, "resource_templates", server.templates
            ),
            ReadResourceRequest: self.read_resource,
            SubscribeRequest: self.subscribe,
            UnsubscribeRequest: self.unsubscribe,
            ListPromptsRequest: self._lister(ListPromptsResult, "prompts", server.prompts),
            GetPromptRequest: self.get_prompt,
            CompleteRequest: self.complete,
            SetLevelRequest: self.set_level,
            SubscriptionsListenRequest: self.listen,
        }
        #: For the methods whose requests may be answered at once, where they were decoded:
        #: whether this one is (see :mod:`.eager`).
        self.at_once: dict[type[Request[Any]], Callable[[Any], bool]] = {
            CallToolRequest: self._calls_at_once,
            ReadResourceRequest: self._reads_at_once,
        }
        #: Task-augmented tools/call and tasks/* (2025-11-25, :mod:`.task_calls`).
        self.tasks = ServerTasks(server)
        self.routes.update(self.tasks.routes())
        #: tasks/get, tasks/update and tasks/cancel of the 2026-07-28 tasks extension.
        self.routes.update(server.task_extension.routes())

    def _lister(
        self,
        result_type: Callable[..., Result],
        field: str,
        registry: Mapping[str, _Described[Any]],
    ) -> Route:
        """The handler of a ``*/list`` method: one page of ``registry``'s definitions in the
        result's ``field``, with the next cursor (``None`` on the last page)."""

        async def list_page(ctx: Context, request: PaginatedRequest[Any]) -> Result:
            cursor = request.cursor if isinstance(request.cursor, str) else None
            items = list(registry.values())
            page, next_cursor = paginate(field, items, cursor, self.server.page_size)
            ttl = self.server.cache_ttl_ms
            return result_type(
                **{field: [item.definition for item in page]},
                next_cursor=next_cursor,
                ttl_ms=ttl,
                cache_scope=None if ttl is None else self.server.cache_scope,
            )

        return list_page

    def call_tool(self, ctx: Context, request: CallToolRequest) -> Awaitable[Result]:
        # Not a coroutine: a call that is no task returns the tool's own (one coroutine less a
        # call; with the checks below, 0.9 us of an in-memory call's 10, measured 2026-11-29).
        tool = self.server.tools.lookup(request.name)
        if tool is None:
            tool = self.server.tools.require(request.name)  # raises
        if tool.scopes:
            ctx.require_scopes(tool.scopes)
        arguments = request.arguments if isinstance(request.arguments, dict) else None
        # A tool that is never a task, called without one, is called in either era.
        if request.task is None and getattr(tool, "task_support", "forbidden") == "forbidden":
            return tool.call(ctx, arguments)
        return self._call_tool_maybe_task(ctx, tool, request, arguments)

    async def _call_tool_maybe_task(
        self,
        ctx: Context,
        tool: RegisteredTool | ForwardedTool,
        request: CallToolRequest,
        arguments: dict[str, Any] | None,
    ) -> Result:
        if ctx.request_meta is not None:
            # The stateless era: tasks come with the tasks extension (.task_extension).
            if getattr(tool, "task_support", "forbidden") != "forbidden":
                as_task = await self.server.task_extension.call_tool(ctx, tool, request, arguments)
                if as_task is not None:
                    return as_task
        elif request.task is not None or getattr(tool, "task_support", None) == "required":
            as_task = await self.tasks.call_tool(ctx, tool, request, arguments)
            if as_task is not None:
                return as_task
        return await tool.call(ctx, arguments)

    def answers_at_once(self, request: Request[Any]) -> bool:
        """Whether ``request`` is answered where it was decoded (see :mod:`.eager`): never
        through middleware, which may wait. Asked of the server's request chain, not of its
        ``middleware`` (a tuple made per request)."""
        check = self.at_once.get(type(request))
        return check is not None and self.server._request_chain is None and check(request)

    def _calls_at_once(self, request: CallToolRequest) -> bool:
        # A tool that is never a task, called without one, takes call_tool's straight path.
        tool = self.server.tools.lookup(request.name)
        return request.task is None and getattr(tool, "answers_at_once", False)

    def _reads_at_once(self, request: ReadResourceRequest) -> bool:
        # A static resource (forwarded ones have no answers_at_once), not a template.
        return getattr(self.server.resources.lookup(request.uri), "answers_at_once", False)

    def read_resource(
        self, ctx: Context, request: ReadResourceRequest
    ) -> Awaitable[ReadResourceResult]:
        # Not a coroutine, and a static resource looked up once (see call_tool).
        uri = request.uri
        resource = self.server.resources.lookup(uri)
        if resource is None:
            ctx.require_scopes(self.server.required_scopes("resources/read", uri))
            return read_resource(self.server.resources, self.server.templates, ctx, uri)
        if resource.scopes:
            ctx.require_scopes(resource.scopes)
        return read_static(resource, ctx)

    def _served(self, uri: str) -> object | None:
        """The resource, or else the first template, that serves ``uri``."""
        resource = self.server.resources.get(uri)
        if resource is not None:
            return resource
        return next((t for t in self.server.templates.snapshot() if t.match(uri) is not None), None)

    async def subscribe(self, ctx: Context, request: SubscribeRequest) -> EmptyResult:
        served = self._served(request.uri)
        if served is None:
            raise ResourceNotFound(f"Resource not found: {request.uri}", data={"uri": request.uri})
        if isinstance(served, ForwardedResource | ForwardedTemplate) and served.subscribe:
            # A forwarded resource is subscribed to where it comes from first.
            await served.subscribe(request.uri)
        self.server.session_state(ctx.session).subscribe(request.uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: Context, request: UnsubscribeRequest) -> EmptyResult:
        self.server.session_state(ctx.session).unsubscribe(request.uri)
        return EmptyResult()

    async def get_prompt(self, ctx: Context, request: GetPromptRequest) -> GetPromptResult:
        prompt = self.server.prompts.require(request.name)
        ctx.require_scopes(prompt.scopes)
        return await prompt.render(ctx, _given(request.arguments))

    async def complete(self, ctx: Context, request: CompleteRequest) -> CompleteResult:
        return await self.server.completions.complete(ctx, request)

    async def listen(self, ctx: Context, request: SubscriptionsListenRequest) -> Result:
        result: Result = await listen(self.server, ctx, request)
        return result

    async def set_level(self, ctx: Context, request: SetLevelRequest) -> EmptyResult:
        self.server.session_state(ctx.session).log_level = request.level
        return EmptyResult()


def _given(arguments: Any) -> dict[str, Any] | None:
    """A request's ``arguments`` when it sent some."""
    return arguments if isinstance(arguments, dict) else None
