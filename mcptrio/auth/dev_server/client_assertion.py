"""``private_key_jwt`` client authentication (RFC 7523 section 2.2, RFC 7521) for the
development authorization server.

A client registered with a public key set (``jwks``) authenticates at the token endpoint with a
JWT it signs: ``client_assertion_type`` is ``urn:ietf:params:oauth:client-assertion-type:
jwt-bearer`` and ``client_assertion`` the JWT. The assertion must be signed by one of the
client's keys with an asymmetric algorithm, have ``iss`` and ``sub`` equal to the client id,
name the token endpoint (or the issuer) in ``aud``, expire within five minutes (and not have
expired, 30 seconds of leeway), and carry a ``jti`` that is not used again while it is valid.
This is the JWT form of SEP-1046's client credentials.
"""

from __future__ import annotations

import json
import time
from typing import Any, Final

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from .clients import OAuthProblem
from .endpoint_needs import AuthorizationServerState
from .state import Client

__all__ = ["JWT_BEARER", "asserted_client_id", "check_assertion"]

JWT_BEARER: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_ALGORITHMS: Final = ("ES256", "ES384", "RS256", "RS384", "PS256", "EdDSA")
_MAX_LIFETIME: Final = 300
_LEEWAY: Final = 30


def asserted_client_id(assertion: str) -> str:
    """The ``sub`` the (not yet verified) assertion names: whose keys to check it with."""
    try:
        payload = jws.extract_compact(assertion.encode("ascii")).payload
        claims = json.loads(payload)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise OAuthProblem("invalid_client", "client_assertion is not a JWT") from None
    subject = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(subject, str) or not subject:
        raise OAuthProblem("invalid_client", "client_assertion names no sub")
    return subject


def check_assertion(server: AuthorizationServerState, client: Client, assertion: str) -> None:
    """Raise :class:`OAuthProblem` (``invalid_client``) unless ``assertion`` authenticates
    ``client`` (see the module docstring)."""
    if client.jwks is None:
        raise OAuthProblem("invalid_client", "this client has no keys for private_key_jwt")
    try:
        keys = KeySet.import_key_set(client.jwks)  # type: ignore[arg-type]
        claims: dict[str, Any] = jwt.decode(assertion, keys, algorithms=_ALGORITHMS).claims
    except (JoseError, ValueError, TypeError, KeyError):
        raise OAuthProblem("invalid_client", "client_assertion signature is not valid") from None
    if claims.get("iss") != client.client_id or claims.get("sub") != client.client_id:
        raise OAuthProblem("invalid_client", "client_assertion iss and sub must be the client id")
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if not {server.url("/token"), server.issuer} & set(audiences):
        raise OAuthProblem("invalid_client", "client_assertion aud must name the token endpoint")
    now = time.time()
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or exp + _LEEWAY < now or exp > now + _MAX_LIFETIME:
        raise OAuthProblem("invalid_client", "client_assertion exp is missing, past or too far")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti:
        raise OAuthProblem("invalid_client", "client_assertion has no jti")
    seen = (client.client_id, jti)
    if server.memory.assertions.get(seen) is not None:
        raise OAuthProblem("invalid_client", "client_assertion was used before")
    server.memory.assertions.put(seen, exp)
