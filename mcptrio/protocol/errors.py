"""The error hierarchy of mcptrio.

Every error mcptrio raises derives from :class:`McpError`, which carries a JSON-RPC ``code``, a
``message`` and optional ``data``. A handler may raise any of them (or ``McpError`` itself with a
code of its choosing) to control the error response its request gets.

::

    McpError                          code, message, data
    ├── ParseError                    -32700  the frame was not valid JSON
    ├── InvalidRequest                -32600  valid JSON, not a valid JSON-RPC / MCP message
    ├── MethodNotFound                -32601  unknown method, or a feature that was not negotiated
    ├── InvalidParams                 -32602  params that do not fit the method
    │   └── UnsupportedProtocolVersion        the peer offered no revision we speak
    ├── InternalError                 -32603  a handler failed
    ├── ResourceNotFound              -32002  (2024-11-05 … 2025-11-25)
    ├── UrlElicitationRequired        -32042  (2025-11-25)
    └── LocalError                            raised here, never sent as-is
        ├── ConnectionClosed                  the transport ended; pending requests fail with it
        ├── RequestTimeout                    an outgoing request ran out of time
        └── CapabilityNotNegotiated           sending this would use an un-negotiated feature

Errors that arrive from the peer are rebuilt by :meth:`McpError.from_wire` as the subclass that
owns their code, so ``except MethodNotFound`` works for local and remote errors alike. A
:class:`LocalError` that escapes a handler is answered as an internal error (-32603): its code
describes a local condition, not something the peer did.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "URL_ELICITATION_REQUIRED",
    "CapabilityNotNegotiated",
    "ConnectionClosed",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalError",
    "McpError",
    "MethodNotFound",
    "ParseError",
    "RequestTimeout",
    "ResourceNotFound",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042

_BY_CODE: dict[int, type[McpError]] = {}


class McpError(Exception):
    """An MCP / JSON-RPC error with a code, a message and optional data."""

    CODE: ClassVar[int] = INTERNAL_ERROR
    DEFAULT_MESSAGE: ClassVar[str] = "Error"

    def __init__(self, message: str | None = None, data: Any = None, *, code: int | None = None):
        self.code: int = self.CODE if code is None else code
        self.message: str = self.DEFAULT_MESSAGE if message is None else message
        self.data: Any = data
        super().__init__(self.message)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The first class declared for a code owns it; subclasses that refine it do not.
        if "CODE" in cls.__dict__ and not cls.__dict__.get("LOCAL", False):
            _BY_CODE.setdefault(cls.CODE, cls)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    @staticmethod
    def from_wire(code: int, message: str, data: Any = None) -> McpError:
        """Rebuild an error received from the peer as the subclass that owns its code."""
        cls = _BY_CODE.get(code, McpError)
        return cls(message, data, code=code)


class ParseError(McpError):
    CODE = PARSE_ERROR
    DEFAULT_MESSAGE = "Parse error"


class InvalidRequest(McpError):
    CODE = INVALID_REQUEST
    DEFAULT_MESSAGE = "Invalid request"


class MethodNotFound(McpError):
    CODE = METHOD_NOT_FOUND
    DEFAULT_MESSAGE = "Method not found"


class InvalidParams(McpError):
    CODE = INVALID_PARAMS
    DEFAULT_MESSAGE = "Invalid params"


class UnsupportedProtocolVersion(InvalidParams):
    """No protocol revision in common; ``data`` is ``{"supported": [...], "requested": ...}``."""

    DEFAULT_MESSAGE = "Unsupported protocol version"


class InternalError(McpError):
    CODE = INTERNAL_ERROR
    DEFAULT_MESSAGE = "Internal error"


class ResourceNotFound(McpError):
    CODE = RESOURCE_NOT_FOUND
    DEFAULT_MESSAGE = "Resource not found"


class UrlElicitationRequired(McpError):
    CODE = URL_ELICITATION_REQUIRED
    DEFAULT_MESSAGE = "URL elicitation required"


class LocalError(McpError):
    """An error raised on this side; answered as -32603 if it escapes a handler."""

    CODE = INTERNAL_ERROR
    LOCAL: ClassVar[bool] = True


class ConnectionClosed(LocalError):
    """The connection ended before the answer came (pending requests fail with this)."""

    DEFAULT_MESSAGE = "Connection closed"


class RequestTimeout(LocalError):
    """An outgoing request hit its timeout; the peer was sent ``notifications/cancelled``."""

    DEFAULT_MESSAGE = "Request timed out"


class CapabilityNotNegotiated(LocalError):
    """Sending this message would use a capability the session did not negotiate."""

    DEFAULT_MESSAGE = "Capability not negotiated"
