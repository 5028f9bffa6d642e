"""How the official SDK answers a request for a tool, prompt or resource it does not have.

mcptrio's engine answers those itself, before any handler (an unknown tool or prompt -32602, an
unknown resource -32002 "Resource not found"); the SDK answers an unknown tool with a tool error
result, an unknown prompt with an error naming it and an unknown resource with -32602 naming
the URI. This middleware, installed on every ``MCPServer``'s engine, gives the SDK's answers.
"""

from __future__ import annotations

from typing import Any

from ...protocol.base import Result
from ...protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError, ResourceNotFound
from ...protocol.types import (
    CallToolRequest,
    CallToolResult,
    GetPromptRequest,
    ReadResourceRequest,
    TextContent,
)
from ...server import Server
from ...server.middleware import Call, CallNext

__all__ = ["UnknownNames"]


class UnknownNames:
    """The middleware (see the module docstring)."""

    __slots__ = ("_engine",)

    def __init__(self, engine: Server) -> None:
        self._engine = engine

    async def __call__(self, call: Call, call_next: CallNext) -> Result | None:
        params: Any = call.params
        if isinstance(params, CallToolRequest) and params.name not in self._engine.tools:
            text = TextContent(text=f"Unknown tool: {params.name}")
            return CallToolResult(content=[text], is_error=True)
        if isinstance(params, GetPromptRequest) and params.name not in self._engine.prompts:
            raise McpError(f"Unknown prompt: {params.name}", code=INTERNAL_ERROR)
        if isinstance(params, ReadResourceRequest):
            try:
                return await call_next(call)
            except ResourceNotFound:
                uri = params.uri
                raise McpError(
                    f"Unknown resource: {uri}", {"uri": uri}, code=INVALID_PARAMS
                ) from None
        return await call_next(call)
