"""What the client signs: DPoP proofs and private_key_jwt assertions, checked with joserfc."""

from __future__ import annotations

import base64
import hashlib

import pytest
from joserfc import jws, jwt
from joserfc.jwk import ECKey, import_key

from mcptrio.auth.client import ClientKey, ClientMetadata, DpopKey
from mcptrio.auth.client.dpop import DpopNonces


def test_a_dpop_proof_carries_method_url_token_hash_and_nonce() -> None:
    key = DpopKey()
    proof = key.proof("post", "https://mcp.example.com/mcp?x=1#f", access_token="tok", nonce="n-1")
    header = jws.extract_compact(proof.encode()).protected
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert "d" not in header["jwk"]
    public = import_key(header["jwk"])
    claims = jwt.decode(proof, public).claims
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.example.com/mcp"
    assert claims["nonce"] == "n-1"
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["ath"] == digest
    assert public.thumbprint() == key.thumbprint


def test_every_proof_is_fresh_and_a_key_survives_its_jwk() -> None:
    key = DpopKey()
    first, second = (key.proof("GET", "https://a.example/mcp") for _ in range(2))
    public = import_key(jws.extract_compact(first.encode()).protected["jwk"])
    assert jwt.decode(first, public).claims["jti"] != jwt.decode(second, public).claims["jti"]
    assert DpopKey.from_jwk(key.private_jwk()).thumbprint == key.thumbprint


def test_nonces_are_kept_per_origin() -> None:
    nonces = DpopNonces()
    assert nonces.put("https://as.example/token", "a")
    assert not nonces.put("https://as.example/other", "a")
    assert nonces.get("https://AS.example/x") == "a"
    assert nonces.get("https://rs.example/mcp") is None


def test_a_client_assertion_names_the_client_and_the_issuer() -> None:
    private = ECKey.generate_key("P-256", private=True)
    pem = private.as_pem(private=True).decode()
    assertion = ClientKey(pem).assertion("client-1", "https://as.example")
    claims = jwt.decode(assertion, private).claims
    assert claims["iss"] == claims["sub"] == "client-1"
    assert claims["aud"] == "https://as.example"
    assert claims["exp"] - claims["iat"] <= 300


def test_the_client_id_metadata_document_names_its_own_url() -> None:
    url = "https://app.example/oauth/client.json"
    metadata = ClientMetadata(client_name="Notes", metadata_url=url)
    document = metadata.metadata_document(["http://127.0.0.1:8765/callback"])
    assert document.client_id == url
    assert document.redirect_uris == ["http://127.0.0.1:8765/callback"]
    assert document.grant_types == ["authorization_code", "refresh_token"]
    with pytest.raises(ValueError, match="path"):
        ClientMetadata(metadata_url="https://app.example").metadata_document([])
