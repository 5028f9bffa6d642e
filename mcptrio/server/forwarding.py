"""Forwarded items: tools, resources, templates and prompts whose definitions and answers come
from somewhere else (a mounted server, an upstream MCP server behind a gateway).

A decorated function is described from its signature (:mod:`.tools`, :mod:`.prompts`); a
forwarded item is described by a definition given whole (a ``Tool``, ``Resource``,
``ResourceTemplate`` or ``Prompt``, its input and output schemas, annotations and icons kept
exactly as given) and answered by a coroutine function that receives the request's context (a
:class:`~.context.Context`, typed as its base :class:`~.handler_context.HandlerContext`) and
what the client sent, unconverted::

    async def call(ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
        return await upstream.call_tool("search", arguments)

    server.add_forwarded(ForwardedTool(Tool(name="docs_search", input_schema=...), call))

Once added (:meth:`~.server.Server.add_forwarded`) they are listed, paginated, called, read,
completed and removed (``remove_tool``, ``remove_resource``, ``remove_prompt``) like any other
item. What the coroutine raises is answered as a handler's error is: an
:class:`~mcptrio.protocol.errors.McpError` keeps its code, and ``trio.Cancelled`` (the client
cancelled) propagates, so a forwarder that awaits another server's answer cancels that request
too. A tool forwarder's other exceptions become a tool error result naming the tool.

``complete`` (prompts and templates) answers ``completion/complete`` for any of the item's
arguments: ``complete(ctx, argument, value, arguments)`` returns the suggestions. ``subscribe``
(resources and templates) is awaited with the URI when a client subscribes to it, before the
subscription is recorded, so a gateway can subscribe upstream first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from ..protocol.errors import McpError
from ..protocol.types import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
)
from .completion import ArgumentCompleter
from .handler_context import HandlerContext
from .tool_results import error_result
from .tools import validate_tool_name
from .uri_template import UriTemplate

__all__ = [
    "ForwardedItem",
    "ForwardedPrompt",
    "ForwardedResource",
    "ForwardedTemplate",
    "ForwardedTool",
    "ToolForwarder",
]

log = logging.getLogger("mcptrio.server")

#: ``async (ctx, arguments) -> CallToolResult``: the arguments as the client sent them.
ToolForwarder: TypeAlias = Callable[
    [HandlerContext, "dict[str, Any] | None"], Awaitable[CallToolResult]
]
#: ``async (ctx, arguments) -> GetPromptResult``.
PromptForwarder: TypeAlias = Callable[
    [HandlerContext, "dict[str, str] | None"], Awaitable[GetPromptResult]
]
#: ``async (ctx, uri) -> contents``.
ReadForwarder: TypeAlias = Callable[[HandlerContext, str], Awaitable[list[ResourceContents]]]
#: ``async (ctx, argument, value, arguments) -> suggestions``.
CompleteForwarder: TypeAlias = Callable[
    [HandlerContext, str, str, dict[str, str]], Awaitable[list[str]]
]
#: ``async (uri) -> None``, awaited before a client's subscription is recorded.
SubscribeForwarder: TypeAlias = Callable[[str], Awaitable[None]]


class _Forwarded:
    """What every forwarded item has: a name, and no function of its own to describe."""

    __slots__ = ("name",)
    #: Forwarded items need no OAuth scopes of their own (the gateway's own authentication
    #: guards them all; their upstream checks its token itself).
    scopes: frozenset[str] = frozenset()
    #: Forwarded items set no cache hints of their own: the server's apply.
    cache_ttl_ms: int | None = None
    cache_scope: Any = None
    handler = None
    fn = None

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class ForwardedTool(_Forwarded):
    """A tool described by ``definition`` (its name checked against the 2025-11-25 naming
    guidance) and answered by ``call``.

    ``app_name`` is the name an MCP Apps view of the server it comes from calls it by (its name
    there, when that server has views): a ``tools/call`` of that name, not served here, is
    answered by this tool (see :func:`.apps.app_call_target`)."""

    __slots__ = ("_call", "app_name", "definition")

    def __init__(
        self, definition: Tool, call: ToolForwarder, *, app_name: str | None = None
    ) -> None:
        super().__init__(validate_tool_name(definition.name))
        if definition.input_schema.get("type") != "object":
            raise ValueError(f"Tool {definition.name!r}: an inputSchema must have type 'object'")
        self.definition = definition
        self._call = call
        self.app_name = app_name

    async def call(self, ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
        """Forward one ``tools/call``."""
        try:
            return await self._call(ctx, arguments)
        except McpError:
            raise
        except Exception as exc:
            log.exception("Forwarded tool %r failed", self.name)
            return error_result(f"Error executing tool {self.name}: {exc}")


def _completers(
    complete: CompleteForwarder | None, names: list[str], owner: str
) -> dict[str, ArgumentCompleter]:
    """One completer per argument, each asking ``complete`` (none without it)."""
    if complete is None:
        return {}
    return {name: ArgumentCompleter(_ask(complete, name), owner, name) for name in names}


def _ask(complete: CompleteForwarder, argument: str) -> Callable[..., Awaitable[list[str]]]:
    async def complete_argument(
        ctx: HandlerContext, value: str, arguments: dict[str, str]
    ) -> list[str]:
        return await complete(ctx, argument, value, arguments)

    return complete_argument


class ForwardedPrompt(_Forwarded):
    """A prompt described by ``definition`` and rendered by ``render``."""

    __slots__ = ("_render", "completions", "definition")

    def __init__(
        self,
        definition: Prompt,
        render: PromptForwarder,
        *,
        complete: CompleteForwarder | None = None,
    ) -> None:
        super().__init__(definition.name)
        self.definition = definition
        self._render = render
        names = [a.name for a in definition.arguments or ()]
        #: Per argument, the completer that asks ``complete``.
        self.completions = _completers(complete, names, f"Prompt {definition.name!r}")

    @property
    def arguments(self) -> list[Any]:
        return list(self.definition.arguments or ())

    async def render(
        self, ctx: HandlerContext, arguments: Mapping[str, str] | None
    ) -> GetPromptResult:
        """Forward one ``prompts/get``."""
        return await self._render(ctx, None if arguments is None else dict(arguments))


class ForwardedResource(_Forwarded):
    """A resource at the fixed URI of ``definition``, read by ``read``."""

    __slots__ = ("_read", "definition", "subscribe", "uri")

    def __init__(
        self,
        definition: Resource,
        read: ReadForwarder,
        *,
        subscribe: SubscribeForwarder | None = None,
    ) -> None:
        super().__init__(definition.name)
        self.definition = definition
        self.uri = definition.uri
        self._read = read
        self.subscribe = subscribe

    async def read(self, ctx: HandlerContext) -> list[ResourceContents]:
        """Forward one ``resources/read``."""
        return await self._read(ctx, self.uri)


class ForwardedTemplate(_Forwarded):
    """A resource template described by ``definition``; reads of its members go to ``read``.

    A URI template that does not parse as RFC 6570 is still listed, but matches only URIs
    equal to it.
    """

    __slots__ = ("_read", "_template", "completions", "definition", "subscribe", "variables")

    def __init__(
        self,
        definition: ResourceTemplate,
        read: ReadForwarder,
        *,
        complete: CompleteForwarder | None = None,
        subscribe: SubscribeForwarder | None = None,
    ) -> None:
        super().__init__(definition.name)
        self.definition = definition
        self._read = read
        self.subscribe = subscribe
        try:
            self._template: UriTemplate | None = UriTemplate(definition.uri_template)
        except ValueError:
            self._template = None
        self.variables: tuple[str, ...] = () if self._template is None else self._template.variables
        self.completions = _completers(
            complete, list(self.variables), f"Resource template {definition.uri_template!r}"
        )

    @property
    def uri_template(self) -> str:
        return self.definition.uri_template

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables in ``uri``, or ``None`` if it is not one of the template's members."""
        if self._template is None:
            return {} if uri == self.definition.uri_template else None
        return self._template.match(uri)

    async def read(
        self, ctx: HandlerContext, uri: str, variables: Mapping[str, Any]
    ) -> list[ResourceContents]:
        """Forward one ``resources/read`` of a member (``variables`` are not needed)."""
        return await self._read(ctx, uri)


ForwardedItem: TypeAlias = ForwardedTool | ForwardedPrompt | ForwardedResource | ForwardedTemplate
