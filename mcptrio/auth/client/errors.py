"""What the OAuth client raises (a branch of the tree in :mod:`mcptrio.protocol.errors`)::

    TransportError
    └── HttpError                   (mcptrio.transports.http.engine.client_pool)
        └── AuthorizationError      anything the OAuth client raises
            ├── DiscoveryError      no usable metadata: missing, oversized, malformed, a
            │                       resource or issuer that does not match, an endpoint that is
            │                       neither https nor loopback, a redirect elsewhere, a URL a
            │                       remote server named on this machine or a private network
            ├── RegistrationError   the client could not be registered (no way offered, refused)
            ├── AuthorizationResponseError
            │                       the authorization response was refused: an error, a state or
            │                       ``iss`` that does not match (RFC 9207), no code
            ├── TokenError          the token endpoint refused, or answered something malformed
            └── InsufficientScope   the server still wants more scope after the step-up limit

Each is an :class:`~mcptrio.transports.http.engine.client_pool.HttpError`, so the HTTP client
transports treat it as the failure of the request that needed authorization: the JSON-RPC
requests it carried fail with this very error (their callers can catch it by class).
"""

from __future__ import annotations

from ...transports.http.engine.client_pool import HttpError

__all__ = [
    "AuthorizationError",
    "AuthorizationResponseError",
    "DiscoveryError",
    "InsufficientScope",
    "RegistrationError",
    "TokenError",
]


class AuthorizationError(HttpError):
    """The client could not obtain or use an access token."""


class DiscoveryError(AuthorizationError):
    """No usable protected-resource or authorization-server metadata."""


class RegistrationError(AuthorizationError):
    """The client could not be registered with the authorization server."""


class AuthorizationResponseError(AuthorizationError):
    """The authorization response was an error or failed a check (``state``, ``iss``)."""


class TokenError(AuthorizationError):
    """The token endpoint refused the request or answered something malformed.

    ``error`` is the OAuth error code when the server sent one (``invalid_grant``, ...).
    """

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class InsufficientScope(AuthorizationError):
    """The server refused with ``insufficient_scope`` after the client stepped up its limit."""
