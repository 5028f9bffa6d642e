"""Opaque access tokens checked by asking the authorization server: :class:`IntrospectionVerifier`.

RFC 7662: the resource server POSTs the token to the introspection endpoint, authenticated as
a client of the authorization server (HTTP Basic with ``client_id``/``client_secret``), and the
answer says whether the token is ``active`` and what it is for. Every request costs one round
trip, so answers are cached for ``cache_ttl`` seconds (never past the token's ``exp``; 0 turns
the cache off), up to ``cache_size`` tokens, keyed by a hash of the token.

The answer is checked as a JWT's claims would be: ``active`` must be true, ``aud`` must name the
resource (RFC 8707; an answer without ``aud`` is refused unless ``require_audience=False``, for
authorization servers that issue tokens for one resource only), ``iss`` must be ``issuer`` when
both are given, ``exp`` and ``nbf`` with ``leeway``. A failed, slow (``timeout``), oversized or
unreadable answer raises :class:`VerifierUnavailable`.
"""

from __future__ import annotations

import base64
import hashlib
import ssl
import time
from collections import OrderedDict
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import trio

from ...transports.http.engine.client_pool import HttpClientPool
from ..http_pools import PoolOnFirstUse
from ..metadata import check_url
from .fetch import fetch_json
from .verifier import (
    AccessToken,
    InvalidToken,
    VerifierUnavailable,
    access_token_of,
    checked_audience,
)

__all__ = ["IntrospectionVerifier"]


@dataclass(eq=False)
class IntrospectionVerifier:
    """Verifies tokens at ``endpoint`` (RFC 7662) as client ``client_id``; see the module
    docstring. The credentials, ``http`` and ``ssl_context`` only go into how it asks, so they
    are not kept as settings."""

    endpoint: str
    _: KW_ONLY
    client_id: InitVar[str]
    client_secret: InitVar[str]
    issuer: str | None = None
    audience: str | None = None
    require_audience: bool = True
    leeway: float = 30.0
    timeout: float = 5.0
    cache_ttl: float = 60.0
    cache_size: int = 10_000
    max_answer_size: int = 64 * 1024
    http: InitVar[HttpClientPool | None] = None
    ssl_context: InitVar[ssl.SSLContext | None] = None
    _authorization: bytes = field(init=False, repr=False)
    _http: PoolOnFirstUse = field(init=False, repr=False)
    _cache: OrderedDict[bytes, tuple[float, dict[str, Any]]] = field(
        init=False, repr=False, default_factory=OrderedDict
    )

    def __post_init__(
        self,
        client_id: str,
        client_secret: str,
        http: HttpClientPool | None,
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        check_url(self.endpoint, "introspection endpoint")
        if self.issuer is not None:
            check_url(self.issuer, "issuer", issuer=True)
        credentials = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        self._authorization = b"Basic " + base64.b64encode(credentials.encode())
        self._http = PoolOnFirstUse(http, ssl_context=ssl_context, timeout=self.timeout)

    async def aclose(self) -> None:
        """Close the HTTP client pool the verifier made (not one it was given)."""
        await self._http.aclose()

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        """Introspect ``token`` (or take a cached answer) and check it for ``resource``."""
        if not token or len(token) > 16 * 1024 or not token.isascii():
            raise InvalidToken("token is malformed")
        key = hashlib.sha256(token.encode()).digest()
        now = trio.current_time()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            claims = cached[1]
        else:
            claims = await self._introspect(token)
            self._remember(key, claims, now)
        return self._check(claims, resource)

    def _remember(self, key: bytes, claims: dict[str, Any], now: float) -> None:
        if self.cache_ttl <= 0 or claims.get("active") is not True:
            return
        lifetime = self.cache_ttl
        exp = claims.get("exp")
        if isinstance(exp, int | float):
            lifetime = min(lifetime, exp - time.time())
        if lifetime > 0:
            self._cache[key] = (now + lifetime, claims)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    async def _introspect(self, token: str) -> dict[str, Any]:
        body = urlencode({"token": token, "token_type_hint": "access_token"}).encode()
        headers: list[tuple[str | bytes, str | bytes]] = [
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "application/json"),
            ("authorization", self._authorization),
        ]
        claims = await fetch_json(
            self._http.get(),
            "POST",
            self.endpoint,
            what="introspection",
            headers=headers,
            body=body,
            timeout=self.timeout,
            max_size=self.max_answer_size,
        )
        if not isinstance(claims, dict):
            raise VerifierUnavailable("introspection answer is not a JSON object")
        return claims

    def _check(self, claims: dict[str, Any], resource: str) -> AccessToken:
        if claims.get("active") is not True:
            raise InvalidToken("token is not active")
        issuer = claims.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            raise InvalidToken(f"token issuer {issuer!r} is not {self.issuer!r}")
        audience = checked_audience(
            claims, self.audience or resource, required=self.require_audience
        )
        now = time.time()
        exp = claims.get("exp")
        if isinstance(exp, int | float) and now > exp + self.leeway:
            raise InvalidToken("token has expired")
        nbf = claims.get("nbf")
        if isinstance(nbf, int | float) and now + self.leeway < nbf:
            raise InvalidToken("token is not valid yet (nbf)")
        return access_token_of(
            claims,
            client_id=claims.get("client_id"),
            audience=audience,
            issuer=issuer if isinstance(issuer, str) else self.issuer,
            expires_at=int(exp) if isinstance(exp, int | float) else None,
        )
