"""A protected MCP server's side of OAuth over HTTP: :class:`BearerAuth`.

Give one to the server's HTTP security (``HttpSecurity(authenticator=BearerAuth(...))``) and
every MCP endpoint of either front end, in both eras, then:

- serves its Protected Resource Metadata (RFC 9728) at ``/.well-known/oauth-protected-resource``
  with the endpoint's path inserted (``/.well-known/oauth-protected-resource/mcp``) and at the
  bare well-known path, with ``Access-Control-Allow-Origin: *`` (and an answer to the CORS
  preflight) for browser-based clients;
- answers a request without a bearer token 401 with ``WWW-Authenticate: Bearer
  resource_metadata="...", scope="..."`` (the scopes every request needs), one with an invalid
  token 401 with ``error="invalid_token"``, and one whose token lacks a scope 403 with
  ``error="insufficient_scope"`` and the scopes to ask for (step-up, RFC 6750 section 3.1);
- reads the token from the ``Authorization`` header only: the MCP spec forbids tokens in the
  query string, and one there is not looked at;
- takes a DPoP-bound token (``cnf.jkt``) only as ``Authorization: DPoP`` with a proof of its
  key, and never as a bearer token; ``dpop=DpopPolicy(required=True)`` takes DPoP-bound tokens
  only (see :mod:`.dpop`);
- answers 503 when the verifier cannot decide (its JWKS or introspection endpoint is down).

The resource URI (this server's canonical URI, the token audience to insist on, RFC 8707) is
``resource``, which the operator must give: it is never taken from the request, since a
client chooses its ``Host`` header and could name another server on the same machine, or any
name the allowed hosts admit, and so have a token minted for that server accepted here. The
metadata document and the challenges name it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ...transports.http.endpoints.security import Principal, Refusal
from ...transports.http.engine.exchange import HttpRequest, header
from ..metadata import PRM_WELL_KNOWN, ProtectedResourceMetadata, check_url, encode_document
from .dpop import DpopPolicy, InvalidDpopProof, bound_key_of
from .verifier import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = ["BearerAuth"]

_JSON_CORS: Final = (
    (b"content-type", b"application/json"),
    (b"access-control-allow-origin", b"*"),
    (b"cache-control", b"max-age=3600"),
)


_PREFLIGHT: Final = (
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, HEAD, OPTIONS"),
    (b"access-control-allow-headers", b"*"),
    (b"access-control-max-age", b"86400"),
)


_NO_RESOURCE: Final = (
    "BearerAuth needs resource=, this server's canonical URI as clients reach it "
    "(e.g. 'https://mcp.example.com/mcp'): the token audience is never taken from the request"
)


_DPOP_ONLY: Final = "this server takes DPoP-bound tokens only: send Authorization: DPoP and a proof"
_BOUND_AS_BEARER: Final = (
    "token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof of its key"
)


def _uses_dpop(request: HttpRequest) -> bool:
    """Whether ``request`` presents its token with the ``DPoP`` scheme (its challenges do too)."""
    value = header(request.headers, b"authorization")
    return value is not None and value.lstrip()[:5].lower() == b"dpop "


def _quoted(value: str) -> str:
    """``value`` as an RFC 9110 quoted-string (no control characters survive)."""
    cleaned = "".join(ch for ch in value if ch.isprintable())
    return '"' + cleaned.replace("\\", "\\\\").replace('"', '\\"') + '"'


class BearerAuth:
    """The :class:`~mcptrio.transports.http.endpoints.security.Authenticator` of a protected
    MCP server; see the module docstring.

    - ``verifier``: checks tokens (:class:`~.jwt_verifier.JwtVerifier`,
      :class:`~.introspection.IntrospectionVerifier`, or your own).
    - ``authorization_servers``: the issuers clients may get tokens from (at least one).
    - ``resource``: this server's canonical URI, the MCP endpoint's URL as clients reach it
      (``"https://mcp.example.com/mcp"``); tokens must be issued for it.
    - ``path``: the endpoint's path as this server serves it (default ``/mcp``), when a proxy
      serves it under another path than ``resource``'s; the metadata is served under both.
    - ``scopes``: scopes every request needs; ``scopes_supported``: the scopes the metadata
      lists (default: ``scopes``; list those your tools, prompts and resources need as well, so
      that clients may ask for them up front instead of stepping up later).
    - ``resource_name``, ``resource_documentation``: shown to users by some clients.
    - ``dpop``: how DPoP-bound tokens are taken (:class:`~.dpop.DpopPolicy`; by default both
      bearer and DPoP-bound tokens, the latter only with their proof, replays remembered in
      memory).
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        authorization_servers: Sequence[str],
        resource: str,
        path: str = "/mcp",
        scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        dpop: DpopPolicy | None = None,
    ) -> None:
        if not authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        for issuer in authorization_servers:
            check_url(issuer, "authorization server", issuer=True)
        if not isinstance(resource, str) or not resource:
            raise ValueError(_NO_RESOURCE)
        check_url(resource, "resource")
        self.verifier = verifier
        self.authorization_servers = list(authorization_servers)
        self.resource = resource
        self.path = path
        self.scopes = frozenset(scopes)
        supported = self.scopes if scopes_supported is None else scopes_supported
        self.scopes_supported = sorted(supported)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.dpop = DpopPolicy() if dpop is None else dpop

    # ------------------------------------------------------------------ the resource

    def resource_for(self, request: HttpRequest) -> str:
        """The resource URI a token for ``request`` must be issued for: ``resource``, whatever
        the request says."""
        return self.resource

    def metadata_url(self, request: HttpRequest) -> str:
        """The URL of the Protected Resource Metadata, as the challenge names it."""
        scheme, _, rest = self.resource.partition("://")
        authority, slash, path = rest.partition("/")
        path = (slash + path).rstrip("/")
        return f"{scheme}://{authority}{PRM_WELL_KNOWN}{path}"

    def metadata(self, request: HttpRequest) -> ProtectedResourceMetadata:
        """This server's Protected Resource Metadata (RFC 9728)."""
        return ProtectedResourceMetadata(
            resource=self.resource_for(request),
            authorization_servers=self.authorization_servers,
            scopes_supported=self.scopes_supported or None,
            bearer_methods_supported=["header"],
            resource_name=self.resource_name,
            resource_documentation=self.resource_documentation,
            dpop_signing_alg_values_supported=list(self.dpop.algorithms),
            dpop_bound_access_tokens_required=True if self.dpop.required else None,
        )

    def metadata_response(
        self, request: HttpRequest
    ) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes] | None:
        """The answer to a request for the metadata, or ``None`` when ``request`` is not one
        (its path is not a well-known path of this resource)."""
        path = request.path
        if not path.startswith(PRM_WELL_KNOWN):
            return None
        rest = path[len(PRM_WELL_KNOWN) :].rstrip("/")
        root = getattr(request, "root_path", "")
        if rest and rest != root + self.path and not self._names_configured(rest):
            return None
        if request.method == "OPTIONS":
            # A CORS preflight: browser-based clients send MCP-Protocol-Version with it.
            return 204, _PREFLIGHT, b""
        if request.method not in ("GET", "HEAD"):
            return 405, ((b"allow", b"GET, HEAD, OPTIONS"),), b""
        return 200, _JSON_CORS, encode_document(self.metadata(request))

    def _names_configured(self, rest: str) -> bool:
        _, _, after = self.resource.partition("://")
        return "/" + after.partition("/")[2].rstrip("/") == rest

    # ------------------------------------------------------------------ Authenticator

    async def authenticate(self, request: HttpRequest) -> Principal | Refusal | None:
        """The request's :class:`~.verifier.AccessToken`, ``None`` without a token (401 with
        :meth:`challenge`), or the refusal for a bad one (401, 403, 503)."""
        value = header(request.headers, b"authorization")
        if value is None:
            return None
        scheme, _, token = value.decode("latin-1").strip().partition(" ")
        scheme, token = scheme.lower(), token.strip()
        if scheme not in ("bearer", "dpop") or not token:
            return None
        if scheme == "bearer" and self.dpop.required:
            return self._refusal(request, 401, "invalid_token", _DPOP_ONLY, self.scopes)
        try:
            principal = await self.verifier.verify(token, resource=self.resource)
            jkt = bound_key_of(principal)
            if scheme == "bearer" and jkt is not None:
                raise InvalidToken(_BOUND_AS_BEARER)
            if scheme == "dpop":
                if jkt is None:
                    raise InvalidToken("token is not DPoP-bound: send it as a bearer token")
                await self.dpop.check(
                    [v for n, v in request.headers if n == b"dpop"],
                    method=request.method,
                    urls=self._request_urls(request),
                    token=token,
                    jkt=jkt,
                )
        except InvalidDpopProof as exc:
            return self._refusal(request, 401, "invalid_dpop_proof", str(exc), self.scopes)
        except InvalidToken as exc:
            return self._refusal(request, 401, "invalid_token", str(exc), self.scopes)
        except VerifierUnavailable as exc:
            return Refusal(503, f"Token verification unavailable: {exc}", ((b"retry-after", b"5"),))
        if not principal.has_scopes(self.scopes):
            return self.insufficient_scope(request, self.scopes)
        return principal

    def _request_urls(self, request: HttpRequest) -> tuple[str, ...]:
        """The URLs a DPoP proof's ``htu`` may name for ``request``: the configured resource's
        origin and the request's path, and the resource itself for the endpoint."""
        scheme, _, rest = self.resource.partition("://")
        root = getattr(request, "root_path", "")
        here = f"{scheme}://{rest.partition('/')[0]}{root}{request.path}"
        return (here, self.resource) if request.path == self.path else (here,)

    def challenge(self, request: HttpRequest) -> bytes:
        """The ``WWW-Authenticate`` value of a 401 for a request without a token."""
        return self._challenge(request, None, None, self.scopes)

    def insufficient_scope(self, request: HttpRequest, needed: Iterable[str]) -> Refusal:
        """The 403 for a request whose token lacks some of ``needed``: the challenge names
        every scope to ask for (those needed, and those every request needs)."""
        scopes = self.scopes | frozenset(needed)
        message = f"insufficient_scope: this needs scope {' '.join(sorted(scopes))}"
        return self._refusal(request, 403, "insufficient_scope", message, scopes)

    def scope_refusal(
        self, request: HttpRequest, principal: Principal | None, needed: frozenset[str]
    ) -> Refusal | None:
        """The 403 when ``principal`` lacks some of ``needed`` (``None`` when it has them)."""
        if not needed or (isinstance(principal, AccessToken) and principal.has_scopes(needed)):
            return None
        return self.insufficient_scope(request, needed)

    def _refusal(
        self, request: HttpRequest, status: int, error: str, message: str, scopes: frozenset[str]
    ) -> Refusal:
        challenge = self._challenge(request, error, message, scopes)
        return Refusal(status, message, ((b"www-authenticate", challenge),))

    def _challenge(
        self,
        request: HttpRequest,
        error: str | None,
        description: str | None,
        scopes: frozenset[str],
    ) -> bytes:
        dpop = self.dpop.required or _uses_dpop(request)
        params = []
        if error is not None:
            params.append(f"error={_quoted(error)}")
        if description is not None:
            params.append(f"error_description={_quoted(description)}")
        params.append(f"resource_metadata={_quoted(self.metadata_url(request))}")
        if scopes:
            params.append(f"scope={_quoted(' '.join(sorted(scopes)))}")
        if dpop:
            params.append(f"algs={_quoted(' '.join(self.dpop.algorithms))}")
        scheme = "DPoP " if dpop else "Bearer "
        return (scheme + ", ".join(params)).encode("latin-1", "replace")
