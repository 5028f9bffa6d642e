"""The ways the client obtains an access token once it knows the authorization server.

- :class:`AuthorizationCode`: a user logs in (OAuth 2.1 §4.1) through a redirect handler, with
  PKCE S256 (refused when the server's metadata does not list S256), ``state``, the
  ``resource`` parameter (RFC 8707) and the RFC 9207 ``iss`` checks (SEP-2468): with
  ``authorization_response_iss_parameter_supported`` the ``iss`` must be there; when there it
  must equal the recorded issuer exactly, or the response is dropped unread (its ``error`` is
  neither acted on nor shown).
- :class:`ClientCredentials`: a machine client with pre-registered credentials (SEP-1046),
  ``client_secret_basic``/``_post`` or ``private_key_jwt``.
- :class:`JwtBearer`: a workload presents an assertion it holds (RFC 7523 §2.1, workload
  identity federation).
- :class:`EnterpriseManaged`: the enterprise IdP exchanges the user's identity assertion for
  an ID-JAG (RFC 8693), which the MCP authorization server exchanges for an access token
  (RFC 7523); the user is never sent to the MCP authorization server.

Each is a :class:`Grant`: what to register for (``grant_types``), whether it comes with refresh
tokens, and :meth:`Grant.obtain`, which gets a :class:`GrantContext` from the OAuth client.
A refresh (:func:`refresh`) is shared by all.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlencode

from ...transports.http.engine.client_pool import HttpClientPool
from .discovery import AuthorizationServer
from .dpop import DpopKey, DpopNonces
from .errors import AuthorizationError, AuthorizationResponseError, TokenError
from .fetch import check_endpoint, post_form
from .redirect import RedirectHandler
from .store import ClientRegistration, Tokens
from .token_endpoint import ClientKey, request_tokens

__all__ = [
    "AuthorizationCode",
    "ClientCredentials",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "JwtBearer",
    "refresh",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

#: Where a grant gets the client's registration, given the redirect URIs it will use.
Register = Callable[[list[str]], Awaitable[ClientRegistration]]
#: A value given as it is, or made when needed (an assertion that expires, say).
Provided = str | Callable[[], Awaitable[str]]


async def _value(provided: Provided) -> str:
    return provided if isinstance(provided, str) else await provided()


@dataclass
class GrantContext:
    """What a grant works with: the server, the resource, the scopes, the client."""

    http: HttpClientPool
    server: AuthorizationServer
    resource: str
    #: The scopes to ask for; empty: the ``scope`` parameter is left out.
    scopes: tuple[str, ...]
    register: Register
    key: ClientKey | None
    dpop: DpopKey | None
    nonces: DpopNonces

    async def tokens(self, form: dict[str, str], registration: ClientRegistration | None) -> Tokens:
        """The token endpoint's answer to ``form`` (with ``resource`` and the context's DPoP)."""
        form.setdefault("resource", self.resource)
        return await request_tokens(
            self.http,
            self.server,
            form,
            registration=registration,
            resource=self.resource,
            requested_scopes=self.scopes,
            key=self.key,
            dpop=self.dpop,
            nonces=self.nonces,
        )


class Grant(Protocol):
    """A way to obtain tokens."""

    #: The grant types a dynamic registration asks for.
    grant_types: tuple[str, ...]

    async def obtain(self, context: GrantContext) -> Tokens: ...


def _pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def check_iss(server: AuthorizationServer, query: dict[str, str]) -> None:
    """RFC 9207 as SEP-2468 words it (see the module's docstring)."""
    iss = query.get("iss")
    if iss is None:
        if server.iss_parameter_supported:
            raise AuthorizationResponseError(
                f"{server.issuer} says it sends iss in authorization responses, and this one"
                " has none; it is refused"
            )
        return
    if iss != server.issuer:
        raise AuthorizationResponseError(
            f"The authorization response came from issuer {iss[:200]!r}, not {server.issuer!r};"
            " it is refused unread"
        )


@dataclass
class AuthorizationCode:
    """A user logs in through ``redirect`` (see :mod:`.redirect`)."""

    redirect: RedirectHandler
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")

    async def obtain(self, context: GrantContext) -> Tokens:
        server = context.server
        if server.authorization_endpoint is None:
            raise AuthorizationError(f"{server.issuer} has no authorization endpoint")
        methods = server.code_challenge_methods_supported
        if server.published and (methods is None or "S256" not in methods):
            raise AuthorizationError(
                f"{server.issuer} does not say it supports PKCE with S256; the client refuses"
                " to log in without it"
            )
        endpoint = check_endpoint(server.authorization_endpoint, "authorization endpoint")
        async with self.redirect.open() as session:
            registration = await context.register([session.redirect_uri])
            verifier, challenge = _pkce_pair()
            state = secrets.token_urlsafe(24)
            params = {
                "response_type": "code",
                "client_id": registration.client_id,
                "redirect_uri": session.redirect_uri,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": state,
                "resource": context.resource,
            }
            if context.scopes:
                params["scope"] = " ".join(context.scopes)
            separator = "&" if "?" in endpoint else "?"
            query = await session.run(endpoint + separator + urlencode(params))
            redirect_uri = session.redirect_uri
        # The issuer first: a response from another server is not read any further.
        check_iss(server, query)
        if query.get("state") != state:
            raise AuthorizationResponseError("The authorization response's state does not match")
        if "error" in query:
            description = query.get("error_description", "")[:200]
            raise AuthorizationResponseError(
                f"The authorization was refused ({query['error'][:64]}) {description}".strip()
            )
        code = query.get("code")
        if not code:
            raise AuthorizationResponseError("The authorization response has no code")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        return await context.tokens(form, registration)


@dataclass
class ClientCredentials:
    """The client acts on its own behalf, with pre-registered credentials (SEP-1046)."""

    grant_types: tuple[str, ...] = ("client_credentials",)

    async def obtain(self, context: GrantContext) -> Tokens:
        registration = await context.register([])
        form = {"grant_type": "client_credentials"}
        if context.scopes:
            form["scope"] = " ".join(context.scopes)
        return await context.tokens(form, registration)


@dataclass
class JwtBearer:
    """The client presents ``assertion`` (a workload identity JWT, RFC 7523 §2.1).

    A refusal is final: the error is raised, never retried with another grant.
    """

    assertion: Provided
    grant_types: tuple[str, ...] = (JWT_BEARER,)

    async def obtain(self, context: GrantContext) -> Tokens:
        registration = await context.register([])
        form = {"grant_type": JWT_BEARER, "assertion": await _value(self.assertion)}
        if context.scopes:
            form["scope"] = " ".join(context.scopes)
        return await context.tokens(form, registration)


@dataclass
class EnterpriseManaged:
    """Enterprise-managed authorization (SEP-990): ID-JAG from the IdP, then jwt-bearer.

    ``identity_assertion`` is the user's ID token from the enterprise single sign-on; the IdP's
    token endpoint and the client's id there (and secret, if it has one) are configuration.
    """

    idp_token_endpoint: str
    identity_assertion: Provided
    idp_client_id: str
    idp_client_secret: str | None = None
    grant_types: tuple[str, ...] = (JWT_BEARER,)

    async def _id_jag(self, context: GrantContext) -> str:
        endpoint = check_endpoint(self.idp_token_endpoint, "IdP token endpoint")
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": await _value(self.identity_assertion),
            "subject_token_type": ID_TOKEN,
            "audience": context.server.issuer,
            "resource": context.resource,
            "client_id": self.idp_client_id,
        }
        if self.idp_client_secret is not None:
            form["client_secret"] = self.idp_client_secret
        if context.scopes:
            form["scope"] = " ".join(context.scopes)
        answer = await post_form(context.http, endpoint, form)
        document = answer.document or {}
        if answer.status != 200:
            error = document.get("error")
            raise TokenError(
                f"The IdP refused the token exchange (HTTP {answer.status}, {error})",
                error=error if isinstance(error, str) else None,
            )
        token = document.get("access_token")
        if document.get("issued_token_type") != ID_JAG or not isinstance(token, str):
            raise TokenError("The IdP's token exchange did not return an ID-JAG")
        return token

    async def obtain(self, context: GrantContext) -> Tokens:
        registration = await context.register([])
        form = {"grant_type": JWT_BEARER, "assertion": await self._id_jag(context)}
        if context.scopes:
            form["scope"] = " ".join(context.scopes)
        return await context.tokens(form, registration)


async def refresh(
    context: GrantContext, tokens: Tokens, registration: ClientRegistration
) -> Tokens:
    """New tokens for ``tokens``' refresh token; it is kept if the server sends no new one."""
    assert tokens.refresh_token is not None
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    fresh = await context.tokens(form, registration)
    if fresh.refresh_token is None:
        fresh = Tokens(
            access_token=fresh.access_token,
            token_type=fresh.token_type,
            expires_at=fresh.expires_at,
            refresh_token=tokens.refresh_token,
            scopes=fresh.scopes or tokens.scopes,
            issuer=fresh.issuer,
            resource=fresh.resource,
            dpop_key=fresh.dpop_key,
        )
    return fresh
