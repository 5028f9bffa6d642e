"""Errors the client raises on its own side: its check of an answer or of a request failed.

:class:`ClientError` is a :class:`~mcptrio.protocol.errors.LocalError`: the server did answer (or
was never asked), and what failed is the client's own check. Code that catches ``McpError``
around a call sees these too; catch :class:`~mcptrio.protocol.errors.ProtocolError` for the
server's error answers alone. The whole tree is drawn in :mod:`mcptrio.protocol.errors`.
"""

from __future__ import annotations

from ..protocol.errors import LocalError
from ..protocol.types import CallToolResult

__all__ = ["ClientError", "OutputValidationError", "RepeatedCursor", "SubscriptionRefused"]


class ClientError(LocalError):
    """A check the client makes, of a server's answer or of what it was asked to do, failed."""


class OutputValidationError(ClientError):
    """``structuredContent`` of a tool's result does not match the tool's ``outputSchema``.

    ``tool`` is the tool's name and ``result`` the :class:`CallToolResult` as received, so a
    caller that wants the unchecked answer anyway still has it.
    """

    def __init__(self, tool: str, result: CallToolResult, message: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.result = result


class RepeatedCursor(ClientError, default_message="The server's pagination cursor repeated"):
    """A ``*/list`` answer's ``nextCursor`` was one already followed: the listing would loop."""


class SubscriptionRefused(ClientError):
    """The server acknowledged a listen stream without a resource subscription it was asked for
    (2026-07-28): ``client.subscribe(uri)`` would never hear of ``uri``."""
