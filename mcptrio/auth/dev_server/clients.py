"""The development authorization server's clients: registered ones, and URL-named ones.

A client is known in one of two ways:

- **Dynamic Client Registration** (RFC 7591): :meth:`Clients.register` takes the client's
  metadata and returns its ``client_id`` (and a secret unless it asked for
  ``token_endpoint_auth_method`` ``none``, or ``private_key_jwt`` with its ``jwks``). Redirect
  URIs are required for the authorization code grant; each must be ``https``, ``http`` on
  loopback, or a private-use scheme (native apps). An authorization request may name a
  registered ``http`` loopback IP URI with another port (RFC 8252 §7.3): a command-line client
  listens wherever the system lets it, each time it logs in. Anyone may register, so only the
  grants in ``dynamic_registration_grant_types`` are open to it: by default the ones a user approves
  (``authorization_code``, ``refresh_token``), never ``client_credentials``, which would give an
  anonymous caller a token without any user. A registered client's ``scope`` is what it may be
  granted on its own (``client_credentials``); omitted, that is no scope at all.
- **Client ID Metadata Documents**: a ``client_id`` that is an ``https`` URL (``http`` on
  loopback, for development) names a JSON document the server fetches (through mcptrio's trio
  HTTP client, ``fetch_timeout`` seconds at most, ``max_document_size`` bytes at most) and
  checks: its ``client_id`` must be that URL. Fetched documents are kept ``document_ttl``
  seconds. Such clients are public (``token_endpoint_auth_method: none``).
"""

from __future__ import annotations

import ipaddress
import secrets
import ssl
import time
from collections.abc import Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field
from urllib.parse import SplitResult, urlsplit

import msgspec
import trio

from ...transports.http.engine.client_pool import HttpError
from ..http_pools import PoolOnFirstUse
from ..metadata import (
    ClientIdMetadataDocument,
    ClientInformation,
    ClientMetadata,
    check_client_id_document,
    decode_document,
    is_loopback_host,
)
from .state import Client, Memory, Remembered

__all__ = ["GRANTS", "USER_GRANTS", "Clients", "OAuthProblem", "is_client_id_url"]

_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
#: The grants the server implements.
GRANTS = ("authorization_code", "refresh_token", "client_credentials")
#: The grants a user approves: the only ones open to anonymous registration by default.
USER_GRANTS = ("authorization_code", "refresh_token")


class OAuthProblem(Exception):
    """An OAuth error to answer with: ``error`` is its code (``invalid_client``,
    ``invalid_grant``...), ``description`` says why."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def is_client_id_url(client_id: str) -> bool:
    """Whether ``client_id`` names a Client ID Metadata Document."""
    parts = urlsplit(client_id)
    if parts.scheme == "https":
        return bool(parts.netloc)
    return parts.scheme == "http" and is_loopback_host(parts.hostname or "")


def is_registered_redirect(uri: str, registered: Sequence[str]) -> bool:
    """Whether ``uri`` is one of the ``registered`` redirect URIs: the same string, or for an
    ``http`` URI on a loopback IP address the same but for the port, which a native app gets
    from the system when it logs in (RFC 8252 §7.3, OAuth 2.1 §8.4.2: any port is allowed)."""
    if uri in registered:
        return True
    parts = urlsplit(uri)
    if parts.scheme != "http" or not _is_loopback_ip(parts.hostname or ""):
        return False
    portless = _without_port(parts)
    return portless is not None and any(
        _without_port(urlsplit(each)) == portless for each in registered
    )


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _without_port(parts: SplitResult) -> tuple[str, str, str, str] | None:
    """``parts`` but its port (``None`` for a port that is no number)."""
    try:
        parts.port  # noqa: B018 - parsed only to refuse a port that is no number
    except ValueError:
        return None
    return (parts.scheme, parts.hostname or "", parts.path, parts.query)


def check_redirect_uri(uri: str) -> None:
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri or not parts.scheme:
        raise OAuthProblem("invalid_redirect_uri", f"redirect URI {uri!r} is not absolute")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname or ""):
        raise OAuthProblem("invalid_redirect_uri", f"redirect URI {uri!r} must use https")
    if parts.scheme in ("javascript", "data", "file"):
        raise OAuthProblem("invalid_redirect_uri", f"redirect URI scheme of {uri!r} is refused")


@dataclass(slots=True, eq=False)
class Clients:
    """The clients the server knows; see the module docstring."""

    memory: Memory
    _: KW_ONLY
    fetch_timeout: float = 5.0
    max_document_size: int = 16 * 1024
    document_ttl: float = 300.0
    dynamic_registration_grant_types: tuple[str, ...] = USER_GRANTS
    ssl_context: InitVar[ssl.SSLContext | None] = None
    _http: PoolOnFirstUse = field(init=False)
    _documents: Remembered[str, tuple[float, Client]] = field(
        init=False, default_factory=lambda: Remembered(1000)
    )

    def __post_init__(self, ssl_context: ssl.SSLContext | None) -> None:
        self._http = PoolOnFirstUse(None, ssl_context=ssl_context, timeout=self.fetch_timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    def add(self, client: Client) -> Client:
        """Register ``client`` directly (a pre-registered client)."""
        self.memory.clients.put(client.client_id, client)
        return client

    def register(self, body: bytes) -> ClientInformation:
        """Dynamic Client Registration: the answer for the metadata in ``body``."""
        try:
            metadata = decode_document(body, ClientMetadata)
        except msgspec.ValidationError as exc:
            raise OAuthProblem("invalid_client_metadata", str(exc)) from None
        method = metadata.token_endpoint_auth_method or "client_secret_basic"
        if method not in _AUTH_METHODS:
            raise OAuthProblem(
                "invalid_client_metadata", f"token_endpoint_auth_method {method!r} is not supported"
            )
        grants = tuple(metadata.grant_types or ("authorization_code", "refresh_token"))
        unknown = [grant for grant in grants if grant not in GRANTS]
        if unknown:
            raise OAuthProblem("invalid_client_metadata", f"grant types {unknown} not supported")
        closed = [grant for grant in grants if grant not in self.dynamic_registration_grant_types]
        if closed:
            raise OAuthProblem(
                "invalid_client_metadata",
                f"grant types {closed} are not open to dynamic registration on this server"
                " (DevAuthorizationServer(dynamic_registration_grant_types=...))",
            )
        redirect_uris = tuple(metadata.redirect_uris or ())
        if "authorization_code" in grants and not redirect_uris:
            raise OAuthProblem("invalid_redirect_uri", "redirect_uris are required")
        for uri in redirect_uris:
            check_redirect_uri(uri)
        jwks = None
        if method == "private_key_jwt":
            jwks = metadata.jwks
            if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
                raise OAuthProblem(
                    "invalid_client_metadata", "private_key_jwt needs the client's jwks"
                )
        secret = None if method in ("none", "private_key_jwt") else secrets.token_urlsafe(32)
        client = self.add(
            Client(
                client_id=secrets.token_urlsafe(16),
                redirect_uris=redirect_uris,
                secret=secret,
                grant_types=grants,
                scope=metadata.scope or "",
                name=metadata.client_name,
                jwks=jwks,
            )
        )
        return ClientInformation(
            client_id=client.client_id,
            client_secret=secret,
            client_id_issued_at=client.issued_at,
            client_secret_expires_at=None if secret is None else 0,
            redirect_uris=list(redirect_uris),
            token_endpoint_auth_method=method,
            grant_types=list(grants),
            response_types=["code"],
            client_name=metadata.client_name,
            scope=metadata.scope,
            jwks=jwks,
        )

    async def find(self, client_id: str) -> Client:
        """The client ``client_id`` names: registered, or fetched from its metadata document;
        :class:`OAuthProblem` (``invalid_client``) when there is none."""
        client = self.memory.clients.get(client_id)
        if client is not None:
            return client
        if not is_client_id_url(client_id):
            raise OAuthProblem("invalid_client", "unknown client_id")
        cached = self._documents.get(client_id)
        if cached is not None and cached[0] > trio.current_time():
            return cached[1]
        client = await self._fetch_document(client_id)
        self._documents.put(client_id, (trio.current_time() + self.document_ttl, client))
        return client

    async def _fetch_document(self, url: str) -> Client:
        body: bytes | None = None
        status = 0
        with trio.move_on_after(self.fetch_timeout):
            try:
                headers = [("accept", "application/json")]
                async with self._http.get().request("GET", url, headers=headers) as response:
                    status = response.status
                    body = await response.read(self.max_document_size)
            except HttpError as exc:
                raise OAuthProblem(
                    "invalid_client", f"client metadata document fetch failed: {exc}"
                ) from None
        if status != 200 or body is None:
            why = f"answered {status}" if status and status != 200 else "failed or was too large"
            raise OAuthProblem("invalid_client", f"client metadata document fetch {why}")
        try:
            document = decode_document(
                body, ClientIdMetadataDocument, max_size=self.max_document_size
            )
            check_client_id_document(document, url)
        except ValueError as exc:
            raise OAuthProblem("invalid_client", f"client metadata document: {exc}") from None
        for uri in document.redirect_uris or ():
            check_redirect_uri(uri)
        return Client(
            client_id=url,
            redirect_uris=tuple(document.redirect_uris or ()),
            grant_types=tuple(document.grant_types or ("authorization_code", "refresh_token")),
            scope=document.scope,
            name=document.client_name,
            issued_at=int(time.time()),
        )
