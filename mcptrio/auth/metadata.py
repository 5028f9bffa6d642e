"""The OAuth documents both halves of MCP authorization exchange, as msgspec types.

- :class:`ProtectedResourceMetadata`: RFC 9728, served by a protected MCP server at
  ``/.well-known/oauth-protected-resource`` (and the path-inserted variant).
- :class:`AuthorizationServerMetadata`: RFC 8414, with the OpenID Connect Discovery fields an MCP
  client may meet at ``/.well-known/openid-configuration``, and the extensions the MCP spec relies
  on (``code_challenge_methods_supported``, ``client_id_metadata_document_supported``, RFC 9207's
  ``authorization_response_iss_parameter_supported``, RFC 9449's DPoP algorithms).
- :class:`ClientMetadata` / :class:`ClientInformation`: the RFC 7591 registration request and
  response; :class:`ClientIdMetadataDocument` is the same metadata published at the URL that is
  the client's ``client_id`` (Client ID Metadata Documents).
- :class:`TokenResponse` and :class:`OAuthErrorResponse`: what a token (or registration)
  endpoint answers (RFC 6749 section 5).

OAuth spells its members in snake_case, so these structs use their Python names on the wire.
Absent members are ``None`` and left out when encoding; unknown members are tolerated when
decoding, and a ``null`` is read as absent, since real providers send both.

Decoding is checked, not only typed: :func:`decode_document` refuses a document over
``max_size`` bytes (a metadata endpoint is someone else's server), and each type checks its URLs
when it is built, whether decoded or constructed: an issuer or endpoint must be ``https``, or
``http`` on a loopback host (``localhost``, ``127.0.0.0/8``, ``::1``) for local development; no
URL may carry a fragment, and an issuer no query either. A failure is a ``ValueError`` whose
message names the member at fault (``msgspec.ValidationError``, a subclass, when decoding).
Comparing a document against the URL it was fetched for (RFC 9728 section 3.3, RFC 8414 section
3.3) is :func:`check_resource` / :func:`check_issuer`; where to fetch it from is
:func:`protected_resource_metadata_urls` / :func:`authorization_server_metadata_urls`.
"""

from __future__ import annotations

import ipaddress
from typing import Any, ClassVar, Final, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec

__all__ = [
    "DEFAULT_MAX_DOCUMENT_SIZE",
    "OAUTH_AS_WELL_KNOWN",
    "OPENID_WELL_KNOWN",
    "PRM_WELL_KNOWN",
    "AuthorizationServerMetadata",
    "ClientIdMetadataDocument",
    "ClientInformation",
    "ClientMetadata",
    "OAuthErrorResponse",
    "ProtectedResourceMetadata",
    "TokenResponse",
    "authorization_server_metadata_urls",
    "check_client_id_document",
    "check_issuer",
    "check_resource",
    "check_url",
    "decode_document",
    "encode_document",
    "is_loopback_host",
    "protected_resource_metadata_urls",
]

#: The largest metadata document :func:`decode_document` reads by default. Real ones are a few
#: kilobytes; the limit keeps a hostile endpoint from making a client hold megabytes.
DEFAULT_MAX_DOCUMENT_SIZE: Final = 64 * 1024

PRM_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
OAUTH_AS_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN: Final = "/.well-known/openid-configuration"


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (as in a URL, IPv6 without brackets) names this machine."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(value: str, what: str, *, issuer: bool = False) -> str:
    """``value`` when it is an absolute ``https`` URL (``http`` on loopback), else ValueError.

    ``what`` names the member in the message. An ``issuer`` may not have a query either.
    """
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 - reading it validates it
    except ValueError as exc:
        raise ValueError(f"{what} is not a valid URL: {value!r} ({exc})") from None
    if parts.scheme not in ("https", "http") or not host:
        raise ValueError(f"{what} must be an absolute https URL, got {value!r}")
    if parts.scheme == "http" and not is_loopback_host(host):
        raise ValueError(f"{what} must use https outside loopback, got {value!r}")
    if parts.fragment or value.endswith("#"):
        raise ValueError(f"{what} must not have a fragment, got {value!r}")
    if issuer and (parts.query or "?" in value):
        raise ValueError(f"{what} must not have a query, got {value!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"{what} must not carry user information, got {value!r}")
    return value


def _check_optional_urls(struct: msgspec.Struct, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(struct, name)
        if value is not None:
            check_url(value, name)


class _Document(msgspec.Struct, omit_defaults=True, kw_only=True, repr_omit_defaults=True):
    """Base of the OAuth documents: snake_case names, ``None`` for absent members."""


class ProtectedResourceMetadata(_Document):
    """RFC 9728 Protected Resource Metadata, as a protected MCP server publishes it.

    ``resource`` is the server's canonical URI (the MCP endpoint URL, RFC 8707); the MCP spec
    requires at least one ``authorization_servers`` entry, which a client checks when it picks one.
    """

    resource: str
    authorization_servers: list[str] | None = None
    jwks_uri: str | None = None
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    resource_signing_alg_values_supported: list[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    resource_policy_uri: str | None = None
    resource_tos_uri: str | None = None
    tls_client_certificate_bound_access_tokens: bool | None = None
    authorization_details_types_supported: list[str] | None = None
    dpop_signing_alg_values_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool | None = None

    def __post_init__(self) -> None:
        check_url(self.resource, "resource")
        for server in self.authorization_servers or ():
            check_url(server, "authorization_servers entry", issuer=True)
        _check_optional_urls(
            self, ("jwks_uri", "resource_documentation", "resource_policy_uri", "resource_tos_uri")
        )


class AuthorizationServerMetadata(_Document):
    """RFC 8414 authorization server metadata, with the OpenID Connect Discovery members.

    ``response_types_supported`` is required by both RFCs, but some providers leave it out, so a
    client does not refuse a document without it; :attr:`supports_s256` is what the MCP spec
    makes a client check before it uses the server.
    """

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    response_modes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    service_documentation: str | None = None
    ui_locales_supported: list[str] | None = None
    op_policy_uri: str | None = None
    op_tos_uri: str | None = None
    revocation_endpoint: str | None = None
    revocation_endpoint_auth_methods_supported: list[str] | None = None
    revocation_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    introspection_endpoint: str | None = None
    introspection_endpoint_auth_methods_supported: list[str] | None = None
    introspection_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    # RFC 9207: the authorization response carries `iss`, which the client must then check.
    authorization_response_iss_parameter_supported: bool | None = None
    # Client ID Metadata Documents (the MCP spec's preferred registration, 2025-11-25 on).
    client_id_metadata_document_supported: bool | None = None
    # RFC 9449 (DPoP) and RFC 9126 (pushed authorization requests).
    dpop_signing_alg_values_supported: list[str] | None = None
    pushed_authorization_request_endpoint: str | None = None
    require_pushed_authorization_requests: bool | None = None
    # OpenID Connect Discovery 1.0.
    userinfo_endpoint: str | None = None
    end_session_endpoint: str | None = None
    subject_types_supported: list[str] | None = None
    id_token_signing_alg_values_supported: list[str] | None = None
    claims_supported: list[str] | None = None
    acr_values_supported: list[str] | None = None

    _ENDPOINTS: ClassVar[tuple[str, ...]] = (
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "registration_endpoint",
        "service_documentation",
        "op_policy_uri",
        "op_tos_uri",
        "revocation_endpoint",
        "introspection_endpoint",
        "pushed_authorization_request_endpoint",
        "userinfo_endpoint",
        "end_session_endpoint",
    )

    def __post_init__(self) -> None:
        check_url(self.issuer, "issuer", issuer=True)
        _check_optional_urls(self, self._ENDPOINTS)

    @property
    def supports_s256(self) -> bool:
        """Whether the server advertises PKCE with ``S256`` (MCP clients must not proceed
        without it)."""
        return "S256" in (self.code_challenge_methods_supported or ())


class ClientMetadata(_Document):
    """RFC 7591 client metadata: the body of a registration request, and the base of a Client
    ID Metadata Document."""

    redirect_uris: list[str] | None = None
    token_endpoint_auth_method: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None
    client_name: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    scope: str | None = None
    contacts: list[str] | None = None
    tos_uri: str | None = None
    policy_uri: str | None = None
    jwks_uri: str | None = None
    jwks: dict[str, Any] | None = None
    software_id: str | None = None
    software_version: str | None = None
    software_statement: str | None = None

    def __post_init__(self) -> None:
        for uri in self.redirect_uris or ():
            # Redirect URIs may be custom schemes (native apps) or loopback http; only their
            # shape is checked here, the authorization server judges the rest.
            parts = urlsplit(uri)
            if not parts.scheme or parts.fragment or uri.endswith("#"):
                raise ValueError(
                    f"redirect_uris entry must be an absolute URI without a fragment, got {uri!r}"
                )


class ClientInformation(ClientMetadata, kw_only=True):
    """RFC 7591 registration response: the client's id, its secret if any, and its metadata."""

    client_id: str
    client_secret: str | None = None
    client_id_issued_at: int | None = None
    # Required with a secret; 0 means it never expires.
    client_secret_expires_at: int | None = None
    registration_access_token: str | None = None
    registration_client_uri: str | None = None


class ClientIdMetadataDocument(ClientMetadata, kw_only=True):
    """Client metadata published at an ``https`` URL that is also its ``client_id``."""

    client_id: str


class TokenResponse(_Document):
    """A token endpoint's success answer (RFC 6749 section 5.1)."""

    access_token: str
    token_type: str
    expires_in: int | None = None
    refresh_token: str | None = None
    scope: str | None = None
    id_token: str | None = None


class OAuthErrorResponse(_Document):
    """An OAuth error answer (RFC 6749 section 5.2, RFC 7591 section 3.2.2)."""

    error: str
    error_description: str | None = None
    error_uri: str | None = None


_T = TypeVar("_T", bound=msgspec.Struct)
_ENCODER: Final = msgspec.json.Encoder()
_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def decode_document(
    data: bytes, type_: type[_T], *, max_size: int = DEFAULT_MAX_DOCUMENT_SIZE
) -> _T:
    """``data`` decoded and checked as a ``type_``; ``msgspec.ValidationError`` (a ValueError)
    when it is over ``max_size`` bytes, not JSON, or breaks the type's rules."""
    if len(data) > max_size:
        raise msgspec.ValidationError(
            f"{type_.__name__} document is {len(data)} bytes, over the {max_size}-byte limit"
        )
    decoder = _DECODERS.get(type_)
    if decoder is None:
        decoder = _DECODERS[type_] = msgspec.json.Decoder(type_)
    try:
        result: _T = decoder.decode(data)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError as exc:
        raise msgspec.ValidationError(f"{type_.__name__} document is not JSON: {exc}") from None
    return result


def encode_document(document: msgspec.Struct) -> bytes:
    """``document`` as JSON, absent members left out."""
    return _ENCODER.encode(document)


def _canonical(url: str) -> str:
    """``url`` with its scheme and host in lower case and no trailing ``/`` on an empty path,
    the form both RFCs' identity checks compare."""
    parts = urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def check_resource(metadata: ProtectedResourceMetadata, expected: str) -> None:
    """Raise ValueError unless ``metadata.resource`` names ``expected``, the resource the
    client is talking to (RFC 9728 section 3.3: a document for another resource is refused)."""
    if _canonical(metadata.resource) != _canonical(expected):
        raise ValueError(
            f"protected resource metadata is for {metadata.resource!r}, not {expected!r}"
        )


def check_issuer(metadata: AuthorizationServerMetadata, expected: str) -> None:
    """Raise ValueError unless ``metadata.issuer`` is ``expected``, the issuer the metadata URL
    was built from (RFC 8414 section 3.3, against mix-up attacks)."""
    if _canonical(metadata.issuer) != _canonical(expected):
        raise ValueError(
            f"authorization server metadata is for {metadata.issuer!r}, not {expected!r}"
        )


def check_client_id_document(document: ClientIdMetadataDocument, url: str) -> None:
    """Raise ValueError unless ``document`` may be the Client ID Metadata Document at ``url``:
    its ``client_id`` must be exactly that URL, an ``https`` URL (``http`` on loopback) with a
    path."""
    check_url(url, "client_id", issuer=False)
    if urlsplit(url).path in ("", "/"):
        raise ValueError(f"a client_id URL must have a path, got {url!r}")
    if document.client_id != url:
        raise ValueError(
            f"client metadata document at {url!r} names client_id {document.client_id!r}"
        )


def _inserted(url: str, well_known: str) -> str:
    """The well-known URL for ``url``: ``well_known`` inserted between host and path (RFC 8615
    style, as RFC 8414 and RFC 9728 do), the path kept without its trailing ``/``."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, well_known + path, "", ""))


def protected_resource_metadata_urls(resource: str) -> list[str]:
    """Where a client looks for ``resource``'s metadata when no ``WWW-Authenticate`` names it,
    in order: the path-inserted URL, then the root one (which is the same for a root resource)."""
    parts = urlsplit(resource)
    root = urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN, "", ""))
    inserted = _inserted(resource, PRM_WELL_KNOWN)
    return [inserted] if inserted == root else [inserted, root]


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where a client looks for ``issuer``'s metadata, in the MCP spec's order.

    With a path: OAuth path-inserted, OpenID path-inserted, OpenID path-appended. Without one:
    OAuth, then OpenID.
    """
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [_inserted(issuer, OAUTH_AS_WELL_KNOWN), _inserted(issuer, OPENID_WELL_KNOWN)]
    appended = urlunsplit((parts.scheme, parts.netloc, path + OPENID_WELL_KNOWN, "", ""))
    return [_inserted(issuer, OAUTH_AS_WELL_KNOWN), _inserted(issuer, OPENID_WELL_KNOWN), appended]
