"""What a :class:`~.server.Server` answers to each request method it serves.

:class:`MethodHandlers` holds one handler per request type (``routes``); the server looks the
request's type up there and awaits the handler with the request's :class:`~.context.Context`.
The four list methods are one handler made four times (:meth:`MethodHandlers._lister`): one
cursor scheme, one page size, and definitions in the newest shape (the session's connection fits
them to the negotiated revision). What the handlers read of the server, they read when a
request comes (:class:`HandledServer`): its settings may change while it serves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..protocol.base import EmptyResult, Request, Result
from ..protocol.call_key import call_key_of
from ..protocol.errors import ResourceNotFound
from ..protocol.types import (
    CacheScope,
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
    ServerCapabilities,
    SetLevelRequest,
    SubscribeRequest,
    SubscriptionsListenRequest,
    UnsubscribeRequest,
)
from ..protocol.types.common import PaginatedRequest
from ..runtime.session import Session
from ..tasks import TaskSupervisor
from .apps import app_call_target
from .call_once import run_once, runs_every_time
from .completion import CompletionEngine
from .forwarding import ForwardedPrompt, ForwardedResource, ForwardedTemplate, ForwardedTool
from .handler_context import HandlerContext, Route
from .listen import listen
from .listen_quota import ListenQuota
from .pagination import paginate
from .prompts import RegisteredPrompt
from .registry import Registry
from .resources import RegisteredResource, RegisteredTemplate, read_resource, read_static
from .session_state import ServerSessionState
from .subscription_bus import SubscriptionBus
from .task_calls import ServerTasks
from .task_extension import ExtensionTasks
from .tools import RegisteredTool

if TYPE_CHECKING:
    from ..stores.bundle import Stores

__all__ = ["HandledServer", "MethodHandlers"]

D = TypeVar("D", covariant=True)


class HandledServer(Protocol):
    """What the method handlers read of their server (a :class:`~mcptrio.Server` has it)."""

    tools: Registry[RegisteredTool | ForwardedTool]
    resources: Registry[RegisteredResource | ForwardedResource]
    templates: Registry[RegisteredTemplate | ForwardedTemplate]
    prompts: Registry[RegisteredPrompt | ForwardedPrompt]
    completions: CompletionEngine
    page_size: int | None
    cache_ttl_ms: int | None
    cache_scope: CacheScope

    @property
    def subscriptions(self) -> SubscriptionBus: ...

    tasks: TaskSupervisor
    task_extension: ExtensionTasks
    listen_quota: ListenQuota
    #: What the server's workers share; its call records make marked calls run once.
    stores: Stores | None

    def required_scopes(self, method: str, key: str) -> frozenset[str]: ...

    def session_state(self, session: Session) -> ServerSessionState: ...

    def capabilities(self) -> ServerCapabilities: ...


class _Described(Protocol[D]):
    @property
    def definition(self) -> D: ...


class MethodHandlers:
    """The request handlers of one server."""

    def __init__(self, server: HandledServer) -> None:
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
        self.tasks = ServerTasks(server.tasks)
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

        async def list_page(ctx: HandlerContext, request: PaginatedRequest[Any]) -> Result:
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

    async def call_tool(self, ctx: HandlerContext, request: CallToolRequest) -> Result:
        tools = self.server.tools
        # A name served here is that tool; another may be an MCP Apps view's call (.apps).
        tool = tools.get(request.name)
        if tool is None:
            tool = app_call_target(tools, request.name) or tools.require(request.name)
        if tool.scopes:
            ctx.require_scopes(tool.scopes)
        arguments = request.arguments if isinstance(request.arguments, dict) else None
        key = call_key_of(request.meta)
        stores = self.server.stores
        records = None if stores is None or key is None else stores.call_records
        if records is not None and key is not None and not runs_every_time(tool.definition):
            # A marked call: run once, whichever worker its copies reach (.call_once).
            principal = ctx.principal
            run = partial(self._call_tool_maybe_task, ctx, tool, request, arguments)
            subject = None if principal is None else principal.subject
            return await run_once(records, key, subject, request.name, run)
        # A tool that is never a task, called without one, is called in either era.
        if request.task is None and getattr(tool, "task_support", "forbidden") == "forbidden":
            return await tool.call(ctx, arguments)
        return await self._call_tool_maybe_task(ctx, tool, request, arguments)

    async def _call_tool_maybe_task(
        self,
        ctx: HandlerContext,
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

    def _calls_at_once(self, request: CallToolRequest) -> bool:
        # A tool that is never a task, called without one, takes call_tool's straight path.
        # A marked call (run once, .call_once) waits on the store: never at once.
        tool = self.server.tools.get(request.name)
        if request.task is not None or not getattr(tool, "answers_at_once", False):
            return False
        stores = self.server.stores
        return stores is None or stores.call_records is None or call_key_of(request.meta) is None

    def _reads_at_once(self, request: ReadResourceRequest) -> bool:
        # A static resource (forwarded ones have no answers_at_once), not a template.
        return getattr(self.server.resources.get(request.uri), "answers_at_once", False)

    async def read_resource(
        self, ctx: HandlerContext, request: ReadResourceRequest
    ) -> ReadResourceResult:
        uri = request.uri
        resource = self.server.resources.get(uri)
        if resource is None:
            ctx.require_scopes(self.server.required_scopes("resources/read", uri))
            return await read_resource(self.server.resources, self.server.templates, ctx, uri)
        if resource.scopes:
            ctx.require_scopes(resource.scopes)
        return await read_static(resource, ctx)

    def _served(self, uri: str) -> object | None:
        """The resource, or else the first template, that serves ``uri``."""
        resource = self.server.resources.get(uri)
        if resource is not None:
            return resource
        return next((t for t in self.server.templates.snapshot() if t.match(uri) is not None), None)

    async def subscribe(self, ctx: HandlerContext, request: SubscribeRequest) -> EmptyResult:
        served = self._served(request.uri)
        if served is None:
            raise ResourceNotFound(f"Resource not found: {request.uri}", data={"uri": request.uri})
        if isinstance(served, ForwardedResource | ForwardedTemplate) and served.subscribe:
            # A forwarded resource is subscribed to where it comes from first.
            await served.subscribe(request.uri)
        self.server.session_state(ctx.session).subscribe(request.uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: HandlerContext, request: UnsubscribeRequest) -> EmptyResult:
        self.server.session_state(ctx.session).unsubscribe(request.uri)
        return EmptyResult()

    async def get_prompt(self, ctx: HandlerContext, request: GetPromptRequest) -> GetPromptResult:
        prompt = self.server.prompts.require(request.name)
        ctx.require_scopes(prompt.scopes)
        return await prompt.render(ctx, _given(request.arguments))

    async def complete(self, ctx: HandlerContext, request: CompleteRequest) -> CompleteResult:
        return await self.server.completions.complete(ctx, request)

    async def listen(self, ctx: HandlerContext, request: SubscriptionsListenRequest) -> Result:
        server = self.server
        result: Result = await listen(
            ctx,
            request,
            server.capabilities(),
            server.subscriptions,
            server.task_extension,
            server.listen_quota,
        )
        return result

    async def set_level(self, ctx: HandlerContext, request: SetLevelRequest) -> EmptyResult:
        self.server.session_state(ctx.session).log_level = request.level
        return EmptyResult()


def _given(arguments: Any) -> dict[str, Any] | None:
    """A request's ``arguments`` when it sent some."""
    return arguments if isinstance(arguments, dict) else None
