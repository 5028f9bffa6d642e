"""The error hierarchy of mcptrio: one tree, rooted at :class:`McpError`.

Every exception mcptrio lets reach your code derives from :class:`McpError`, which carries a
JSON-RPC ``code``, a ``message`` and optional ``data``. Its sub-roots say where an error comes
from: :class:`ProtocolError` is an error answer (one the peer sent, or one a handler raises to
answer with), :class:`LocalError` is a condition on this side that never goes on the wire as
itself, and ``ToolError`` is a tool's failure, reported to the model as a result. Classes are
defined next to what raises them (the module is in brackets); the sub-roots live here::

    McpError                              code, message, data
    ├── ProtocolError                     an error answer; the peer's unknown codes come as this
    │   ├── ParseError            -32700  the frame was not valid JSON
    │   ├── InvalidRequest        -32600  valid JSON, not a valid JSON-RPC / MCP message
    │   ├── MethodNotFound        -32601  unknown method, or a feature that was not negotiated
    │   ├── InvalidParams         -32602  params that do not fit the method
    │   ├── InternalError         -32603  a handler failed
    │   │   ├── TasksNotServing           [tasks] a task asked for while no task nursery is open
    │   │   └── CallOutcomeUnknown        [server] a re-issued call whose first run left no outcome
    │   ├── ResourceNotFound      -32002  (2024-11-05 … 2025-11-25; -32602 from 2026-07-28)
    │   ├── UrlElicitationRequired  -32042  (2025-11-25)
    │   ├── HeaderMismatch        -32020  HTTP headers disagree with the body (2026-07-28)
    │   ├── MissingRequiredClientCapability  -32021  the request needs a client capability
    │   └── UnsupportedProtocolVersion  -32022  the peer offered no revision we speak
    ├── ToolError                         [server] raise in a tool: answered isError, for the model
    └── LocalError                        raised on this side, never sent as itself
        ├── ConnectionClosed              the connection ended; pending requests fail with it
        ├── RequestTimeout                an outgoing request ran out of time
        ├── CapabilityNotNegotiated       sending this would use an un-negotiated feature
        ├── StoreUnavailable              [stores] Redis failed or did not answer in time
        │   └── DirectoryUnavailable      [stores] the session directory cannot forward now
        ├── ConfigError                   [gateway] a bad gateway config; also a ValueError
        ├── LifespanError                 [server] the server's lifespan failed to start
        ├── SkillsError                   [server] a skills folder cannot be published; a ValueError
        ├── OpenApiError                  [openapi] a document that cannot be served; a ValueError
        ├── ArgumentError                 [openapi] an argument it cannot send; a ValueError
        ├── ApiFailure                    [openapi] an OpenAPI operation's API failed or refused
        ├── TransportError                a transport could not connect or carry the exchange
        │   ├── HttpError                 [transports.http] the HTTP client failed
        │   │   ├── HttpConnectError      could not connect (refused, DNS, TLS handshake)
        │   │   ├── HttpTimeout           a connect or read deadline passed
        │   │   ├── HttpProtocolError     the server broke HTTP or closed mid-response
        │   │   │   └── OutcomeUnknown    sent, then cut before the answer: it may have run
        │   │   ├── HttpStatusError       an HTTP error status, without a JSON-RPC error
        │   │   └── AuthorizationError    [auth.client] the OAuth client got or used no token
        │   │       ├── DiscoveryError    no usable resource or authorization-server metadata
        │   │       ├── RegistrationError  the client could not be registered
        │   │       ├── AuthorizationResponseError  the login was refused or failed a check
        │   │       ├── TokenError        the token endpoint refused, or answered nonsense
        │   │       └── InsufficientScope  still refused for scope after stepping up
        │   ├── LegacySseError            [transports.http] no HTTP+SSE endpoint came of it
        │   └── WebSocketHandshakeError   [transports.websocket] also a ConnectionError
        │       └── WebSocketRejected     the server answered the upgrade with an HTTP status
        └── ClientError                   [client] the client's own check failed
            ├── AppViewError              what was read for an MCP Apps view is not one
            ├── OutputValidationError     structuredContent does not fit the outputSchema
            ├── RepeatedCursor            a server's pagination went round in a circle
            ├── ServerConnectError        a server of a group could not be connected
            ├── SkillVerificationError    a skill file does not match its entry (SEP-2640)
            ├── SubscriptionRefused       a listen stream was acknowledged without a URI
            ├── TooManyInputRounds        a stateless-era request kept asking for input
            └── UnknownServer             no such server in the group; also a KeyError

Errors that arrive from the peer are rebuilt by :meth:`McpError.from_wire` as the class that
owns their code (a :class:`ProtocolError` for a code none owns), so ``except MethodNotFound``
works for local and remote errors alike. A handler may raise any :class:`ProtocolError` (or
``McpError`` with a code of its choosing) to control the error response its request gets. A
:class:`LocalError` that escapes a handler (a tool's too) is answered as an internal error
(-32603) with its message: it describes a condition on this side, not something the peer did.

Some exceptions never reach a caller: each is raised and caught inside one layer, as a signal
between two of its parts, and is named for what it is (no name here means two things)::

    Exception
    ├── CliError                          [cli] a command failed: one line and its exit code
    ├── InvalidToken                      [auth.server] a bearer token failed verification (401)
    │   └── InvalidDpopProof              [auth.server] its DPoP proof is missing or wrong (401)
    ├── VerifierUnavailable               [auth.server] keys or introspection unreachable (503)
    ├── OAuthProblem                      [auth.dev_server] an OAuth error to answer with
    ├── FormError                         [auth.dev_server] a body is not the form it should be
    ├── HttpParseError                    [transports.http] a request head is not HTTP/1.1
    ├── BadRequestBody                    [transports.http] a request body broke HTTP's rules
    ├── BodyTooLarge                      [transports.http] a request body is over its limit
    ├── WebSocketClosed                   [transports.http] the WebSocket peer closed
    ├── SessionEnded                      [transports.http] the HTTP session ended first
    ├── SessionLimitReached               [transports.http] max_sessions are live (503)
    ├── EndpointNotRunning                [transports.http] the endpoint's run() is not on (503)
    ├── SessionBusy                       [runtime] max_in_flight run, max_waiting wait (503)
    ├── RelayedExchangeFailed             [transports.http] a forwarded answer broke midway
    ├── TaskLimitReached                  [stores] an owner has all the unfinished tasks it may
    ├── TaskStoreFull                     [stores] the task store is full of unfinished tasks
    ├── TooManyListeners                  [stores] the subscription bus has all the listeners it may
    └── WorkersFailed                     [server] a worker crash-loops, or cannot start
    ValueError
    ├── InvalidHeaderAnnotation           [protocol.http_headers] an x-mcp-header breaks a rule
    ├── InvalidTaskCursor                 [stores] a tasks/list cursor the task store did not make
    ├── SseError                          [protocol.sse] an SSE stream is invalid or over a limit
    ├── FrontmatterError                  [protocol.skill_frontmatter] unusable SKILL.md frontmatter
    ├── StructureError                    [server] cattrs refused an attrs-class tool argument
    ├── ServingOptionsError               [server] a serving option that cannot be used
    └── ToolOutputError                   [server] a tool's value does not fit its annotation
    LookupError
    └── UnknownEventId                    [stores] a Last-Event-ID names no stream
    BaseException
    ├── InputRequired                     [server] ends a stateless-era handler's round (SEP-2322)
    └── BeginTask                         [server] a task takes over from the request (SEP-2663)

What :mod:`mcptrio.testing` finds wrong in a user's test fails it, as a test failure does::

    AssertionError
    └── SchemaViolation                   [testing] a message broke its revision's JSON schema

``tests/protocol/test_error_tree.py`` checks the drawings against the classes.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "STATELESS_ERROR_CODES",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "CapabilityNotNegotiated",
    "ConnectionClosed",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalError",
    "McpError",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "ParseError",
    "ProtocolError",
    "RequestTimeout",
    "ResourceNotFound",
    "TransportError",
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
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The errors only a stateless-era (2026-07-28) server sends: a client that gets one knows the
#: server speaks that era, and must not fall back to ``initialize`` (CHECKLIST 6.2, 7.7).
STATELESS_ERROR_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)

_BY_CODE: dict[int, type[ProtocolError]] = {}


class McpError(Exception):
    """An MCP / JSON-RPC error with a code, a message and optional data.

    A subclass declares its code and default message as class arguments:
    ``class Teapot(ProtocolError, code=-31000, default_message="I'm a teapot")``.
    """

    CODE: ClassVar[int] = INTERNAL_ERROR
    DEFAULT_MESSAGE: ClassVar[str] = "Error"

    def __init__(self, message: str | None = None, data: Any = None, *, code: int | None = None):
        self.code: int = self.CODE if code is None else code
        self.message: str = self.DEFAULT_MESSAGE if message is None else message
        self.data: Any = data
        super().__init__(self.message)

    def __init_subclass__(
        cls, *, code: int | None = None, default_message: str | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if default_message is not None:
            cls.DEFAULT_MESSAGE = default_message
        if code is not None:
            cls.CODE = code
            # The first error answer declared for a code owns it; subclasses that refine it
            # (UnsupportedProtocolVersion) declare no code of their own.
            if issubclass(cls, ProtocolError):
                _BY_CODE.setdefault(code, cls)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    @staticmethod
    def from_wire(code: int, message: str, data: Any = None) -> ProtocolError:
        """Rebuild an error received from the peer as the class that owns its code."""
        cls = _BY_CODE.get(code, ProtocolError)
        return cls(message, data, code=code)


class ProtocolError(McpError):
    """An error answer: one the peer sent, or one a handler raises to answer its request with.

    Raise it with a code of your own for an application error
    (``ProtocolError("Out of tea", code=-31000)``); the peer's codes that no class owns are
    rebuilt as this class.
    """


class ParseError(ProtocolError, code=PARSE_ERROR, default_message="Parse error"):
    """The bytes of a frame were not JSON."""


class InvalidRequest(ProtocolError, code=INVALID_REQUEST, default_message="Invalid request"):
    """Valid JSON that is not a JSON-RPC or MCP message (or not one allowed here)."""


class MethodNotFound(ProtocolError, code=METHOD_NOT_FOUND, default_message="Method not found"):
    """An unknown method, or one whose capability or feature was not negotiated."""


class InvalidParams(ProtocolError, code=INVALID_PARAMS, default_message="Invalid params"):
    """Params that do not fit the method: an unknown tool or prompt, bad arguments, a bad cursor."""


class InternalError(ProtocolError, code=INTERNAL_ERROR, default_message="Internal error"):
    """The handler failed; the message says how, the traceback stays in the log."""


class ResourceNotFound(
    ProtocolError, code=RESOURCE_NOT_FOUND, default_message="Resource not found"
):
    """No resource has that URI (its own code from 2024-11-05 to 2025-11-25)."""


class UrlElicitationRequired(
    ProtocolError, code=URL_ELICITATION_REQUIRED, default_message="URL elicitation required"
):
    """The request needs the user to visit a URL first; ``data.elicitations`` says which."""


class HeaderMismatch(
    ProtocolError, code=HEADER_MISMATCH, default_message="HTTP headers do not match the body"
):
    """A required HTTP header is missing, malformed, or disagrees with the request body
    (Streamable HTTP, 2026-07-28; answered with status 400)."""


class MissingRequiredClientCapability(
    ProtocolError,
    code=MISSING_REQUIRED_CLIENT_CAPABILITY,
    default_message="Missing required client capability",
):
    """The request needs a capability its ``_meta`` did not declare;
    ``data`` is ``{"requiredCapabilities": {...}}`` (2026-07-28)."""


class UnsupportedProtocolVersion(
    ProtocolError,
    code=UNSUPPORTED_PROTOCOL_VERSION,
    default_message="Unsupported protocol version",
):
    """No protocol revision in common; ``data`` is ``{"supported": [...], "requested": ...}``."""


class LocalError(McpError):
    """An error raised on this side; answered as -32603 if it escapes a handler."""

    def error_answer(self) -> McpError:
        """The error answer a request gets when this escapes its handler."""
        return InternalError(self.message)


class ConnectionClosed(LocalError, default_message="Connection closed"):
    """The connection ended before the answer came (pending requests fail with this)."""


class RequestTimeout(LocalError, default_message="Request timed out"):
    """An outgoing request hit its timeout; the peer was sent ``notifications/cancelled``."""


class CapabilityNotNegotiated(LocalError, default_message="Capability not negotiated"):
    """Sending this message would use a capability the session did not negotiate.

    ``required`` names the client capability a stateless-era request lacked (2026-07-28): a
    handler may catch this as in the handshake era, and if it escapes, the request is answered
    :class:`MissingRequiredClientCapability` (-32021) naming it, as that revision says.
    """

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        code: int | None = None,
        required: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, data, code=code)
        self.required = required

    def error_answer(self) -> McpError:
        if self.required is None:
            return super().error_answer()
        return MissingRequiredClientCapability(
            self.message, {"requiredCapabilities": self.required}
        )


class TransportError(LocalError, default_message="Transport failed"):
    """A transport could not connect, or could not carry an exchange.

    The concrete classes live with their transports (HTTP client errors, the HTTP+SSE and
    WebSocket openings); catch this one to handle them all.
    """
