"""What a :class:`~.server.Server` answers to each request method it serves.

:class:`MethodHandlers` holds one handler per request type (``routes``); the server looks the
request's type up there and awaits the handler with the request's :class:`~.context.Context`.
The four list methods share :meth:`MethodHandlers._page`: one cursor scheme, one page size, and
definitions in the newest shape (the session's connection fits them to the negotiated revision).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from msgspec import UNSET

from ..protocol.base import EmptyResult, Request, Result
from ..protocol.errors import InvalidParams, ResourceNotFound
from ..protocol.types import (
    CallToolRequest,
    CallToolResult,
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
    UnsubscribeRequest,
)
from ..protocol.types.common import PaginatedRequest
from .context import Context
from .pagination import paginate

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
            ListToolsRequest: self.list_tools,
            ListResourcesRequest: self.list_resources,
            ListResourceTemplatesRequest: self.list_templates,
            ReadResourceRequest: self.read_resource,
            SubscribeRequest: self.subscribe,
            UnsubscribeRequest: self.unsubscribe,
            ListPromptsRequest: self.list_prompts,
            GetPromptRequest: self.get_prompt,
            CompleteRequest: self.complete,
            SetLevelRequest: self.set_level,
        }

    def _page(
        self,
        kind: str,
        items: Sequence[_Described[D]],
        request: PaginatedRequest[Any],
    ) -> tuple[list[D], Any]:
        """One page of ``items`` as definitions, and the next cursor (``UNSET`` on the last
        page)."""
        cursor = request.cursor if isinstance(request.cursor, str) else None
        page, next_cursor = paginate(kind, items, cursor, self.server.page_size)
        return [item.definition for item in page], (UNSET if next_cursor is None else next_cursor)

    # ------------------------------------------------------------------ tools

    async def call_tool(self, ctx: Context, request: CallToolRequest) -> CallToolResult:
        tool = self.server.tools_by_name.get(request.name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {request.name}")
        arguments = request.arguments if isinstance(request.arguments, dict) else None
        return await tool.call(ctx, arguments)

    async def list_tools(self, ctx: Context, request: ListToolsRequest) -> ListToolsResult:
        tools = list(self.server.tools_by_name.values())
        definitions, cursor = self._page("tools", tools, request)
        return ListToolsResult(tools=definitions, next_cursor=cursor)

    # ------------------------------------------------------------------ resources

    async def list_resources(
        self, ctx: Context, request: ListResourcesRequest
    ) -> ListResourcesResult:
        resources = self.server.resources.resources()
        definitions, cursor = self._page("resources", resources, request)
        return ListResourcesResult(resources=definitions, next_cursor=cursor)

    async def list_templates(
        self, ctx: Context, request: ListResourceTemplatesRequest
    ) -> ListResourceTemplatesResult:
        templates = self.server.resources.templates()
        definitions, cursor = self._page("templates", templates, request)
        return ListResourceTemplatesResult(resource_templates=definitions, next_cursor=cursor)

    async def read_resource(self, ctx: Context, request: ReadResourceRequest) -> ReadResourceResult:
        return await self.server.resources.read(ctx, request.uri)

    def _known_uri(self, uri: str) -> bool:
        resources = self.server.resources
        if any(r.uri == uri for r in resources.resources()):
            return True
        return any(t.match(uri) is not None for t in resources.templates())

    async def subscribe(self, ctx: Context, request: SubscribeRequest) -> EmptyResult:
        if not self._known_uri(request.uri):
            raise ResourceNotFound(f"Resource not found: {request.uri}", data={"uri": request.uri})
        self.server.session_state(ctx.session).subscribe(request.uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: Context, request: UnsubscribeRequest) -> EmptyResult:
        self.server.session_state(ctx.session).unsubscribe(request.uri)
        return EmptyResult()

    # ------------------------------------------------------------ prompts, completion, logging

    async def list_prompts(self, ctx: Context, request: ListPromptsRequest) -> ListPromptsResult:
        prompts = self.server.prompts.prompts()
        definitions, cursor = self._page("prompts", prompts, request)
        return ListPromptsResult(prompts=definitions, next_cursor=cursor)

    async def get_prompt(self, ctx: Context, request: GetPromptRequest) -> GetPromptResult:
        arguments = request.arguments if isinstance(request.arguments, dict) else None
        return await self.server.prompts.render(ctx, request.name, arguments)

    async def complete(self, ctx: Context, request: CompleteRequest) -> CompleteResult:
        return await self.server.completions.complete(ctx, request)

    async def set_level(self, ctx: Context, request: SetLevelRequest) -> EmptyResult:
        self.server.session_state(ctx.session).log_level = request.level
        return EmptyResult()
