"""A small, real OAuth authorization server and protected resource for the client's tests.

One :class:`OAuthPeer` is an :class:`~mcptrio.transports.http.engine.exchange.HttpApp` served on
loopback by mcptrio's built-in HTTP server. It plays both parts, as the conformance suite's do:

- the **protected resource**: its Protected Resource Metadata, and ``/mcp`` (plus ``/mcp/admin``
  needing the ``admin`` scope), which check the token (Bearer or DPoP, with the proof's ``ath``
  and ``cnf.jkt`` binding and a nonce when asked) and then either answer a small JSON document or
  hand the request to a real MCP server's HTTP app (``inner``);
- the **authorization server**: metadata, ``/authorize`` (consents at once: a redirect with
  ``code``, ``state`` and ``iss``), ``/token`` (authorization code with PKCE, refresh,
  client credentials), ``/register`` (DCR).

:class:`Behaviour` makes it misbehave in one way at a time, for the bad-input tests; every
request is recorded in :attr:`OAuthPeer.seen`.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import msgspec
from joserfc import jws, jwt
from joserfc.jwk import import_key

from mcptrio.transports.http.engine.exchange import HttpApp, HttpRequest, HttpResponder, header

JSON = [(b"content-type", b"application/json")]


@dataclass
class Behaviour:
    prm_scopes: list[str] | None = None
    challenge_scope: str | None = None
    as_scopes: list[str] | None = None
    prm_resource: str | None = None
    authorization_servers: list[str] | None = None
    metadata_issuer: str | None = None
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    iss_supported: bool = True
    iss_in_redirect: str | None = "correct"
    oversized_metadata: bool = False
    metadata_redirect: str | None = None
    token_answer: bytes | None = None
    issue_refresh: bool = True
    dpop: bool = False
    resource_nonce: str | None = None
    auth_methods: list[str] = field(default_factory=lambda: ["none", "client_secret_basic"])
    expires_in: int = 3600
    #: The PRM names the whole host (``/``) rather than ``/mcp``.
    prm_at_root: bool = False
    cimd: bool = False
    #: The resource refuses every token, however fresh.
    refuse_all: bool = False


@dataclass
class Token:
    scopes: list[str]
    jkt: str | None = None
    valid: bool = True


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class OAuthPeer:
    """See the module's docstring; :attr:`url` is set by the test once serving."""

    def __init__(self, behaviour: Behaviour | None = None, inner: HttpApp | None = None) -> None:
        self.behaviour = behaviour or Behaviour()
        self.inner = inner
        self.url = ""
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.tokens: dict[str, Token] = {}
        self.refresh_tokens: dict[str, list[str]] = {}
        self.codes: dict[str, tuple[str, list[str], str]] = {}
        self.clients: dict[str, str | None] = {}
        self._ids = itertools.count(1)

    # ------------------------------------------------------------ helpers

    def paths(self, path: str) -> list[dict[str, str]]:
        return [params for _, seen_path, params in self.seen if seen_path == path]

    @property
    def issuer(self) -> str:
        return self.url

    def metadata(self) -> dict[str, Any]:
        b = self.behaviour
        document: dict[str, Any] = {
            "issuer": b.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "registration_endpoint": f"{self.url}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": b.auth_methods,
            "authorization_response_iss_parameter_supported": b.iss_supported,
        }
        if b.pkce_methods is not None:
            document["code_challenge_methods_supported"] = b.pkce_methods
        if b.as_scopes is not None:
            document["scopes_supported"] = b.as_scopes
        if b.cimd:
            document["client_id_metadata_document_supported"] = True
        if b.dpop:
            document["dpop_signing_alg_values_supported"] = ["ES256"]
        if b.oversized_metadata:
            document["padding"] = "x" * 400_000
        return document

    def challenge(self, error: str | None = None, scope: str | None = None) -> bytes:
        parts = [f'resource_metadata="{self.url}/.well-known/oauth-protected-resource/mcp"']
        scope = scope or self.behaviour.challenge_scope
        if scope:
            parts.append(f'scope="{scope}"')
        if error:
            parts.append(f'error="{error}"')
        scheme = "DPoP" if self.behaviour.dpop else "Bearer"
        return f"{scheme} {', '.join(parts)}".encode()

    async def _json(self, responder: HttpResponder, status: int, document: Any) -> None:
        await responder.send_response(status, JSON, msgspec.json.encode(document))

    # ------------------------------------------------------------ HttpApp

    async def handle_websocket(self, request: HttpRequest, peer: Any) -> None:
        await peer.reject(404)

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        path = request.path
        body = await request.read_body(1 << 20)
        params = dict(parse_qsl(request.query_string.decode()))
        if header(request.headers, b"content-type") == b"application/x-www-form-urlencoded":
            params.update(parse_qsl(body.decode()))
        self.seen.append((request.method, path, params))
        b = self.behaviour
        if path == "/.well-known/oauth-protected-resource/mcp":
            document: dict[str, Any] = {
                "resource": b.prm_resource or (self.url if b.prm_at_root else f"{self.url}/mcp"),
                "authorization_servers": b.authorization_servers or [self.issuer],
            }
            if b.prm_scopes is not None:
                document["scopes_supported"] = b.prm_scopes
            await self._json(responder, 200, document)
        elif path == "/.well-known/oauth-authorization-server":
            if b.metadata_redirect is not None:
                await responder.send_response(302, [(b"location", b.metadata_redirect.encode())])
            else:
                await self._json(responder, 200, self.metadata())
        elif path == "/authorize":
            await self._authorize(params, responder)
        elif path == "/token":
            await self._token(request, params, responder)
        elif path == "/idp/token":
            await self._exchange(params, responder)
        elif path == "/register":
            await self._register(body, responder)
        elif path in ("/mcp", "/mcp/admin", "/sse", "/messages"):
            await self._protected(request, body, responder)
        else:
            await responder.send_response(404, [], b"not found")

    async def _authorize(self, params: dict[str, str], responder: HttpResponder) -> None:
        code = f"code-{next(self._ids)}"
        scopes = params.get("scope", "").split()
        self.codes[code] = (params.get("code_challenge", ""), scopes, params["redirect_uri"])
        answer = {"code": code, "state": params.get("state", "")}
        iss = self.behaviour.iss_in_redirect
        if iss == "correct":
            answer["iss"] = self.issuer
        elif iss is not None:
            answer["iss"] = iss
        location = f"{params['redirect_uri']}?{urlencode(answer)}"
        await responder.send_response(302, [(b"location", location.encode())])

    def _issue(self, scopes: list[str], jkt: str | None) -> dict[str, Any]:
        token = f"tok-{next(self._ids)}"
        self.tokens[token] = Token(scopes, jkt)
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "DPoP" if jkt else "Bearer",
            "expires_in": self.behaviour.expires_in,
            "scope": " ".join(scopes),
        }
        if self.behaviour.issue_refresh:
            refresh = f"refresh-{next(self._ids)}"
            self.refresh_tokens[refresh] = scopes
            answer["refresh_token"] = refresh
        return answer

    async def _token(
        self, request: HttpRequest, params: dict[str, str], responder: HttpResponder
    ) -> None:
        if self.behaviour.token_answer is not None:
            await responder.send_response(200, JSON, self.behaviour.token_answer)
            return
        jkt = None
        proof = header(request.headers, b"dpop")
        if proof is not None:
            jwk = jws.extract_compact(proof).protected["jwk"]
            key = import_key(jwk)
            jwt.decode(proof.decode(), key)
            jkt = key.thumbprint()
        grant = params.get("grant_type")
        if grant == "authorization_code":
            challenge, scopes, redirect_uri = self.codes.pop(params.get("code", ""), ("", [], ""))
            if not challenge or _s256(params.get("code_verifier", "")) != challenge:
                await self._json(responder, 400, {"error": "invalid_grant"})
                return
            if params.get("redirect_uri") != redirect_uri:
                await self._json(responder, 400, {"error": "invalid_grant"})
                return
            await self._json(responder, 200, self._issue(scopes, jkt))
        elif grant == "refresh_token":
            scopes = self.refresh_tokens.pop(params.get("refresh_token", ""), None)
            if scopes is None:
                await self._json(responder, 400, {"error": "invalid_grant"})
                return
            await self._json(responder, 200, self._issue(scopes, jkt))
        elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            assertion = params.get("assertion", "")
            if assertion not in ("workload-jwt", "id-jag-for-" + self.issuer):
                await self._json(responder, 400, {"error": "invalid_grant"})
                return
            await self._json(responder, 200, self._issue(params.get("scope", "").split(), jkt))
        elif grant == "client_credentials":
            auth = header(request.headers, b"authorization") or b""
            pair = base64.b64decode(auth.removeprefix(b"Basic ")).decode()
            client_id, _, secret = pair.partition(":")
            if not auth.startswith(b"Basic ") or self.clients.get(client_id) != secret:
                await self._json(responder, 401, {"error": "invalid_client"})
                return
            await self._json(responder, 200, self._issue(params.get("scope", "").split(), jkt))
        else:
            await self._json(responder, 400, {"error": "unsupported_grant_type"})

    async def _exchange(self, params: dict[str, str], responder: HttpResponder) -> None:
        """The enterprise IdP: an ID token for an ID-JAG naming the audience it is for."""
        if params.get("subject_token") != "sso-id-token" or params.get("audience") is None:
            await self._json(responder, 400, {"error": "invalid_grant"})
            return
        answer = {
            "access_token": f"id-jag-for-{params['audience']}",
            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "token_type": "N_A",
        }
        await self._json(responder, 200, answer)

    async def _register(self, body: bytes, responder: HttpResponder) -> None:
        document = msgspec.json.decode(body)
        client_id = f"client-{id(self)}-{next(self._ids)}"
        self.clients[client_id] = None
        self.seen[-1] = ("POST", "/register", {k: str(v) for k, v in document.items()})
        await self._json(responder, 201, {**document, "client_id": client_id})

    async def _protected(self, request: HttpRequest, body: bytes, responder: HttpResponder) -> None:
        authorization = (header(request.headers, b"authorization") or b"").decode()
        scheme, _, value = authorization.partition(" ")
        token = self.tokens.get(value)
        if token is None or not token.valid or self.behaviour.refuse_all:
            await responder.send_response(
                401, [(b"www-authenticate", self.challenge())], b'{"error":"invalid_token"}'
            )
            return
        if token.jkt is not None:
            error = self._check_proof(request, value, token.jkt, scheme)
            if error == "use_dpop_nonce":
                headers = [
                    (b"www-authenticate", self.challenge("use_dpop_nonce")),
                    (b"dpop-nonce", (self.behaviour.resource_nonce or "").encode()),
                ]
                await responder.send_response(401, headers, b"")
                return
            if error is not None:
                await responder.send_response(401, [], error.encode())
                return
        if request.path == "/mcp/admin" and "admin" not in token.scopes:
            challenge = self.challenge("insufficient_scope", "admin")
            await responder.send_response(403, [(b"www-authenticate", challenge)], b"")
            return
        if self.inner is not None:
            await self.inner.handle_http(_Replayed(request, body), responder)
            return
        await self._json(responder, 200, {"scopes": token.scopes, "scheme": scheme})

    def _check_proof(self, request: HttpRequest, token: str, jkt: str, scheme: str) -> str | None:
        proof = header(request.headers, b"dpop")
        if scheme != "DPoP" or proof is None:
            return "not a DPoP request"
        key = import_key(jws.extract_compact(proof).protected["jwk"])
        claims = jwt.decode(proof.decode(), key).claims
        digest = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=")
        if key.thumbprint() != jkt or claims.get("ath") != digest.decode():
            return "proof does not match the token"
        wanted = self.behaviour.resource_nonce
        if wanted is not None and claims.get("nonce") != wanted:
            return "use_dpop_nonce"
        return None


class _Replayed:
    """A request whose body was read already, handed on to the inner app."""

    def __init__(self, request: HttpRequest, body: bytes) -> None:
        self._request = request
        self._body = body
        self.method = request.method
        self.path = request.path
        self.query_string = request.query_string
        self.headers = request.headers
        self.client = request.client
        self.scheme = request.scheme

    async def read_body(self, limit: int) -> bytes:
        return self._body
