"""The mcptrio benchmark server without the decorator layer: a bare ``Session``.

The same ``add`` tool as :mod:`.mcptrio_server`, answered by a hand-written request handler on
a :class:`~mcptrio.runtime.session.Session`: a fixed ``Tool`` definition for ``tools/list``,
and for ``tools/call`` the two numbers read straight from the arguments and the sum returned as
one text block. No schema validation, no ``Context``, no per-session server state: the least
work a correct server can do, so that the decorator server's rate over this one's is what the
decorator layer costs.

Run it as a stdio server with ``python -m benchmarks.servers.mcptrio_lowlevel_server`` (from
the repository root).
"""

from __future__ import annotations

from typing import Any

import trio

from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import InvalidParams, MethodNotFound
from mcptrio.protocol.types import (
    CallToolRequest,
    CallToolResult,
    Implementation,
    ListToolsRequest,
    ListToolsResult,
    ServerCapabilities,
    TextContent,
    Tool,
    ToolsCapability,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.runtime.session import Session
from mcptrio.runtime.transport import Transport
from mcptrio.transports.stdio import open_stdio_server_transport

INFO = Implementation(name="bench-lowlevel", version="0.1.0")

#: The tool as the decorator server describes ``add(a: int, b: int) -> int``.
ADD_TOOL = Tool(
    name="add",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
_TOOLS = ListToolsResult(tools=[ADD_TOOL])


async def handle_request(ctx: RequestContext, request: Request[Any]) -> Result:
    """Answer ``tools/list`` and ``tools/call add``; anything else is -32601."""
    if type(request) is CallToolRequest:
        if request.name != ADD_TOOL.name:
            raise InvalidParams(f"Unknown tool: {request.name}")
        arguments = request.arguments
        a = b = None
        if isinstance(arguments, dict):
            a, b = arguments.get("a"), arguments.get("b")
        if type(a) is not int or type(b) is not int:
            # A tool error the model can act on, as the decorator server gives for bad input.
            return CallToolResult(
                content=[TextContent(text="add needs two integers, a and b")], is_error=True
            )
        return CallToolResult(content=[TextContent(text=str(a + b))])
    if type(request) is ListToolsRequest:
        return _TOOLS
    raise MethodNotFound(f"Method not found: {request.METHOD}")


def build_session(transport: Transport) -> Session:
    """A server session over ``transport``, ready to ``run``."""
    connection = Connection(
        "server",
        info=INFO,
        capabilities=ServerCapabilities(tools=ToolsCapability()),
    )
    return Session(connection, transport, handle_request=handle_request)


async def serve_stdio() -> None:
    """Serve one session on this process's stdin/stdout until stdin ends."""
    async with open_stdio_server_transport() as transport:
        await build_session(transport).run()


if __name__ == "__main__":
    trio.run(serve_stdio)
