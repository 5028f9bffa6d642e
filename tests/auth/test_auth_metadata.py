"""The OAuth documents: what they accept, what they refuse, and where they are looked for."""

from __future__ import annotations

import json

import msgspec
import pytest

from mcptrio.auth.metadata import (
    AuthorizationServerMetadata,
    ClientIdMetadataDocument,
    ClientInformation,
    ClientMetadata,
    OAuthErrorResponse,
    ProtectedResourceMetadata,
    TokenResponse,
    authorization_server_metadata_urls,
    check_client_id_document,
    check_issuer,
    check_resource,
    decode_document,
    encode_document,
    is_loopback_host,
    protected_resource_metadata_urls,
)


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def test_protected_resource_metadata_round_trips_with_only_its_members() -> None:
    prm = ProtectedResourceMetadata(
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["tools:read"],
        bearer_methods_supported=["header"],
    )
    wire = encode_document(prm)
    assert json.loads(wire) == {
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["tools:read"],
        "bearer_methods_supported": ["header"],
    }
    assert decode_document(wire, ProtectedResourceMetadata) == prm


def test_authorization_server_metadata_reads_openid_discovery_and_mcp_members() -> None:
    document = {
        "issuer": "https://auth.example.com/tenant",
        "authorization_endpoint": "https://auth.example.com/tenant/authorize",
        "token_endpoint": "https://auth.example.com/tenant/token",
        "registration_endpoint": "https://auth.example.com/tenant/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "userinfo_endpoint": "https://auth.example.com/tenant/userinfo",
        "an_extension_we_do_not_know": {"x": 1},
        "jwks_uri": None,
    }
    metadata = decode_document(_json(document), AuthorizationServerMetadata)
    assert metadata.supports_s256
    assert metadata.client_id_metadata_document_supported is True
    assert metadata.subject_types_supported == ["public"]
    assert metadata.jwks_uri is None
    assert "jwks_uri" not in json.loads(encode_document(metadata))


def test_metadata_without_s256_does_not_support_pkce_for_mcp() -> None:
    plain = AuthorizationServerMetadata(
        issuer="https://a.example", code_challenge_methods_supported=["plain"]
    )
    assert not plain.supports_s256
    assert not AuthorizationServerMetadata(issuer="https://a.example").supports_s256


@pytest.mark.parametrize(
    ("issuer", "fault"),
    [
        ("http://auth.example.com", "https outside loopback"),
        ("https://auth.example.com?tenant=1", "query"),
        ("https://auth.example.com#x", "fragment"),
        ("ftp://auth.example.com", "absolute https URL"),
        ("/relative", "absolute https URL"),
        ("https://user:pw@auth.example.com", "user information"),
        ("https://auth.example.com:99999", "not a valid URL"),
    ],
)
def test_a_bad_issuer_is_refused_with_a_message_naming_it(issuer: str, fault: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=fault) as caught:
        decode_document(_json({"issuer": issuer}), AuthorizationServerMetadata)
    assert "issuer" in str(caught.value)
    with pytest.raises(ValueError, match=fault):
        AuthorizationServerMetadata(issuer=issuer)


@pytest.mark.parametrize(
    "issuer",
    ["http://localhost:9000", "http://127.0.0.1:1/x", "http://[::1]:8", "http://a.localhost"],
)
def test_http_issuers_on_loopback_are_accepted_for_development(issuer: str) -> None:
    assert AuthorizationServerMetadata(issuer=issuer).issuer == issuer


def test_an_http_endpoint_outside_loopback_is_refused() -> None:
    document = {"issuer": "https://a.example", "token_endpoint": "http://a.example/token"}
    with pytest.raises(msgspec.ValidationError, match="token_endpoint must use https"):
        decode_document(_json(document), AuthorizationServerMetadata)


def test_protected_resource_metadata_refuses_a_plain_http_authorization_server() -> None:
    document = {"resource": "https://r.example/mcp", "authorization_servers": ["http://a.example"]}
    with pytest.raises(msgspec.ValidationError, match="authorization_servers entry"):
        decode_document(_json(document), ProtectedResourceMetadata)


def test_an_oversized_document_is_refused_before_it_is_parsed() -> None:
    padding = "x" * 70_000
    document = _json({"resource": "https://r.example/mcp", "resource_name": padding})
    with pytest.raises(msgspec.ValidationError, match="over the 65536-byte limit"):
        decode_document(document, ProtectedResourceMetadata)
    assert decode_document(document, ProtectedResourceMetadata, max_size=100_000).resource


@pytest.mark.parametrize("data", [b"", b"not json", b"[1, 2]", b'{"resource": 5}', b"{}"])
def test_malformed_documents_are_a_validation_error(data: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        decode_document(data, ProtectedResourceMetadata)


def test_registration_request_and_response() -> None:
    request = ClientMetadata(
        redirect_uris=["http://127.0.0.1:33418/callback"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name="an MCP client",
    )
    assert json.loads(encode_document(request))["token_endpoint_auth_method"] == "none"
    answer = {
        **json.loads(encode_document(request)),
        "client_id": "abc",
        "client_secret": "s3cret",
        "client_secret_expires_at": 0,
        "client_id_issued_at": 1700000000,
    }
    info = decode_document(_json(answer), ClientInformation)
    assert (info.client_id, info.client_secret, info.client_secret_expires_at) == (
        "abc",
        "s3cret",
        0,
    )
    assert info.redirect_uris == request.redirect_uris
    with pytest.raises(msgspec.ValidationError, match="client_id"):
        decode_document(encode_document(request), ClientInformation)


def test_a_redirect_uri_with_a_fragment_is_refused() -> None:
    with pytest.raises(ValueError, match="redirect_uris"):
        ClientMetadata(redirect_uris=["https://app.example/cb#frag"])
    assert ClientMetadata(redirect_uris=["com.example.app:/callback"]).redirect_uris


def test_a_client_id_metadata_document_must_name_its_own_url() -> None:
    url = "https://app.example/oauth/client.json"
    document = ClientIdMetadataDocument(client_id=url, redirect_uris=["http://127.0.0.1/cb"])
    check_client_id_document(document, url)
    with pytest.raises(ValueError, match="names client_id"):
        check_client_id_document(document, "https://app.example/other.json")
    with pytest.raises(ValueError, match="must have a path"):
        check_client_id_document(
            ClientIdMetadataDocument(client_id="https://app.example"), "https://app.example"
        )
    with pytest.raises(ValueError, match="https outside loopback"):
        plain = "http://app.example/c.json"
        check_client_id_document(ClientIdMetadataDocument(client_id=plain), plain)


def test_token_and_error_responses() -> None:
    token = decode_document(
        b'{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}',
        TokenResponse,
    )
    assert (token.access_token, token.expires_in, token.refresh_token) == ("at", 3600, "rt")
    error = decode_document(b'{"error":"invalid_grant"}', OAuthErrorResponse)
    assert error.error == "invalid_grant" and error.error_description is None


def test_resource_and_issuer_identity_checks() -> None:
    prm = ProtectedResourceMetadata(resource="https://MCP.example.com/mcp")
    check_resource(prm, "https://mcp.example.com/mcp")
    with pytest.raises(ValueError, match="is for"):
        check_resource(prm, "https://mcp.example.com/other")
    check_resource(ProtectedResourceMetadata(resource="https://r.example/"), "https://r.example")
    metadata = AuthorizationServerMetadata(issuer="https://auth.example.com/tenant")
    check_issuer(metadata, "https://auth.example.com/tenant")
    with pytest.raises(ValueError, match="is for"):
        check_issuer(metadata, "https://evil.example.com/tenant")


def test_well_known_urls_for_protected_resource_metadata() -> None:
    assert protected_resource_metadata_urls("https://r.example/public/mcp/") == [
        "https://r.example/.well-known/oauth-protected-resource/public/mcp",
        "https://r.example/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("http://127.0.0.1:8000") == [
        "http://127.0.0.1:8000/.well-known/oauth-protected-resource"
    ]


def test_well_known_urls_for_authorization_server_metadata_in_spec_order() -> None:
    assert authorization_server_metadata_urls("https://a.example/tenant1") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant1",
        "https://a.example/.well-known/openid-configuration/tenant1",
        "https://a.example/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://a.example/") == [
        "https://a.example/.well-known/oauth-authorization-server",
        "https://a.example/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.5", True),
        ("::1", True),
        ("LOCALHOST.", True),
        ("example.com", False),
        ("10.0.0.1", False),
        ("localhost.example.com", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback
