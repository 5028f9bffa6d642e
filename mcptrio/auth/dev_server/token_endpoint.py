"""The development authorization server's ``/token``: three grants, three client auth methods.

- ``authorization_code``: the code is used once, by the client it was issued to, with the same
  ``redirect_uri``, and with the PKCE verifier whose S256 hash is the challenge (compared in
  constant time); a ``resource`` sent here must be the one sent to ``/authorize``.
- ``refresh_token``: the token is rotated (the old one stops working); a narrower ``scope`` may
  be asked for, never a wider one.
- ``client_credentials``: for confidential clients registered for that grant; the token's
  subject is the client, and its scopes are among the client's registered ``scope`` (there is
  no user to approve more), the whole of it when the request names none.

A refresh token comes with the code grant when the client may use the ``refresh_token`` grant.
Client authentication (RFC 6749 section 2.3.1): ``client_secret_basic`` (the ``Authorization``
header, form-urlencoded id and secret), ``client_secret_post`` (``client_secret`` in the body),
``private_key_jwt`` (a signed assertion, :mod:`.client_assertion`) or ``none`` (a public client
names itself with ``client_id``). A client with a secret or keys must use them; a failure is
401 ``invalid_client``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import TypeVar
from urllib.parse import unquote

from ...transports.http.engine.exchange import HttpRequest, HttpResponder, header
from .answers import FormError, oauth_error, read_form, send_json
from .client_assertion import JWT_BEARER, asserted_client_id, check_assertion
from .clients import OAuthProblem
from .endpoint_needs import AuthorizationServerState
from .state import Client, CodeGrant, RefreshGrant

__all__ = ["authenticate_client", "handle"]

_Grant = TypeVar("_Grant", CodeGrant, RefreshGrant)


async def authenticate_client(
    server: AuthorizationServerState, request: HttpRequest, form: dict[str, str]
) -> Client:
    """The client making ``request``, authenticated; :class:`OAuthProblem` otherwise."""
    if "client_assertion_type" in form or "client_assertion" in form:
        return await _asserted_client(server, form)
    authorization = header(request.headers, b"authorization")
    secret: str | None = None
    if authorization is not None:
        scheme, _, value = authorization.decode("latin-1").partition(" ")
        if scheme.lower() != "basic":
            raise OAuthProblem("invalid_client", "unsupported client authentication")
        try:
            pair = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise OAuthProblem("invalid_client", "malformed Basic credentials") from None
        raw_id, sep, raw_secret = pair.partition(":")
        if not sep:
            raise OAuthProblem("invalid_client", "malformed Basic credentials")
        client_id, secret = unquote(raw_id), unquote(raw_secret)
        if form.get("client_id", client_id) != client_id:
            raise OAuthProblem("invalid_client", "client_id differs from the credentials")
    else:
        client_id = form.get("client_id", "")
        secret = form.get("client_secret")
    if not client_id:
        raise OAuthProblem("invalid_client", "no client_id")
    client = await server.clients.find(client_id)
    if client.jwks is not None:
        raise OAuthProblem("invalid_client", "this client authenticates with private_key_jwt")
    if client.secret is not None:
        if secret is None or not hmac.compare_digest(secret, client.secret):
            raise OAuthProblem("invalid_client", "client authentication failed")
    elif secret is not None:
        raise OAuthProblem("invalid_client", "this client has no secret")
    return client


async def _asserted_client(server: AuthorizationServerState, form: dict[str, str]) -> Client:
    if form.get("client_assertion_type") != JWT_BEARER:
        raise OAuthProblem("invalid_client", f"client_assertion_type must be {JWT_BEARER}")
    assertion = form.get("client_assertion", "")
    client_id = asserted_client_id(assertion)
    if form.get("client_id", client_id) != client_id:
        raise OAuthProblem("invalid_client", "client_id differs from the assertion's sub")
    client = await server.clients.find(client_id)
    check_assertion(server, client, assertion)
    return client


async def handle(
    server: AuthorizationServerState, request: HttpRequest, responder: HttpResponder
) -> None:
    try:
        form = await read_form(request)
    except FormError as exc:
        await oauth_error(responder, "invalid_request", str(exc))
        return
    try:
        client = await authenticate_client(server, request, form)
    except OAuthProblem as exc:
        used_basic = header(request.headers, b"authorization") is not None
        challenge = ((b"www-authenticate", b'Basic realm="token"'),) if used_basic else ()
        await oauth_error(responder, exc.error, exc.description, status=401, headers=challenge)
        return
    grant_type = form.get("grant_type", "")
    if grant_type not in client.grant_types:
        await oauth_error(
            responder, "unauthorized_client", f"this client may not use {grant_type!r}"
        )
        return
    try:
        if grant_type == "authorization_code":
            answer = _code(server, client, form)
        elif grant_type == "refresh_token":
            answer = _refresh(server, client, form)
        elif grant_type == "client_credentials":
            answer = _client_credentials(server, client, form)
        else:
            raise OAuthProblem("unsupported_grant_type", f"grant type {grant_type!r}")
    except OAuthProblem as exc:
        await oauth_error(responder, exc.error, exc.description)
        return
    await send_json(responder, 200, answer)


def _tokens(
    server: AuthorizationServerState,
    client: Client,
    subject: str,
    scopes: tuple[str, ...],
    resource: str | None,
    *,
    refresh: bool,
) -> dict[str, object]:
    access = server.issue_token(
        subject, scopes=scopes, resource=resource, client_id=client.client_id
    )
    answer: dict[str, object] = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": server.access_token_lifetime,
    }
    if scopes:
        answer["scope"] = " ".join(scopes)
    if refresh and "refresh_token" in client.grant_types:
        answer["refresh_token"] = server.memory.new_refresh(
            RefreshGrant(
                client.client_id,
                subject,
                scopes,
                resource,
                time.time() + server.refresh_token_lifetime,
            )
        )
    return answer


def _code(
    server: AuthorizationServerState, client: Client, form: dict[str, str]
) -> dict[str, object]:
    grant = _owned(server.memory.take_code(form.get("code", "")), client, "the code")
    if form.get("redirect_uri", grant.redirect_uri) != grant.redirect_uri:
        raise OAuthProblem("invalid_grant", "redirect_uri differs from the authorization request")
    verifier = form.get("code_verifier", "")
    if not 43 <= len(verifier) <= 128:
        raise OAuthProblem("invalid_grant", "code_verifier is missing or malformed")
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    computed = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    if not hmac.compare_digest(computed, grant.code_challenge):
        raise OAuthProblem("invalid_grant", "code_verifier does not match the code_challenge")
    resource = _granted_resource(form, grant.resource, "the authorization request")
    return _tokens(server, client, grant.subject, grant.scopes, resource, refresh=True)


def _refresh(
    server: AuthorizationServerState, client: Client, form: dict[str, str]
) -> dict[str, object]:
    grant = _owned(
        server.memory.take_refresh(form.get("refresh_token", "")), client, "the refresh token"
    )
    scopes = grant.scopes
    if "scope" in form:
        asked = tuple(form["scope"].split())
        if not set(asked) <= set(grant.scopes):
            raise OAuthProblem("invalid_scope", "a refresh cannot widen the scope")
        scopes = asked
    resource = _granted_resource(form, grant.resource, "the original grant")
    return _tokens(server, client, grant.subject, scopes, resource, refresh=True)


def _owned(grant: _Grant | None, client: Client, what: str) -> _Grant:
    """``grant``, taken from the server's memory (so used once), which must be ``client``'s."""
    if grant is None or grant.client_id != client.client_id:
        raise OAuthProblem("invalid_grant", f"{what} is unknown, used or expired")
    return grant


def _granted_resource(form: dict[str, str], granted: str | None, origin: str) -> str | None:
    """The resource the token is for: the one asked for, which must be the one granted (when
    the grant named one); ``origin`` says where the grant's came from."""
    resource = form.get("resource", granted)
    if granted is not None and resource != granted:
        raise OAuthProblem("invalid_target", f"resource differs from {origin}")
    return resource


def _client_credentials(
    server: AuthorizationServerState, client: Client, form: dict[str, str]
) -> dict[str, object]:
    if client.public:
        raise OAuthProblem("unauthorized_client", "client_credentials needs a confidential client")
    scopes = tuple(form.get("scope", client.scope or "").split())
    unknown = [s for s in scopes if s not in server.scopes]
    if unknown:
        raise OAuthProblem("invalid_scope", f"unknown scope {' '.join(unknown)}")
    if client.scope is not None:
        registered = client.scope.split()
        beyond = [s for s in scopes if s not in registered]
        if beyond:
            raise OAuthProblem(
                "invalid_scope",
                f"scope {' '.join(beyond)} is not in this client's registered scope",
            )
    resource = form.get("resource")
    return _tokens(server, client, client.client_id, scopes, resource, refresh=False)
