"""Finding who issues tokens for an MCP server: protected-resource and authorization-server
metadata.

**Protected Resource Metadata (RFC 9728, SEP-985).** The URL comes from the challenge's
``resource_metadata`` when there is one; otherwise the well-known URIs are tried in the spec's
order, path-inserted first (``/.well-known/oauth-protected-resource/<path>``), then at the root.
The document's ``resource`` must name the MCP server: the same origin, and a path equal to the
server's or a parent of it on a ``/`` boundary (a PRM at the root describes the whole host);
otherwise it is refused (RFC 9728 §3.3), since a server could otherwise have the client ask for
tokens meant for another resource.

**Authorization-server metadata (RFC 8414, OpenID Connect Discovery).** For an issuer with a
path ``/tenant`` the client tries ``/.well-known/oauth-authorization-server/tenant``,
``/.well-known/openid-configuration/tenant`` and ``/tenant/.well-known/openid-configuration``;
without a path the first two at the root. A document whose ``issuer`` is not, character for
character, the issuer the URL was built from is not used (RFC 8414 §3.3, SEP-2468), nor one
whose endpoints are neither https nor loopback http.

**2025-03-26 servers** have no PRM: the authorization server is the MCP server's origin, its
metadata at ``/.well-known/oauth-authorization-server``, and when that is missing too the
endpoints default to ``/authorize``, ``/token`` and ``/register`` there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec

from ...transports.http.engine.client_pool import HttpClientPool
from ..metadata import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    authorization_server_metadata_urls,
    protected_resource_metadata_urls,
)
from .errors import DiscoveryError
from .fetch import check_endpoint, get_json, origin_of

__all__ = [
    "AuthorizationServer",
    "ProtectedResource",
    "canonical_resource",
    "discover_authorization_server",
    "discover_protected_resource",
    "fallback_authorization_server",
    "metadata_urls",
    "resource_metadata_urls",
]


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 as MCP uses it): lower-case scheme and
    host, no fragment, no query, no trailing slash unless the path is ``/`` alone."""
    parts = urlsplit(url)
    path = parts.path
    if path.endswith("/") and path != "/":
        path = path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """What the client keeps of a PRM document (or of its absence, for 2025-03-26 servers)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    #: Whether it came from a PRM document (``False``: the 2025-03-26 assumption).
    published: bool = True
    #: Whether it says it takes DPoP-bound tokens (RFC 9728's DPoP members).
    dpop: bool = False


@dataclass(frozen=True, slots=True)
class AuthorizationServer:
    """An authorization server's endpoints and what it supports, checked."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] | None = None
    #: ``None``: the metadata did not say (which the client must refuse for PKCE).
    code_challenge_methods_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    iss_parameter_supported: bool = False
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    #: Whether the endpoints came from metadata (``False``: the 2025-03-26 defaults).
    published: bool = True
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(v for v in values if isinstance(v, str))


def resource_metadata_urls(server_url: str) -> list[str]:
    """The well-known PRM URLs of ``server_url``, in the order they are tried."""
    return protected_resource_metadata_urls(server_url)


def metadata_urls(issuer: str) -> list[str]:
    """The metadata URLs of ``issuer``, in the order they are tried."""
    return authorization_server_metadata_urls(issuer)


def _covers(resource: str, server_url: str) -> bool:
    """Whether PRM ``resource`` names ``server_url`` (same origin, path equal or a parent)."""
    if origin_of(resource) != origin_of(server_url):
        return False
    have = urlsplit(canonical_resource(resource)).path.rstrip("/")
    want = urlsplit(canonical_resource(server_url)).path.rstrip("/")
    return want == have or want.startswith(have + "/")


async def discover_protected_resource(
    http: HttpClientPool,
    server_url: str,
    header_url: str | None,
    *,
    protocol_version: str | None = None,
) -> ProtectedResource | None:
    """The server's PRM, or ``None`` when it publishes none (a 2025-03-26 server).

    Raises :class:`DiscoveryError` for a document that exists but cannot be used.
    """
    if header_url:
        check_endpoint(header_url, "resource metadata URL")
    candidates = [header_url] if header_url else resource_metadata_urls(server_url)
    found = await _first_document(
        http, candidates, ProtectedResourceMetadata, "resource metadata", protocol_version
    )
    if found is None:
        if header_url:
            raise DiscoveryError(f"No resource metadata at {header_url}, which the server named")
        return None
    url, doc, _ = found
    if not _covers(doc.resource, server_url):
        raise DiscoveryError(
            f"The resource metadata at {url} is for {doc.resource!r},"
            f" not for the server at {server_url!r}"
        )
    servers = tuple(doc.authorization_servers or ())
    if not servers:
        raise DiscoveryError(f"The resource metadata at {url} names no authorization server")
    return ProtectedResource(
        resource=canonical_resource(doc.resource),
        authorization_servers=servers,
        scopes_supported=_tuple(doc.scopes_supported),
        dpop=bool(doc.dpop_signing_alg_values_supported or doc.dpop_bound_access_tokens_required),
    )


_Metadata = TypeVar("_Metadata", ProtectedResourceMetadata, AuthorizationServerMetadata)


async def _first_document(
    http: HttpClientPool,
    urls: Sequence[str],
    kind: type[_Metadata],
    what: str,
    protocol_version: str | None,
) -> tuple[str, _Metadata, dict[str, Any]] | None:
    """The first of ``urls`` that answers 200, read as ``kind``: that URL, the document and its
    JSON; ``None`` when none does. A 200 that is not a ``kind`` (``what`` names it in the
    message) is a :class:`DiscoveryError`: the next URL is not tried."""
    headers = [] if protocol_version is None else [("mcp-protocol-version", protocol_version)]
    for url in urls:
        answer = await get_json(http, url, headers=headers)
        if answer.status != 200:
            continue
        if answer.document is None:
            raise DiscoveryError(f"The {what} at {url} is not a JSON object")
        try:
            return url, msgspec.convert(answer.document, kind), answer.document
        except (msgspec.ValidationError, ValueError) as exc:
            raise DiscoveryError(f"Invalid {what} at {url}: {exc}") from None
    return None


def _checked(
    doc: AuthorizationServerMetadata, raw: dict[str, Any], url: str
) -> AuthorizationServer:
    # The metadata type checked every URL (https, or http on loopback; no fragment).
    if doc.token_endpoint is None:
        raise DiscoveryError(f"The metadata at {url} has no token_endpoint")
    return AuthorizationServer(
        issuer=doc.issuer,
        authorization_endpoint=doc.authorization_endpoint,
        token_endpoint=doc.token_endpoint,
        registration_endpoint=doc.registration_endpoint,
        scopes_supported=_tuple(doc.scopes_supported),
        grant_types_supported=_tuple(doc.grant_types_supported),
        token_endpoint_auth_methods_supported=_tuple(doc.token_endpoint_auth_methods_supported),
        token_endpoint_auth_signing_alg_values_supported=_tuple(
            doc.token_endpoint_auth_signing_alg_values_supported
        ),
        code_challenge_methods_supported=_tuple(doc.code_challenge_methods_supported),
        client_id_metadata_document_supported=doc.client_id_metadata_document_supported is True,
        iss_parameter_supported=doc.authorization_response_iss_parameter_supported is True,
        dpop_signing_alg_values_supported=_tuple(doc.dpop_signing_alg_values_supported),
        raw=raw,
    )


async def discover_authorization_server(
    http: HttpClientPool,
    issuer: str,
    *,
    protocol_version: str | None = None,
    own_origin: bool = False,
) -> AuthorizationServer | None:
    """The metadata of ``issuer``, or ``None`` when none of its well-known URLs has any.

    Raises :class:`DiscoveryError` when a document is found but cannot be used (its ``issuer``
    differs, an endpoint is not https, it is malformed or too large). ``own_origin`` is the
    2025-03-26 case, where ``issuer`` is the MCP server's own origin: there an issuer with a
    path on that same origin is accepted (the server is its own authorization server, so there
    is no other server to be mixed up with; some 2025-03-26 servers publish it so).
    """
    check_endpoint(issuer, "issuer")
    found = await _first_document(
        http,
        metadata_urls(issuer),
        AuthorizationServerMetadata,
        "authorization server metadata",
        protocol_version,
    )
    if found is None:
        return None
    url, doc, raw = found
    # Character for character (SEP-2468): no normalization at all.
    if doc.issuer != issuer and not (own_origin and origin_of(doc.issuer) == issuer):
        raise DiscoveryError(
            f"The metadata at {url} names the issuer {doc.issuer!r}, not {issuer!r}; it is not used"
        )
    return _checked(doc, raw, url)


def fallback_authorization_server(server_url: str) -> AuthorizationServer:
    """The 2025-03-26 default endpoints at the MCP server's origin (no metadata at all)."""
    base = origin_of(server_url)
    check_endpoint(base, "authorization base URL")
    return AuthorizationServer(
        issuer=base,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        published=False,
    )
