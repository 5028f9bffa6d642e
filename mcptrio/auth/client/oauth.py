"""The OAuth client every HTTP client transport can use: :class:`OAuthClient`.

It implements :class:`~mcptrio.transports.http.client.auth_hook.HttpAuth`: it puts the access
token on every request, and when the MCP server refuses one it works out why and what to do:

- **401** (no token, or one the server no longer takes): discover who issues tokens (the
  challenge's ``resource_metadata``, else the well-known URIs, else the 2025-03-26 assumption;
  see :mod:`.discovery`), then refresh the token when there is a refresh token for the same
  authorization server, else obtain one with the configured :class:`~.grants.Grant`. When the
  server's metadata now names another authorization server, its old tokens and registration are
  not used there (SEP-2352).
- **403 ``insufficient_scope``**: step up: obtain a token for the union of the scopes asked
  before and those the challenge names (SEP-2350). A step-up happens only when it can help: the
  challenge names a scope not asked for yet, or one asked for but not granted, once. Otherwise
  :class:`~.errors.InsufficientScope` is raised, so a server that is never satisfied cannot make
  the client loop (and :data:`~mcptrio.transports.http.client.auth_hook.MAX_ATTEMPTS` bounds
  every request anyway).
- **``use_dpop_nonce``**: the request is sent again with the server's nonce (RFC 9449 §9).

**Scopes** (SEP-835): those of the challenge, else every ``scopes_supported`` of the PRM, else
no ``scope`` parameter. ``offline_access`` is added when the grant uses refresh tokens and the
authorization server lists it (SEP-2207; ``offline_access=False`` turns that off).

**DPoP**: ``dpop=None`` (the default) binds tokens to a key when both sides take DPoP: the
authorization server advertises ``ES256`` in ``dpop_signing_alg_values_supported``, and the MCP
server challenged with the ``DPoP`` scheme or lists DPoP in its PRM (a token bound to a key the
resource server cannot check would be refused there). ``True`` requires it (an authorization
server without it is an error), ``False`` never uses it.

**Concurrency**: one lock per MCP server (origin): requests refused together cause one login,
and a request whose token was replaced while it was in flight is simply sent again.

**Where discovery may lead** (:mod:`.url_policy`): for an MCP server that is not on loopback,
every URL its metadata names (and its authorization server's) must be ``https`` on a public
address, unless ``allow_private_network_urls=True``: a hostile server cannot make the client
send requests to the user's own machine or network.

**Failures** raise an :class:`~.errors.AuthorizationError`, which fails the request that needed
it. The same failure is raised again, without asking any server, for ``failure_backoff``
seconds (30 by default): a refused login is not repeated by every request that follows it.

State is kept per origin of the MCP server URL: one MCP server per origin is assumed.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

import trio

from ...transports.http.engine.client_pool import HttpClientPool
from ..http_pools import open_http_pool
from .challenge import Challenge, parse_challenges, scope_of
from .discovery import (
    AuthorizationServer,
    canonical_resource,
    discover_authorization_server,
    discover_protected_resource,
    fallback_authorization_server,
)
from .dpop import ALGORITHM, DpopKey, DpopNonces
from .errors import AuthorizationError, DiscoveryError, InsufficientScope, TokenError
from .fetch import origin_of
from .grants import Grant, GrantContext, refresh
from .registration import ClientMetadata, register_client
from .store import ClientRegistration, InMemoryTokenStore, Tokens, TokenStore
from .token_endpoint import ClientKey
from .url_policy import DiscoveredUrls

__all__ = ["OAuthClient"]

#: The pool of one discovery or refresh, for its ``async with`` block.
HttpPoolBlock = AbstractAsyncContextManager[HttpClientPool]

log = logging.getLogger("mcptrio.auth.client")


@dataclass
class _ServerState:
    """What the client knows about one MCP server."""

    server_url: str
    lock: trio.Lock = field(default_factory=trio.Lock)
    loaded: bool = False
    tokens: Tokens | None = None
    dpop_key: DpopKey | None = None
    authorization_server: AuthorizationServer | None = None
    resource: str | None = None
    #: The scopes the current token was asked for, and the last set stepped up for.
    requested: tuple[str, ...] = ()
    stepped_for: tuple[str, ...] | None = None
    failure: AuthorizationError | None = None
    failed_at: float = 0.0
    #: Whether the MCP server said it takes DPoP tokens (a ``DPoP`` challenge, or its PRM).
    resource_offers_dpop: bool = False
    #: The access token the last full login (not a refresh) obtained.
    obtained: str | None = None


def _union(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _challenges(headers: Sequence[tuple[bytes, bytes]]) -> list[Challenge]:
    values = [value for name, value in headers if name == b"www-authenticate"]
    return [c for c in parse_challenges(values) if c.scheme in ("bearer", "dpop")]


class OAuthClient:
    """OAuth 2.1 for an MCP client: pass it as ``auth=`` to :func:`mcptrio.client.http`.

    ``grant`` says how tokens are obtained (:class:`~.grants.AuthorizationCode` with a redirect
    handler for a user, :class:`~.grants.ClientCredentials` for a machine, ...). ``client``
    describes the application for registration; ``credentials`` are pre-registered
    registrations (each for one issuer, or for any with ``issuer=""``); ``key`` signs
    ``private_key_jwt`` assertions. ``store`` keeps tokens and registrations (in memory unless
    given). ``timeout`` bounds each request to an authorization server; ``ssl_context`` is for
    them. ``allow_private_network_urls`` lets an MCP server that is not on loopback send the
    client to loopback, private or link-local addresses, or plain http on loopback (an
    authorization server on the user's own network); see :mod:`.url_policy`.
    """

    def __init__(
        self,
        grant: Grant,
        *,
        client: ClientMetadata | None = None,
        credentials: Sequence[ClientRegistration] = (),
        key: ClientKey | None = None,
        store: TokenStore | None = None,
        offline_access: bool = True,
        dpop: bool | None = None,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        failure_backoff: float = 30.0,
        allow_private_network_urls: bool = False,
    ) -> None:
        self.grant = grant
        self.client = client or ClientMetadata()
        self.credentials = tuple(credentials)
        self.key = key
        self.store: TokenStore = store if store is not None else InMemoryTokenStore()
        self.offline_access = offline_access
        self.dpop = dpop
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.failure_backoff = failure_backoff
        self.allow_private_network_urls = allow_private_network_urls
        self._nonces = DpopNonces()
        self._servers: dict[str, _ServerState] = {}

    # ------------------------------------------------------------ HttpAuth

    async def headers(self, method: str, url: str) -> list[tuple[str, str]]:
        state = await self._state(url)
        tokens = state.tokens
        if (
            tokens is not None
            and tokens.refresh_token is not None
            and tokens.expired()
            and state.authorization_server is not None
        ):
            # Refreshed before it is sent, rather than after the server refuses it. A failure
            # here is left to the 401 that follows (which logs in again if it must).
            async with state.lock:
                if state.tokens is tokens:
                    try:
                        await self._refresh(state, tokens)
                    except AuthorizationError as exc:
                        log.info("refreshing an expired token failed: %s", exc)
        return self._authorization(state, method, url)

    async def on_response(
        self,
        method: str,
        url: str,
        status: int,
        headers: Sequence[tuple[bytes, bytes]],
        sent: Sequence[tuple[str, str]],
        attempt: int,
    ) -> bool:
        state = await self._state(url)
        challenges = _challenges(headers)
        challenge = challenges[0] if challenges else None
        if any(c.scheme == "dpop" for c in challenges):
            state.resource_offers_dpop = True
        nonce = next((v.decode("latin-1") for k, v in headers if k == b"dpop-nonce"), None)
        async with state.lock:
            fresh_nonce = nonce is not None and self._nonces.put(url, nonce)
            if status not in (401, 403):
                return False
            if challenge is not None and challenge.error == "use_dpop_nonce":
                return fresh_nonce
            if self._token_of(sent) != self._current_token(state):
                # Another request's login or refresh replaced the token meanwhile.
                return True
            self._raise_recent_failure(state)
            try:
                if status == 401 and attempt > 1 and state.obtained == self._token_of(sent):
                    # The token this very request's login just obtained: logging in again
                    # would only ask the user again for a token the server will not take.
                    raise AuthorizationError(
                        "The server refused the token its authorization server just issued"
                    )
                if status == 401:
                    await self._authorize(state, challenge, scopes=None)
                    return True
                if challenge is None or challenge.error != "insufficient_scope":
                    return False
                wanted = self._step_up_scopes(state, challenge)
                await self._authorize(state, challenge, scopes=wanted)
                return True
            except AuthorizationError as exc:
                state.failure, state.failed_at = exc, trio.current_time()
                raise

    # ------------------------------------------------------------ tokens on requests

    async def _state(self, url: str) -> _ServerState:
        origin = origin_of(url)
        state = self._servers.get(origin)
        if state is None:
            state = self._servers[origin] = _ServerState(server_url=canonical_resource(url))
        if not state.loaded:
            async with state.lock:
                if not state.loaded:
                    state.tokens = await self.store.get_tokens(state.server_url)
                    if state.tokens is not None:
                        # Kept by an earlier process: what it was granted is what this one has
                        # asked for, so a refresh never stands in for a step-up to more.
                        state.requested = state.tokens.scopes
                    state.loaded = True
        return state

    @staticmethod
    def _token_of(sent: Sequence[tuple[str, str]]) -> str | None:
        for name, value in sent:
            if name == "authorization":
                return value.partition(" ")[2]
        return None

    @staticmethod
    def _current_token(state: _ServerState) -> str | None:
        return None if state.tokens is None else state.tokens.access_token

    def _authorization(self, state: _ServerState, method: str, url: str) -> list[tuple[str, str]]:
        tokens = state.tokens
        if tokens is None:
            return []
        if tokens.token_type != "DPoP":
            return [("authorization", f"Bearer {tokens.access_token}")]
        key = state.dpop_key
        if key is None and tokens.dpop_key is not None:
            key = state.dpop_key = DpopKey.from_jwk(tokens.dpop_key)
        if key is None:
            return []
        proof = key.proof(
            method, url, access_token=tokens.access_token, nonce=self._nonces.get(url)
        )
        return [("authorization", f"DPoP {tokens.access_token}"), ("dpop", proof)]

    def _raise_recent_failure(self, state: _ServerState) -> None:
        failure = state.failure
        if failure is not None and trio.current_time() - state.failed_at < self.failure_backoff:
            raise type(failure)(f"{failure} (not retried yet)")
        state.failure = None

    def _step_up_scopes(self, state: _ServerState, challenge: Challenge) -> tuple[str, ...]:
        challenged = scope_of(challenge) or []
        wanted = _union(state.requested, challenged)
        granted = set(state.tokens.scopes) if state.tokens is not None else set()
        asks_new = not set(wanted) <= set(state.requested)
        retry_same = not set(challenged) <= granted and state.stepped_for != wanted
        if not challenged or not (asks_new or retry_same):
            description = challenge.params.get("error_description", "")[:200]
            raise InsufficientScope(
                f"The server still refuses for insufficient scope after the client asked for"
                f" {' '.join(wanted) or 'no scope'}: {description}".rstrip(": ")
            )
        state.stepped_for = wanted
        return wanted

    # ------------------------------------------------------------ obtaining tokens

    def _http(self, state: _ServerState) -> tuple[DiscoveredUrls, HttpPoolBlock]:
        """Where discovery for ``state``'s server may lead, and a pool that connects only
        there (:meth:`~.url_policy.DiscoveredUrls.connectable`)."""
        urls = DiscoveredUrls(state.server_url, self.allow_private_network_urls, self.timeout)
        pool = open_http_pool(
            ssl_context=self.ssl_context,
            timeout=self.timeout,
            max_connections=4,
            address_filter=urls.connectable,
        )
        return urls, pool

    async def _discover(
        self,
        http: HttpClientPool,
        urls: DiscoveredUrls,
        state: _ServerState,
        challenge: Challenge | None,
    ) -> tuple[AuthorizationServer, str, tuple[str, ...] | None]:
        """The authorization server, the resource and the PRM's ``scopes_supported``; every URL
        followed passes ``urls`` first."""
        header_url = challenge.resource_metadata if challenge is not None else None
        if header_url:
            await urls.check(header_url, "resource metadata URL")
        prm = await discover_protected_resource(http, state.server_url, header_url)
        if prm is not None and prm.dpop:
            state.resource_offers_dpop = True
        if prm is None:
            # A 2025-03-26 server: it is its own authorization server.
            issuer = origin_of(state.server_url)
            server = await discover_authorization_server(http, issuer, own_origin=True)
            resource, supported = state.server_url, None
            if server is None:
                return fallback_authorization_server(state.server_url), resource, supported
        else:
            issuer = await urls.check(prm.authorization_servers[0], "authorization server")
            server = await discover_authorization_server(http, issuer)
            if server is None:
                raise DiscoveryError(f"No authorization server metadata for {issuer}")
            resource, supported = prm.resource, prm.scopes_supported
        await urls.check(server.token_endpoint, "token endpoint")
        for endpoint, what in (
            (server.authorization_endpoint, "authorization endpoint"),
            (server.registration_endpoint, "registration endpoint"),
        ):
            if endpoint is not None:
                await urls.check(endpoint, what)
        return server, resource, supported

    def _dpop_for(self, server: AuthorizationServer, state: _ServerState) -> DpopKey | None:
        advertised = ALGORITHM in (server.dpop_signing_alg_values_supported or ())
        bound = state.tokens is not None and state.tokens.token_type == "DPoP"
        # A bound token being refreshed stays bound to its key; otherwise both sides must
        # take DPoP (see the module's docstring).
        wanted = bound or (
            self.dpop is True or (self.dpop is None and advertised and state.resource_offers_dpop)
        )
        if not wanted:
            return None
        if not advertised and not bound:
            raise AuthorizationError(f"{server.issuer} does not support DPoP with {ALGORITHM}")
        if state.dpop_key is None and bound and state.tokens and state.tokens.dpop_key:
            state.dpop_key = DpopKey.from_jwk(state.tokens.dpop_key)
        if state.dpop_key is None:
            state.dpop_key = DpopKey()
        return state.dpop_key

    def _context(
        self,
        http: HttpClientPool,
        server: AuthorizationServer,
        resource: str,
        scopes: tuple[str, ...],
        dpop: DpopKey | None,
    ) -> GrantContext:
        async def register(redirect_uris: list[str]) -> ClientRegistration:
            redirect = getattr(self.grant, "redirect", None)
            return await register_client(
                http,
                server,
                self.store,
                metadata=self.client,
                pre_registered=self.credentials,
                redirect_uris=redirect_uris,
                grant_types=self.grant.grant_types,
                native=bool(getattr(redirect, "native", True)),
            )

        return GrantContext(http, server, resource, scopes, register, self.key, dpop, self._nonces)

    async def _refresh(self, state: _ServerState, tokens: Tokens) -> None:
        server, resource = state.authorization_server, state.resource
        assert server is not None and resource is not None
        _, pool = self._http(state)
        async with pool as http:
            dpop = self._dpop_for(server, state)
            context = self._context(http, server, resource, state.requested, dpop)
            fresh = await refresh(context, tokens, await context.register([]))
        state.tokens = fresh
        await self.store.set_tokens(state.server_url, fresh)

    async def _authorize(
        self, state: _ServerState, challenge: Challenge | None, *, scopes: tuple[str, ...] | None
    ) -> None:
        urls, pool = self._http(state)
        async with pool as http:
            server, resource, supported = await self._discover(http, urls, state, challenge)
            old = state.tokens
            if old is not None and old.issuer and old.issuer != server.issuer:
                log.info("the authorization server changed to %s; logging in anew", server.issuer)
                old = None
            if scopes is None:
                from_challenge = scope_of(challenge) if challenge is not None else None
                scopes = tuple(from_challenge or supported or ())
            uses_refresh = "refresh_token" in self.grant.grant_types
            if (
                self.offline_access
                and uses_refresh
                and "offline_access" in (server.scopes_supported or ())
                and "offline_access" not in scopes
            ):
                scopes = (*scopes, "offline_access")
            dpop = self._dpop_for(server, state)

            context = self._context(http, server, resource, scopes, dpop)
            tokens = None
            if (
                old is not None
                and old.refresh_token is not None
                and set(scopes) <= set(state.requested or scopes)
            ):
                try:
                    tokens = await refresh(context, old, await context.register([]))
                except TokenError as exc:
                    log.info("refreshing the token failed (%s); logging in again", exc)
            if tokens is None:
                tokens = await self.grant.obtain(context)
                state.obtained = tokens.access_token
        state.tokens, state.requested = tokens, scopes
        state.authorization_server, state.resource = server, resource
        await self.store.set_tokens(state.server_url, tokens)
