"""The official SDK's ``mcp.server.mcpserver.exceptions``: what a handler raises for a failure
it saw coming, and what the server raises around one it did not.

The mirror's errors, with the SDK's names (some, such as ``ToolError``, are also names of
mcptrio's own errors, which live in mcptrio's tree in :mod:`mcptrio.protocol.errors`)::

    Exception
    ├── MCPServerError
    │   ├── ResourceError
    │   │   ├── ResourceNotFoundError
    │   │   └── UnexpectedResourceError
    │   └── ToolError
    │       └── UnexpectedToolError
    └── InvalidSignature
    TypeError
    └── Unmirrored            (unmirrored.py) a part of the SDK's API the mirror leaves out
"""

from __future__ import annotations

__all__ = [
    "InvalidSignature",
    "MCPServerError",
    "ResourceError",
    "ResourceNotFoundError",
    "ToolError",
    "UnexpectedResourceError",
    "UnexpectedToolError",
]


class MCPServerError(Exception):
    """The base of the errors of an ``MCPServer``."""


class ResourceError(MCPServerError):
    """A resource read failed as foreseen: the client gets -32603 with this message."""


class ResourceNotFoundError(ResourceError):
    """The resource asked for does not exist: the client gets -32602 with this message."""


class UnexpectedResourceError(ResourceError):
    """Raised around a resource function's crash; the message names the URI only."""


class ToolError(MCPServerError):
    """A tool failed as foreseen: the call returns ``isError`` with this message."""


class UnexpectedToolError(ToolError):
    """Raised around a tool's crash; the message names the tool only."""


class InvalidSignature(Exception):
    """A handler's signature cannot be described."""
