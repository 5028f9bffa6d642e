"""The decorator-level :class:`Server`.

A ``Server`` is a description (its info, instructions and tools) plus the request handler every
session of it shares. It owns no tasks: each ``serve_*`` method runs inside the caller's nursery,
and one server object can serve any number of sessions over any mix of transports at once.

::

    server = mcptrio.Server("demo")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    server.run_stdio()                               # a stdio server process
    await nursery.start(server.serve_session, t)     # one session over any transport
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import trio
from msgspec import UNSET

from ..protocol.base import Request, Result
from ..protocol.connection import Connection
from ..protocol.errors import InvalidParams, MethodNotFound
from ..protocol.revisions import SUPPORTED
from ..protocol.types import (
    CallToolRequest,
    CallToolResult,
    Implementation,
    ListToolsRequest,
    ListToolsResult,
    ServerCapabilities,
    TextContent,
    ToolsCapability,
)
from ..runtime.context import RequestContext
from ..runtime.session import Session
from ..transports.base import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.stdio import open_stdio_server_transport
from .tools import RegisteredTool, ToolArgumentsError, make_tool

__all__ = ["Server"]

log = logging.getLogger("mcptrio.server")

F = TypeVar("F", bound=Callable[..., Any])


class Server:
    """An MCP server: tools registered with decorators, served over any transport."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        max_in_flight: int = 256,
        supported_revisions: tuple[str, ...] = SUPPORTED,
    ) -> None:
        self.info = Implementation(
            name=name, version=version, title=UNSET if title is None else title
        )
        self.instructions = instructions
        self.max_in_flight = max_in_flight
        self.supported_revisions = supported_revisions
        self._tools: dict[str, RegisteredTool] = {}

    # ---------------------------------------------------------------- tools

    def tool(
        self, name: str | None = None, *, title: str | None = None, description: str | None = None
    ) -> Callable[[F], F]:
        """Register the decorated function as a tool (see :func:`make_tool`)."""

        def decorate(fn: F) -> F:
            self.add_tool(fn, name=name, title=title, description=description)
            return fn

        return decorate

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> RegisteredTool:
        """Register ``fn`` as a tool; a second tool of the same name is refused."""
        tool = make_tool(fn, name=name, title=title, description=description)
        if tool.name in self._tools:
            raise ValueError(f"A tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    @property
    def tools(self) -> dict[str, RegisteredTool]:
        return dict(self._tools)

    # ---------------------------------------------------------------- protocol

    def capabilities(self) -> ServerCapabilities:
        return ServerCapabilities(tools=ToolsCapability(list_changed=False))

    def connection(self) -> Connection:
        """A fresh sans-IO connection for one session of this server."""
        return Connection(
            "server",
            info=self.info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            supported=self.supported_revisions,
        )

    async def handle_request(self, ctx: RequestContext, request: Request[Any]) -> Result:
        """Answer one request (the session calls this in the request's own task)."""
        if isinstance(request, CallToolRequest):
            return await self._call_tool(ctx, request)
        if isinstance(request, ListToolsRequest):
            return ListToolsResult(tools=[t.definition for t in self._tools.values()])
        raise MethodNotFound(f"Method not found: {request.METHOD}")

    async def _call_tool(self, ctx: RequestContext, request: CallToolRequest) -> CallToolResult:
        tool = self._tools.get(request.name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {request.name}")
        arguments = request.arguments if isinstance(request.arguments, dict) else {}
        try:
            return await tool.call(ctx, arguments)
        except ToolArgumentsError as exc:
            return CallToolResult(content=[TextContent(text=str(exc))], is_error=True)

    # ---------------------------------------------------------------- serving

    def session(self, transport: Transport) -> Session:
        """A session of this server over ``transport``, ready to ``run``."""
        return Session(
            self.connection(),
            transport,
            handle_request=self.handle_request,
            max_in_flight=self.max_in_flight,
        )

    async def serve_session(
        self,
        transport: Transport,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session over ``transport`` until it ends; reports the ``Session``."""
        session = self.session(transport)
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            task_status.started(session)

    async def serve_stdio(
        self,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session on this process's stdin/stdout until stdin ends."""
        async with open_stdio_server_transport(max_frame_size=max_frame_size) as transport:
            await self.serve_session(transport, task_status=task_status)

    def run_stdio(self) -> None:
        """Run a stdio server in this process: ``trio.run(self.serve_stdio)``."""
        trio.run(self.serve_stdio)
