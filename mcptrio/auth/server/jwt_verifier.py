"""Signed JWT access tokens checked against the authorization server's JWKS: :class:`JwtVerifier`.

The signature is checked by ``joserfc`` with a key from the issuer's JSON Web Key Set, which is
fetched through mcptrio's own trio HTTP client and cached:

- the set is fetched on first use and again once ``cache_ttl`` seconds have passed;
- a token whose ``kid`` the cached set lacks makes the verifier fetch the set again (the issuer
  rotated its keys), at most once every ``refresh_interval`` seconds, so a flood of tokens with
  made-up ``kid`` values costs one fetch, not one per request;
- each fetch has a deadline (``fetch_timeout``) and a size limit (``max_jwks_size``); a fetch
  that fails, times out or brings back no valid set raises :class:`VerifierUnavailable` (and the
  previous set, if any, stays in use until a later fetch succeeds). A failed fetch is not tried
  again for ``refresh_interval`` seconds either: meanwhile requests that need it get the same
  error, and the JWKS endpoint is not asked once per request while it is down.

Concurrent requests needing a fetch share it: one fetches, the others wait for its result.

The claims are checked after the signature: ``iss`` must be ``issuer``; ``aud`` must name the
resource (this server's canonical URI, RFC 8707; ``audience=`` overrides it for providers that
use another audience value); ``exp`` must be present and ``nbf`` (when present) reached, both
with ``leeway`` seconds of clock skew; the ``alg`` must be one of ``algorithms`` (asymmetric
ones only by default: never ``none``, and an ``HS256`` token could be forged by anyone who
knows a public key used as a secret).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Collection
from typing import Any, Final

import trio
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

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

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier"]

#: The signature algorithms accepted by default: asymmetric, as RFC 9068 expects.
DEFAULT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
#: A token longer than this is refused before it is parsed.
MAX_TOKEN_SIZE: Final = 16 * 1024


class JwtVerifier:
    """Verifies JWT access tokens issued by ``issuer``, signed with a key of its JWKS.

    ``jwks_url`` is where the key set is fetched (``https``, or ``http`` on loopback); ``keys``
    may give a set (a JWKS dict) instead, for tests or a pinned key. The other options are in
    the module docstring. The verifier owns an HTTP client pool (pass ``http`` to share one);
    :meth:`aclose` closes the one it made.
    """

    def __init__(
        self,
        issuer: str,
        jwks_url: str | None = None,
        *,
        keys: dict[str, Any] | None = None,
        audience: str | None = None,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        cache_ttl: float = 600.0,
        refresh_interval: float = 30.0,
        fetch_timeout: float = 5.0,
        max_jwks_size: int = 64 * 1024,
        http: HttpClientPool | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        check_url(issuer, "issuer", issuer=True)
        if (jwks_url is None) == (keys is None):
            raise ValueError("give the JWKS either by URL (jwks_url) or as keys, not both")
        if jwks_url is not None:
            check_url(jwks_url, "jwks_url")
        if "none" in algorithms or any(alg.startswith("HS") for alg in algorithms):
            raise ValueError("only asymmetric signature algorithms verify access tokens")
        self.issuer = issuer
        self.jwks_url = jwks_url
        self.audience = audience
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.cache_ttl = cache_ttl
        self.refresh_interval = refresh_interval
        self.fetch_timeout = fetch_timeout
        self.max_jwks_size = max_jwks_size
        self._http = PoolOnFirstUse(http, ssl_context=ssl_context, timeout=fetch_timeout)
        self._keys: KeySet | None = None if keys is None else _key_set(keys)
        self._fetched_at = -float("inf")
        self._tried_at = -float("inf")
        self._fetching: trio.Event | None = None
        self._last_failure: VerifierUnavailable | None = None

    async def aclose(self) -> None:
        """Close the HTTP client pool the verifier made (not one it was given)."""
        await self._http.aclose()

    # ------------------------------------------------------------------ verify

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        """Check ``token`` for ``resource``; see the module docstring for what is checked."""
        header = _header(token)
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken(f"token algorithm {alg!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("token kid is not a string")
        keys = await self._key_set(kid)
        try:
            decoded = jwt.decode(token, keys, algorithms=[alg])
        except JoseError as exc:
            raise InvalidToken(f"token signature is not valid ({exc.error})") from None
        except (ValueError, TypeError):
            raise InvalidToken("token is not a valid JWT") from None
        return self._check_claims(decoded.claims, resource)

    def _check_claims(self, claims: dict[str, Any], resource: str) -> AccessToken:
        if claims.get("iss") != self.issuer:
            raise InvalidToken(f"token issuer {claims.get('iss')!r} is not {self.issuer!r}")
        audience = checked_audience(claims, self.audience or resource)
        now = time.time()
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise InvalidToken("token has no expiry (exp)")
        if now > exp + self.leeway:
            raise InvalidToken("token has expired")
        nbf = claims.get("nbf")
        if nbf is not None and (not isinstance(nbf, int | float) or now + self.leeway < nbf):
            raise InvalidToken("token is not valid yet (nbf)")
        return access_token_of(
            claims,
            client_id=claims.get("client_id", claims.get("azp")),
            audience=audience,
            issuer=self.issuer,
            expires_at=int(exp),
        )

    # ------------------------------------------------------------------ keys

    async def _key_set(self, kid: str | None) -> KeySet:
        """The cached set, fetched first when it is missing, stale, or lacks ``kid``."""
        if self.jwks_url is None:
            assert self._keys is not None
            return self._keys
        now = trio.current_time()
        keys = self._keys
        stale = keys is None or now - self._fetched_at > self.cache_ttl
        unknown = keys is not None and kid is not None and not _has_kid(keys, kid)
        # Every fetch, failed or not, waits refresh_interval for the next: a key set that is
        # down is not asked once per request.
        if (stale or unknown) and now - self._tried_at >= self.refresh_interval:
            keys = await self._refresh()
        if keys is None:
            raise self._last_failure or VerifierUnavailable("no JWKS")
        if kid is not None and not _has_kid(keys, kid):
            raise InvalidToken(f"token key id {kid!r} is not in the issuer's key set")
        return keys

    async def _refresh(self) -> KeySet | None:
        """Fetch the set, or wait for the fetch already under way; the set in use after."""
        if self._fetching is not None:
            await self._fetching.wait()
            return self._keys
        done = self._fetching = trio.Event()
        try:
            self._keys = await self._fetch()
            self._fetched_at = trio.current_time()
            self._last_failure = None
        except VerifierUnavailable as exc:
            self._last_failure = exc
            if self._keys is None:
                raise
        finally:
            self._tried_at = trio.current_time()
            self._fetching = None
            done.set()
        return self._keys

    async def _fetch(self) -> KeySet:
        assert self.jwks_url is not None
        url = self.jwks_url
        document = await fetch_json(
            self._http.get(),
            "GET",
            url,
            what="JWKS",
            headers=[("accept", "application/json")],
            timeout=self.fetch_timeout,
            max_size=self.max_jwks_size,
        )
        try:
            return _key_set(document)
        except ValueError as exc:
            raise VerifierUnavailable(f"JWKS from {url} is not a key set: {exc}") from None


def _header(token: str) -> dict[str, Any]:
    """The token's protected header, checked to be a compact JWS's."""
    if len(token) > MAX_TOKEN_SIZE:
        raise InvalidToken("token is too long")
    try:
        header = jws.extract_compact(token.encode("ascii")).protected
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("token is not a JWT") from None
    if not isinstance(header, dict):
        raise InvalidToken("token header is not an object")
    return header


def _key_set(document: Any) -> KeySet:
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("a JWKS is an object with a 'keys' list")
    try:
        return KeySet.import_key_set(document)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(str(exc)) from None


def _has_kid(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)
