"""What a protected MCP server knows about a request's bearer token: :class:`AccessToken`.

A :class:`TokenVerifier` turns the token string into an :class:`AccessToken`, or raises
:class:`InvalidToken` (the request gets 401 with ``error="invalid_token"``) or
:class:`VerifierUnavailable` (the keys or the introspection endpoint could not be reached in
time: 503, since the client's token may be fine and asking it to log in again would not help).
Two verifiers ship: :class:`~.jwt_verifier.JwtVerifier` (signed JWTs checked against the
authorization server's JWKS) and :class:`~.introspection.IntrospectionVerifier` (RFC 7662).
Any object with the same ``verify`` coroutine will do.

Every verifier checks that the token was issued *for this server* (its audience, RFC 8707's
``resource``): a token minted for another service is refused, and this server never passes the
token it received on to an upstream service (see ``docs/explanation/authorization.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "AccessToken",
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "access_token_of",
    "audience_of",
    "checked_audience",
    "same_resource",
    "scopes_of",
]


class InvalidToken(Exception):
    """The bearer token is malformed, expired, not for this resource, or otherwise not valid;
    the message says which (it goes into the 401's ``error_description``)."""


class VerifierUnavailable(Exception):
    """The verifier could not decide: its keys or its introspection endpoint failed or timed
    out (answered 503)."""


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A verified access token: the request's principal.

    ``subject`` is the user (``sub``), or the client itself for a client-credentials token;
    sessions are bound to it. ``scopes`` are the token's scopes; ``audience`` the resources it
    was issued for; ``expires_at`` its ``exp`` (seconds since the epoch, ``None``: no expiry
    given); ``claims`` everything the verifier read (JWT claims or the introspection answer).
    The token string itself is deliberately not kept: it is for this server only.
    """

    subject: str
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    audience: tuple[str, ...] = ()
    issuer: str | None = None
    expires_at: int | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)

    def has_scopes(self, scopes: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        """Whether the token carries every one of ``scopes``."""
        return self.scopes.issuperset(scopes)


class TokenVerifier(Protocol):
    """Checks a bearer token for a resource."""

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        """The verified token; :class:`InvalidToken` or :class:`VerifierUnavailable` else.

        ``resource`` is this server's canonical URI, which the token's audience must name.
        """
        ...


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes of a token's claims: ``scope`` (a space-separated string, RFC 8693/7662) or
    ``scp`` (a list or a string, as some providers send)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(item for item in value if isinstance(item, str))
    return frozenset()


def audience_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``aud`` claim as a tuple (it may be one string or a list)."""
    value = claims.get("aud")
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def checked_audience(
    claims: Mapping[str, Any], expected: str, *, required: bool = True
) -> tuple[str, ...]:
    """The token's audience, which must name ``expected`` (RFC 8707); a token with no ``aud``
    at all passes only when it is not ``required``."""
    audience = audience_of(claims)
    if (audience or required) and not any(same_resource(aud, expected) for aud in audience):
        raise InvalidToken(f"token audience {list(audience)} does not name this resource")
    return audience


def access_token_of(
    claims: Mapping[str, Any],
    *,
    client_id: object,
    audience: tuple[str, ...],
    issuer: str | None,
    expires_at: int | None,
) -> AccessToken:
    """The verified token whose other claims were checked: its subject is ``sub``, else the
    client itself (a client-credentials token); :class:`InvalidToken` when it names neither."""
    subject = claims.get("sub", client_id)
    if not isinstance(subject, str) or not subject:
        raise InvalidToken("token names no subject (sub)")
    return AccessToken(
        subject=subject,
        client_id=client_id if isinstance(client_id, str) else None,
        scopes=scopes_of(claims),
        audience=audience,
        issuer=issuer,
        expires_at=expires_at,
        claims=claims,
    )


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource: scheme and host compare without case,
    a trailing ``/`` does not count."""
    return _canonical(a) == _canonical(b)


def _canonical(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
