"""Errors the client raises on its own side.

::

    ClientError                     a client-side check failed (not a protocol error)
    └── OutputValidationError       a tool's structuredContent does not fit its outputSchema
    RepeatedCursor (LocalError)     a server's pagination went round in a circle

:class:`ClientError` is deliberately not an :class:`~mcptrio.protocol.errors.McpError`: the
server answered successfully, and what failed is the client's check of that answer.
:class:`RepeatedCursor` is a :class:`~mcptrio.protocol.errors.LocalError`, so code that catches
``McpError`` around a listing loop sees it too.
"""

from __future__ import annotations

from ..protocol.errors import LocalError
from ..protocol.types import CallToolResult

__all__ = ["ClientError", "OutputValidationError", "RepeatedCursor"]


class ClientError(Exception):
    """A check the client makes of a server's answer failed."""


class OutputValidationError(ClientError):
    """``structuredContent`` of a tool's result does not match the tool's ``outputSchema``.

    ``tool`` is the tool's name and ``result`` the :class:`CallToolResult` as received, so a
    caller that wants the unchecked answer anyway still has it.
    """

    def __init__(self, tool: str, result: CallToolResult, message: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.result = result
        self.message = message


class RepeatedCursor(LocalError):
    """A ``*/list`` answer's ``nextCursor`` was one already followed: the listing would loop."""

    DEFAULT_MESSAGE = "The server's pagination cursor repeated"
