"""Talking to the token endpoint: client authentication, DPoP, and reading the answer strictly.

**Client authentication** (RFC 6749 §2.3, RFC 7523 §2.2), by the registration's method:

- ``none``: ``client_id`` in the form (a public client);
- ``client_secret_basic``: ``Authorization: Basic`` with the form-encoded id and secret;
- ``client_secret_post``: ``client_id`` and ``client_secret`` in the form;
- ``private_key_jwt``: a ``client_assertion`` JWT signed with the client's key, whose ``iss`` and
  ``sub`` are the client id and whose ``aud`` is the authorization server's issuer.

A registration that names no method gets the first the server supports of ``client_secret_basic``
and ``client_secret_post`` when it has a secret (``client_secret_basic`` when the server does not
say, RFC 8414's default), ``none`` otherwise.

**DPoP**: with a :class:`~.dpop.DpopKey`, each token request carries a fresh proof; a ``400
use_dpop_nonce`` answer with a ``DPoP-Nonce`` is retried once with that nonce (RFC 9449 §8).

**Answers** are read as RFC 6749 §5 says, and anything else is a :class:`TokenError`: an error
object (its ``error`` code is kept; its description is quoted, cut short), a body that is not a
JSON object, no ``access_token``, a ``token_type`` that is neither ``Bearer`` nor ``DPoP``, a
``DPoP`` token the client did not ask to bind, an ``expires_in`` that is not a positive integer.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from joserfc import jwt
from joserfc.jwk import import_key

from ...transports.http.engine.client_pool import HttpClientPool
from .discovery import AuthorizationServer
from .dpop import DpopKey, DpopNonces
from .errors import AuthorizationError, TokenError
from .fetch import post_form
from .store import ClientRegistration, Tokens

__all__ = [
    "ClientKey",
    "auth_method_for",
    "request_tokens",
]

#: How long a client assertion is valid (RFC 7523 asks for a short life).
ASSERTION_LIFETIME = 300
_DESCRIPTION_LIMIT = 200


@dataclass(frozen=True, slots=True)
class ClientKey:
    """The private key (PEM or JWK) a ``private_key_jwt`` client signs its assertions with."""

    key: str | dict[str, Any]
    algorithm: str = "ES256"
    #: The ``kid`` to put in the assertion's header, if the server needs one.
    key_id: str | None = None

    def assertion(self, client_id: str, audience: str) -> str:
        key = import_key(self.key, _key_type(self.algorithm))
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": secrets.token_urlsafe(24),
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
        }
        header: dict[str, Any] = {"alg": self.algorithm, "typ": "JWT"}
        if self.key_id is not None:
            header["kid"] = self.key_id
        return jwt.encode(header, claims, key, algorithms=[self.algorithm])


def _key_type(algorithm: str) -> Literal["EC", "RSA", "OKP"]:
    if algorithm.startswith("ES"):
        return "EC"
    if algorithm.startswith(("RS", "PS")):
        return "RSA"
    if algorithm in ("EdDSA", "Ed25519"):
        return "OKP"
    raise ValueError(f"Unsupported client assertion algorithm {algorithm!r}")


def auth_method_for(
    registration: ClientRegistration, server: AuthorizationServer, key: ClientKey | None
) -> str:
    """The token endpoint authentication method to use (see the module's docstring)."""
    if registration.token_endpoint_auth_method:
        return registration.token_endpoint_auth_method
    supported = server.token_endpoint_auth_methods_supported
    if key is not None and (supported is None or "private_key_jwt" in supported):
        return "private_key_jwt"
    if registration.client_secret:
        if supported is None:
            return "client_secret_basic"
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "client_secret_basic"
    return "none"


def _authenticate(
    form: dict[str, str],
    headers: list[tuple[str, str]],
    registration: ClientRegistration,
    method: str,
    server: AuthorizationServer,
    key: ClientKey | None,
) -> None:
    client_id = registration.client_id
    secret = registration.client_secret
    if method == "client_secret_basic":
        if secret is None:
            raise AuthorizationError("client_secret_basic needs a client secret")
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        encoded = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        headers.append(("authorization", f"Basic {encoded}"))
    elif method == "client_secret_post":
        if secret is None:
            raise AuthorizationError("client_secret_post needs a client secret")
        form["client_id"] = client_id
        form["client_secret"] = secret
    elif method == "private_key_jwt":
        if key is None:
            raise AuthorizationError("private_key_jwt needs the client's private key")
        form["client_id"] = client_id
        form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        form["client_assertion"] = key.assertion(client_id, server.issuer)
    elif method == "none":
        form["client_id"] = client_id
    else:
        raise AuthorizationError(f"Unsupported token endpoint authentication method {method!r}")


def _short(text: object) -> str:
    value = str(text)
    return value if len(value) <= _DESCRIPTION_LIMIT else value[:_DESCRIPTION_LIMIT] + "..."


def read_token_response(
    status: int,
    document: Mapping[str, Any] | None,
    *,
    issuer: str,
    resource: str,
    requested_scopes: tuple[str, ...],
    dpop: DpopKey | None,
) -> Tokens:
    """The :class:`Tokens` of a token endpoint answer, or a :class:`TokenError`."""
    if document is None:
        raise TokenError(f"The token endpoint answered HTTP {status} without a JSON object")
    if status != 200:
        error = document.get("error")
        code = error if isinstance(error, str) else None
        description = document.get("error_description")
        detail = f": {_short(description)}" if isinstance(description, str) else ""
        raise TokenError(
            f"The token endpoint refused (HTTP {status}, {code or 'no error code'}){detail}",
            error=code,
        )
    access_token = document.get("access_token")
    token_type = document.get("token_type")
    if not isinstance(access_token, str) or not access_token:
        raise TokenError("The token response has no access_token")
    if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "dpop"):
        raise TokenError(f"The token response has an unusable token_type {_short(token_type)!r}")
    bound = token_type.lower() == "dpop"
    if bound and dpop is None:
        raise TokenError("The token endpoint issued a DPoP token the client did not ask for")
    expires_in = document.get("expires_in")
    if expires_in is not None and (
        isinstance(expires_in, bool) or not isinstance(expires_in, int) or expires_in <= 0
    ):
        raise TokenError(f"The token response has an invalid expires_in {_short(expires_in)!r}")
    refresh_token = document.get("refresh_token")
    if refresh_token is not None and not isinstance(refresh_token, str):
        raise TokenError("The token response has a refresh_token that is not a string")
    scope = document.get("scope")
    scopes = tuple(scope.split()) if isinstance(scope, str) else requested_scopes
    return Tokens(
        access_token=access_token,
        token_type="DPoP" if bound else "Bearer",
        expires_at=None if expires_in is None else time.time() + expires_in,
        refresh_token=refresh_token,
        scopes=scopes,
        issuer=issuer,
        resource=resource,
        dpop_key=dpop.private_jwk() if bound and dpop is not None else None,
    )


async def request_tokens(
    http: HttpClientPool,
    server: AuthorizationServer,
    form: Mapping[str, str],
    *,
    registration: ClientRegistration | None,
    resource: str,
    requested_scopes: tuple[str, ...] = (),
    key: ClientKey | None = None,
    dpop: DpopKey | None = None,
    nonces: DpopNonces | None = None,
) -> Tokens:
    """POST ``form`` to the token endpoint, authenticated as ``registration`` (a client with
    no registration, such as a workload with its own assertion, sends none)."""
    url = server.token_endpoint
    answer = None
    for _ in range(2):
        body = dict(form)
        headers: list[tuple[str, str]] = []
        if registration is not None:
            method = auth_method_for(registration, server, key)
            _authenticate(body, headers, registration, method, server, key)
        if dpop is not None:
            nonce = nonces.get(url) if nonces is not None else None
            headers.append(("dpop", dpop.proof("POST", url, nonce=nonce)))
        answer = await post_form(http, url, body, headers=headers)
        nonce_header = answer.header(b"dpop-nonce")
        if dpop is not None and nonces is not None and nonce_header:
            fresh = nonces.put(url, nonce_header)
            error = (answer.document or {}).get("error")
            if answer.status in (400, 401) and error == "use_dpop_nonce" and fresh:
                continue
        break
    assert answer is not None
    return read_token_response(
        answer.status,
        answer.document,
        issuer=server.issuer,
        resource=resource,
        requested_scopes=requested_scopes,
        dpop=dpop,
    )
