"""A development OAuth 2.1 authorization server on trio: :class:`DevAuthorizationServer`.

It is an :class:`~mcptrio.transports.http.engine.exchange.HttpApp`, served by mcptrio's
built-in HTTP server in your nursery::

    auth = DevAuthorizationServer()
    issuer = await nursery.start(auth.serve)        # http://127.0.0.1:<port>

It has what an MCP client and a protected MCP server need, and nothing a production server
would add (persistence, consent records, rate limits beyond the login form's, key rotation
schedules):

- ``/.well-known/oauth-authorization-server`` and ``/.well-known/openid-configuration``:
  RFC 8414 metadata (PKCE ``S256`` only, Client ID Metadata Documents, RFC 9207 ``iss``);
- ``/authorize``: the authorization code grant with PKCE. With ``auto_approve`` (the default)
  it approves at once, for tests and headless clients, as the user ``login_hint`` names or
  ``default_subject``; with ``users`` it shows a login form (its posts bound to the browser
  and request that opened it, wrong passwords throttled per name and address, see
  :mod:`.login_forms` and :mod:`.login_throttle`);
- ``/token``: ``authorization_code``, ``refresh_token`` (rotated on each use) and
  ``client_credentials``; client authentication ``none``, ``client_secret_basic``,
  ``client_secret_post`` and ``private_key_jwt``;
- ``/register``: Dynamic Client Registration (RFC 7591), open to anyone for the grants a user
  approves (``client_credentials`` only with ``dynamic_registration_grant_types``);
  ``client_id`` URLs are Client ID Metadata Documents (see :mod:`.clients`);
- ``/jwks``: the public key its access tokens (ES256 JWTs, RFC 9068 shape) are signed with;
- ``/introspect``: RFC 7662, for clients registered with a secret.

Every JSON endpoint allows any origin (CORS, with answers to preflights), since browser-based
clients call them cross-origin and none of them uses cookies.

Access tokens carry ``iss``, ``sub``, ``aud`` (the ``resource`` the client asked for, RFC 8707),
``client_id``, ``scope``, ``iat``, ``exp`` and ``jti``. :meth:`DevAuthorizationServer.verifier`
gives the matching :class:`~mcptrio.auth.server.JwtVerifier`, and
:meth:`DevAuthorizationServer.issue_token` mints a token directly (for tests).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

import trio
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from ...transports.http.engine.builtin_server import serve_builtin
from ...transports.http.engine.exchange import HttpRequest, HttpResponder, WebSocketPeer
from ..metadata import AuthorizationServerMetadata, check_url, encode_document
from ..server.jwt_verifier import JwtVerifier
from . import authorize, token_endpoint
from .answers import PREFLIGHT, FormError, oauth_error, read_form, read_json, send_json
from .clients import GRANTS, USER_GRANTS, Clients, OAuthProblem
from .login_forms import LoginForms
from .login_throttle import LoginThrottle
from .state import Client, Memory

__all__ = ["DevAuthorizationServer"]


class DevAuthorizationServer:
    """A development authorization server; see the module docstring.

    - ``issuer``: its URL; by default the address :meth:`serve` binds (``http://127.0.0.1:N``).
    - ``scopes``: the scopes it lists (and grants: a request for any other is refused).
    - ``auto_approve``, ``users`` (name -> password), ``default_subject``: how ``/authorize``
      decides who the user is (module docstring).
    - ``access_token_lifetime``, ``refresh_token_lifetime``, ``code_lifetime``: seconds.
    - ``dynamic_registration_grant_types``: the grants anyone may register a client for; by
      default those a user approves. Adding ``client_credentials`` lets any caller make itself
      a machine client with the scope it registers.
    - ``login_throttle``: how many wrong passwords the login form takes per user name and per
      client address (default: :class:`LoginThrottle`'s, 5 and 20 in 15 minutes).
    """

    def __init__(
        self,
        issuer: str | None = None,
        *,
        scopes: Iterable[str] = ("mcp", "offline_access"),
        auto_approve: bool = True,
        users: Mapping[str, str] | None = None,
        default_subject: str = "dev-user",
        access_token_lifetime: int = 3600,
        refresh_token_lifetime: int = 30 * 24 * 3600,
        code_lifetime: int = 60,
        dynamic_registration_grant_types: Iterable[str] = USER_GRANTS,
        login_throttle: LoginThrottle | None = None,
    ) -> None:
        if issuer is not None:
            check_url(issuer, "issuer", issuer=True)
        if not auto_approve and not users:
            raise ValueError("without auto_approve, give users (name -> password) to log in")
        open_grants = tuple(dynamic_registration_grant_types)
        unknown = [grant for grant in open_grants if grant not in GRANTS]
        if unknown:
            raise ValueError(f"dynamic_registration_grant_types: {unknown} are not grants it has")
        self._issuer = issuer.rstrip("/") if issuer is not None else None
        self.scopes = tuple(scopes)
        self.auto_approve = auto_approve
        self.users = dict(users or {})
        self.default_subject = default_subject
        self.access_token_lifetime = access_token_lifetime
        self.refresh_token_lifetime = refresh_token_lifetime
        self.code_lifetime = code_lifetime
        self.memory = Memory()
        self.clients = Clients(self.memory, dynamic_registration_grant_types=open_grants)
        self._key = ECKey.generate_key("P-256", auto_kid=True)
        #: The login forms shown, each with a token bound to its browser and request.
        self.login_forms = LoginForms()
        #: How many wrong passwords the login form takes (see :class:`LoginThrottle`).
        self.login_throttle = LoginThrottle() if login_throttle is None else login_throttle

    # ------------------------------------------------------------------ identity

    @property
    def issuer(self) -> str:
        """The issuer URL (known once :meth:`serve` has bound, unless given)."""
        if self._issuer is None:
            raise RuntimeError("the issuer is known once serve() has started (or pass issuer=)")
        return self._issuer

    def url(self, path: str) -> str:
        return self.issuer + path

    def metadata(self) -> AuthorizationServerMetadata:
        """The RFC 8414 metadata document."""
        return AuthorizationServerMetadata(
            issuer=self.issuer,
            authorization_endpoint=self.url("/authorize"),
            token_endpoint=self.url("/token"),
            registration_endpoint=self.url("/register"),
            jwks_uri=self.url("/jwks"),
            introspection_endpoint=self.url("/introspect"),
            scopes_supported=list(self.scopes),
            response_types_supported=["code"],
            response_modes_supported=["query"],
            grant_types_supported=["authorization_code", "refresh_token", "client_credentials"],
            token_endpoint_auth_methods_supported=[
                "none",
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
            ],
            token_endpoint_auth_signing_alg_values_supported=["ES256", "RS256", "PS256", "EdDSA"],
            introspection_endpoint_auth_methods_supported=["client_secret_basic"],
            code_challenge_methods_supported=["S256"],
            authorization_response_iss_parameter_supported=True,
            client_id_metadata_document_supported=True,
            subject_types_supported=["public"],
        )

    def jwks(self) -> dict[str, Any]:
        """The public key set (JWKS) tokens are signed with."""
        public = self._key.as_dict(private=False)
        return {"keys": [{**public, "use": "sig", "alg": "ES256"}]}

    def verifier(self, **options: Any) -> JwtVerifier:
        """A :class:`~mcptrio.auth.server.JwtVerifier` for this server's tokens (its JWKS
        fetched from ``/jwks``); ``options`` go to the verifier."""
        return JwtVerifier(self.issuer, self.url("/jwks"), **options)

    def register_client(
        self,
        *,
        redirect_uris: Iterable[str] = (),
        secret: str | None = None,
        grant_types: Iterable[str] = ("authorization_code", "refresh_token"),
        client_id: str | None = None,
        jwks: dict[str, Any] | None = None,
        scope: str | None = None,
    ) -> Client:
        """Pre-register a client: a public one, or one that authenticates with ``secret``, or
        with a JWT signed by a key of ``jwks`` (``private_key_jwt``). ``scope`` bounds what it
        gets with ``client_credentials``; ``None`` trusts it with any of the server's scopes."""
        return self.clients.add(
            Client(
                client_id=client_id or secrets.token_urlsafe(16),
                redirect_uris=tuple(redirect_uris),
                secret=secret,
                grant_types=tuple(grant_types),
                jwks=jwks,
                scope=scope,
            )
        )

    def issue_token(
        self,
        subject: str,
        *,
        scopes: Iterable[str] = (),
        resource: str | Iterable[str] | None = None,
        client_id: str = "dev-client",
        lifetime: int | None = None,
        dpop_jkt: str | None = None,
    ) -> str:
        """A signed access token, as ``/token`` would issue it (for tests and tools); with
        ``dpop_jkt``, bound to the DPoP key of that thumbprint (``cnf.jkt``, RFC 9449)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "client_id": client_id,
            "iat": now,
            "exp": now + (self.access_token_lifetime if lifetime is None else lifetime),
            "jti": secrets.token_urlsafe(12),
        }
        scope = " ".join(scopes)
        if scope:
            claims["scope"] = scope
        if resource is not None:
            claims["aud"] = resource if isinstance(resource, str) else list(resource)
        if dpop_jkt is not None:
            claims["cnf"] = {"jkt": dpop_jkt}
        header = {"alg": "ES256", "kid": self._key.kid, "typ": "at+jwt"}
        return jwt.encode(header, claims, self._key)

    def read_token(self, token: str) -> dict[str, Any] | None:
        """The claims of one of this server's unexpired tokens; ``None`` for anything else."""
        try:
            claims = jwt.decode(token, self._key, algorithms=["ES256"]).claims
        except (JoseError, ValueError, TypeError):
            return None
        if claims.get("iss") != self.issuer or claims.get("exp", 0) < time.time():
            return None
        return claims

    # ------------------------------------------------------------------ serving

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve until cancelled; reports the issuer URL once listening."""
        try:
            async with trio.open_nursery() as nursery:
                url = await nursery.start(partial(serve_builtin, self, host=host, port=port))
                if self._issuer is None:
                    self._issuer = url
                task_status.started(self.issuer)
        finally:
            with trio.CancelScope(shield=True):
                await self.clients.aclose()

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await peer.reject(404, b"No WebSocket endpoint here")

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        path = request.path.rstrip("/") or "/"
        method = request.method
        if method == "OPTIONS" and path != "/authorize":
            await responder.send_response(204, PREFLIGHT)
        elif path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            if method != "GET":
                await oauth_error(responder, "invalid_request", "use GET", status=405)
                return
            await send_json(responder, 200, encode_document(self.metadata()))
        elif path == "/jwks":
            await send_json(responder, 200, self.jwks())
        elif path == "/authorize" and method in ("GET", "POST"):
            await authorize.handle(self, request, responder)
        elif path == "/token" and method == "POST":
            await token_endpoint.handle(self, request, responder)
        elif path == "/register" and method == "POST":
            await self._register(request, responder)
        elif path == "/introspect" and method == "POST":
            await self._introspect(request, responder)
        else:
            await oauth_error(responder, "not_found", f"no endpoint {method} {path}", status=404)

    async def _register(self, request: HttpRequest, responder: HttpResponder) -> None:
        try:
            body = await read_json(request)
            information = self.clients.register(body)
        except FormError as exc:
            await oauth_error(responder, "invalid_client_metadata", str(exc))
            return
        except OAuthProblem as exc:
            await oauth_error(responder, exc.error, exc.description)
            return
        await send_json(responder, 201, encode_document(information))

    async def _introspect(self, request: HttpRequest, responder: HttpResponder) -> None:
        try:
            form = await read_form(request)
            client = await token_endpoint.authenticate_client(self, request, form)
        except FormError as exc:
            await oauth_error(responder, "invalid_request", str(exc))
            return
        except OAuthProblem as exc:
            await oauth_error(responder, exc.error, exc.description, status=401)
            return
        if client.public:
            await oauth_error(
                responder, "invalid_client", "introspection needs client authentication", status=401
            )
            return
        claims = self.read_token(form.get("token", ""))
        await send_json(responder, 200, {"active": True, **claims} if claims else {"active": False})
