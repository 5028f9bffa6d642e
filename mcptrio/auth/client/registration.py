"""How the client becomes known to an authorization server, in the spec's order of preference:

1. **pre-registered** credentials the application was given (:class:`ClientRegistration`s, each
   for one issuer, or one with ``issuer=""`` for whichever server the MCP server names);
2. a registration kept in the token store for this issuer (made earlier by DCR);
3. a **Client ID Metadata Document** (SEP-991): when the server says
   ``client_id_metadata_document_supported`` and the application publishes one, its URL is the
   ``client_id``; nothing is sent beforehand (the server fetches the document);
4. **Dynamic Client Registration** (RFC 7591) at the ``registration_endpoint``, with the
   ``application_type`` SEP-837 asks for (``native`` for loopback redirects), the grant types
   the client will use (``refresh_token`` included, SEP-2207) and the token endpoint
   authentication method it prefers among those the server supports. The answer is kept, by
   issuer, in the token store.

Registrations are keyed by the issuer (SEP-2352): a client id one server issued is never shown
to another, and a server the MCP server newly names gets a new registration.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from ...transports.http.engine.client_pool import HttpClientPool
from ..metadata import ClientIdMetadataDocument, ClientInformation, check_client_id_document
from .discovery import AuthorizationServer
from .errors import RegistrationError
from .fetch import post_json
from .store import ClientRegistration, TokenStore

__all__ = ["ClientMetadata", "register_client"]

log = logging.getLogger("mcptrio.auth.client")


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """What the client says about itself in a dynamic registration (RFC 7591 §2).

    ``metadata_url`` is the HTTPS URL of the application's Client ID Metadata Document, if it
    publishes one (it is then its ``client_id`` wherever the server supports that).
    """

    client_name: str = "mcptrio client"
    client_uri: str | None = None
    logo_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    metadata_url: str | None = None

    def metadata_document(
        self,
        redirect_uris: Sequence[str],
        grant_types: Sequence[str] = ("authorization_code", "refresh_token"),
    ) -> ClientIdMetadataDocument:
        """The Client ID Metadata Document to publish at :attr:`metadata_url` (serve it with
        ``mcptrio.auth.metadata.encode_document``). ``ValueError`` when ``metadata_url`` is not
        an https URL with a path."""
        if self.metadata_url is None:
            raise ValueError("metadata_url is not set")
        document = ClientIdMetadataDocument(
            client_id=self.metadata_url,
            client_name=self.client_name,
            client_uri=self.client_uri,
            logo_uri=self.logo_uri,
            software_id=self.software_id,
            software_version=self.software_version,
            redirect_uris=list(redirect_uris),
            grant_types=list(grant_types),
            response_types=["code"] if "authorization_code" in grant_types else [],
            token_endpoint_auth_method="none",
        )
        check_client_id_document(document, self.metadata_url)
        return document


def _preferred_method(server: AuthorizationServer) -> str:
    supported = server.token_endpoint_auth_methods_supported
    if supported is None:
        return "client_secret_basic"
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return supported[0] if supported else "client_secret_basic"


def _valid(registration: ClientRegistration) -> bool:
    return registration.expires_at is None or registration.expires_at > time.time() + 60


async def register_client(
    http: HttpClientPool,
    server: AuthorizationServer,
    store: TokenStore,
    *,
    metadata: ClientMetadata,
    pre_registered: Sequence[ClientRegistration],
    redirect_uris: Sequence[str],
    grant_types: Sequence[str],
    native: bool,
) -> ClientRegistration:
    """How the client is known to ``server`` (see the module's docstring)."""
    for registration in pre_registered:
        if registration.issuer == server.issuer:
            return registration
    for registration in pre_registered:
        if registration.issuer == "":
            return registration
    stored = await store.get_registration(server.issuer)
    if stored is not None and _valid(stored):
        return stored
    if metadata.metadata_url is not None and server.client_id_metadata_document_supported:
        return ClientRegistration(
            client_id=metadata.metadata_url,
            token_endpoint_auth_method="none",
            issuer=server.issuer,
        )
    if server.registration_endpoint is None:
        raise RegistrationError(
            f"{server.issuer} offers no way to register this client (no registration endpoint,"
            " no Client ID Metadata Document support) and no credentials were given for it"
        )
    document: dict[str, object] = {
        "client_name": metadata.client_name,
        "redirect_uris": list(redirect_uris),
        "grant_types": list(grant_types),
        "response_types": ["code"] if "authorization_code" in grant_types else [],
        "token_endpoint_auth_method": _preferred_method(server),
        "application_type": "native" if native else "web",
    }
    for name in ("client_uri", "logo_uri", "software_id", "software_version"):
        value = getattr(metadata, name)
        if value is not None:
            document[name] = value
    answer = await post_json(http, server.registration_endpoint, document)
    if answer.status not in (200, 201) or answer.document is None:
        error = (answer.document or {}).get("error")
        raise RegistrationError(
            f"{server.registration_endpoint} refused the registration"
            f" (HTTP {answer.status}{', ' + error if isinstance(error, str) else ''})"
        )
    try:
        registered = msgspec.convert(answer.document, ClientInformation)
    except (msgspec.ValidationError, ValueError) as exc:
        raise RegistrationError(f"Invalid registration response: {exc}") from None
    expires = registered.client_secret_expires_at
    # RFC 7591 §3.2.1: the answer holds the registered metadata; a server that leaves the method
    # out registered the one asked for. One that issued no secret made a public client, whatever
    # method it names.
    method = registered.token_endpoint_auth_method or str(document["token_endpoint_auth_method"])
    if registered.client_secret is None and method in ("client_secret_basic", "client_secret_post"):
        method = "none"
    registration = ClientRegistration(
        client_id=registered.client_id,
        client_secret=registered.client_secret,
        token_endpoint_auth_method=method,
        issuer=server.issuer,
        expires_at=float(expires) if expires else None,
    )
    await store.set_registration(server.issuer, registration)
    log.info("registered with %s as %s", server.issuer, registration.client_id)
    return registration
