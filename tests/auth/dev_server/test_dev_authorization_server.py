"""The development authorization server: metadata, registration (DCR and CIMD), the code grant
with PKCE, refresh rotation, client credentials, the login form, and its refusals."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import time
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
import trio
from joserfc import jwt
from joserfc.jwk import ECKey
from served_dev_server import dev_server

from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder, WebSocketPeer

IO_LIMIT = 20.0
CALLBACK = "http://127.0.0.1:1/callback"
RESOURCE = "http://127.0.0.1:2/mcp"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: Machine clients register themselves only where the server opens that grant to registration.
MACHINE_GRANTS = ("authorization_code", "refresh_token", "client_credentials")
MACHINE_CLIENTS = {"dynamic_registration_grant_types": MACHINE_GRANTS}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def register(client: httpx2.AsyncClient, **metadata: Any) -> dict[str, Any]:
    metadata.setdefault("redirect_uris", [CALLBACK])
    answer = await client.post("/register", json=metadata)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def authorize(
    client: httpx2.AsyncClient, client_id: str, challenge: str, **extra: str
) -> httpx2.Response:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "xyz",
        "resource": RESOURCE,
        **extra,
    }
    return await client.get("/authorize", params={k: v for k, v in params.items() if v})


def redirected(answer: httpx2.Response) -> dict[str, str]:
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(CALLBACK)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def code_for(client: httpx2.AsyncClient, client_id: str, **extra: str) -> tuple[str, str]:
    verifier, challenge = pkce()
    query = redirected(await authorize(client, client_id, challenge, **extra))
    return query["code"], verifier


async def tokens_for_a_code(
    client: httpx2.AsyncClient, client_id: str, basic: tuple[str, str], **extra: str
) -> dict[str, Any]:
    """A code for ``client_id`` (``extra``: more of the authorization request), exchanged for
    tokens by the client authenticating with HTTP Basic."""
    code, verifier = await code_for(client, client_id, **extra)
    data = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
    tokens: dict[str, Any] = (await client.post("/token", data=data, auth=basic)).json()
    return tokens


async def test_metadata_at_both_well_known_paths() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (auth, client):
            for path in (
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            ):
                answer = await client.get(path)
                assert answer.status_code == 200
                assert answer.headers["content-type"] == "application/json"
                document = answer.json()
                assert document["issuer"] == auth.issuer
                assert document["code_challenge_methods_supported"] == ["S256"]
                assert document["client_id_metadata_document_supported"] is True
                assert document["response_types_supported"] == ["code"]
            preflight = await client.options(
                "/token",
                headers={
                    "origin": "https://inspector.example",
                    "access-control-request-method": "POST",
                },
            )
            assert preflight.status_code == 204
            assert "POST" in preflight.headers["access-control-allow-methods"]
            jwks = (await client.get("/jwks")).json()
            assert [key["kty"] for key in jwks["keys"]] == ["EC"]
            assert "d" not in jwks["keys"][0]


async def test_the_code_grant_with_pkce_issues_a_token_for_the_resource() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (auth, client):
            registered = await register(client, token_endpoint_auth_method="none")
            assert "client_secret" not in registered
            client_id = registered["client_id"]
            verifier, challenge = pkce()
            query = redirected(await authorize(client, client_id, challenge, login_hint="alice"))
            assert (query["state"], query["iss"]) == ("xyz", auth.issuer)
            form = {
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": CALLBACK,
                "code_verifier": verifier,
                "client_id": client_id,
                "resource": RESOURCE,
            }
            answer = await client.post("/token", data=form)
            assert answer.status_code == 200, answer.text
            assert answer.headers["cache-control"] == "no-store"
            tokens = answer.json()
            assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
            claims = auth.read_token(tokens["access_token"])
            assert claims is not None
            assert (claims["sub"], claims["aud"], claims["scope"]) == ("alice", RESOURCE, "mcp")
            # The code is used once.
            again = await client.post("/token", data=form)
            assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


async def test_a_wrong_code_verifier_is_refused() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (_, client):
            client_id = (await register(client, token_endpoint_auth_method="none"))["client_id"]
            code, _ = await code_for(client, client_id)
            answer = await client.post(
                "/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "code_verifier": secrets.token_urlsafe(48),
                    "client_id": client_id,
                },
            )
            assert answer.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": ""}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "mcp root"}, "invalid_scope"),
        ({"resource": "not-a-uri"}, "invalid_target"),
    ],
)
async def test_bad_authorization_requests_go_back_with_an_error(
    extra: dict[str, str], error: str
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (auth, client):
            client_id = (await register(client, token_endpoint_auth_method="none"))["client_id"]
            _, challenge = pkce()
            query = redirected(await authorize(client, client_id, challenge, **extra))
            assert query["error"] == error
            assert (query["state"], query["iss"]) == ("xyz", auth.issuer)


async def test_unknown_clients_and_redirect_uris_get_a_page_never_a_redirect() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (_, client):
            client_id = (await register(client, token_endpoint_auth_method="none"))["client_id"]
            _, challenge = pkce()
            for answer in (
                await authorize(client, "nobody", challenge),
                await authorize(
                    client, client_id, challenge, redirect_uri="https://evil.example/cb"
                ),
            ):
                assert answer.status_code == 400
                assert "location" not in answer.headers
                assert answer.headers["content-type"].startswith("text/html")


async def test_a_loopback_ip_redirect_uri_is_taken_on_any_port_and_nothing_else_is() -> None:
    # RFC 8252 §7.3: a native app's loopback listener gets its port from the system each time.
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (_, client):
            client_id = (await register(client, token_endpoint_auth_method="none"))["client_id"]
            _, challenge = pkce()
            elsewhere = "http://127.0.0.1:4242/callback"
            answer = await authorize(client, client_id, challenge, redirect_uri=elsewhere)
            assert answer.status_code == 302, answer.text
            assert answer.headers["location"].startswith(elsewhere + "?")
            for other in (
                "http://127.0.0.1:4242/other",
                "http://localhost:4242/callback",
                "http://127.0.0.2:1/callback",
                "https://127.0.0.1:1/callback",
            ):
                refused = await authorize(client, client_id, challenge, redirect_uri=other)
                assert refused.status_code == 400, other
                assert "location" not in refused.headers


async def test_refresh_tokens_rotate_and_never_widen_the_scope() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (_, client):
            registered = await register(client)
            client_id, secret = registered["client_id"], registered["client_secret"]
            basic = (client_id, secret)
            tokens = await tokens_for_a_code(client, client_id, basic, scope="mcp")
            first = tokens["refresh_token"]
            wider = await client.post(
                "/token",
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": first,
                    "scope": "mcp offline_access",
                },
                auth=basic,
            )
            assert wider.json()["error"] == "invalid_scope"
            tokens = await tokens_for_a_code(client, client_id, basic, scope="mcp")
            refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
            renewed = await client.post("/token", data=refresh, auth=basic)
            assert renewed.status_code == 200
            assert renewed.json()["refresh_token"] != tokens["refresh_token"]
            reused = await client.post("/token", data=refresh, auth=basic)
            assert reused.json()["error"] == "invalid_grant"


async def test_client_credentials_with_basic_and_post_authentication() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(**MACHINE_CLIENTS) as (auth, client):
            registered = await register(
                client, grant_types=["client_credentials"], redirect_uris=[], scope="mcp"
            )
            client_id, secret = registered["client_id"], registered["client_secret"]
            grant = {"grant_type": "client_credentials", "resource": RESOURCE}
            by_basic = await client.post("/token", data=grant, auth=(client_id, secret))
            by_post = await client.post(
                "/token", data={**grant, "client_id": client_id, "client_secret": secret}
            )
            for answer in (by_basic, by_post):
                assert answer.status_code == 200
                claims = auth.read_token(answer.json()["access_token"])
                assert claims is not None and claims["sub"] == client_id
                assert "refresh_token" not in answer.json()
            wrong = await client.post("/token", data=grant, auth=(client_id, "nope"))
            assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client")
            assert wrong.headers["www-authenticate"].startswith("Basic")
            # A client registered for the code grant may not use client credentials.
            other = await register(client)
            refused = await client.post(
                "/token", data=grant, auth=(other["client_id"], other["client_secret"])
            )
            assert refused.json()["error"] == "unauthorized_client"


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
        ({"token_endpoint_auth_method": "tls_client_auth"}, "invalid_client_metadata"),
        (
            {"token_endpoint_auth_method": "private_key_jwt", "redirect_uris": [CALLBACK]},
            "invalid_client_metadata",
        ),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"redirect_uris": "not a list"}, "invalid_client_metadata"),
    ],
)
async def test_bad_registrations_are_refused(metadata: dict[str, Any], error: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server() as (_, client):
            answer = await client.post("/register", json=metadata)
            assert (answer.status_code, answer.json()["error"]) == (400, error)
            huge = await client.post(
                "/register",
                content=b'{"client_name": "' + b"x" * 100_000 + b'"}',
                headers={"content-type": "application/json"},
            )
            assert huge.status_code == 400


class DocumentHost:
    """Serves one client metadata document (or something that is not one)."""

    def __init__(self) -> None:
        self.body = b"{}"

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        await responder.send_response(200, [(b"content-type", b"application/json")], self.body)

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await peer.reject(404)


async def test_a_client_id_metadata_document_names_the_client() -> None:
    with trio.fail_after(IO_LIMIT):
        host = DocumentHost()
        async with trio.open_nursery() as nursery, dev_server() as (auth, client):
            base = await nursery.start(partial(serve_builtin, host))
            url = base + "/client.json"
            document = {"client_id": url, "client_name": "cimd", "redirect_uris": [CALLBACK]}
            host.body = json.dumps(document).encode()
            code, verifier = await code_for(client, url)
            answer = await client.post(
                "/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "code_verifier": verifier,
                    "client_id": url,
                },
            )
            assert answer.status_code == 200
            claims = auth.read_token(answer.json()["access_token"])
            assert claims is not None and claims["client_id"] == url
            # A document naming another client_id, or too large, names no client.
            _, challenge = pkce()
            for body in (
                json.dumps({**document, "client_id": base + "/other.json"}).encode(),
                json.dumps({**document, "client_name": "x" * 20_000}).encode(),
            ):
                host.body = body
                other = base + f"/{secrets.token_hex(4)}.json"
                refused = await authorize(client, other, challenge)
                assert refused.status_code == 400
            nursery.cancel_scope.cancel()


async def test_the_login_form_approves_only_with_the_right_password() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(auto_approve=False, users={"ann": "pw"}) as (_, client):
            client_id = (await register(client, token_endpoint_auth_method="none"))["client_id"]
            _, challenge = pkce()
            page = await authorize(client, client_id, challenge, state="s")
            assert page.status_code == 200 and "<form" in page.text
            form = {**hidden_fields(page.text), "username": "ann"}
            assert form["code_challenge"] == challenge and form["state"] == "s"
            wrong = await client.post("/authorize", data={**form, "password": "no"})
            assert wrong.status_code == 401
            forged = await client.post(
                "/authorize",
                data={
                    **hidden_fields(wrong.text),
                    "username": "ann",
                    "password": "pw",
                    "form_token": "guess",
                },
            )
            assert forged.status_code == 403
            form = {**hidden_fields(forged.text), "username": "ann"}
            right = await client.post("/authorize", data={**form, "password": "pw"})
            query = redirected(right)
            assert query["state"] == "s" and query["code"]


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden fields of a login form page, as a browser posts them back."""
    return {
        name: html.unescape(value)
        for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page)
    }


def client_assertion(key: ECKey, client_id: str, audience: str, **claims: Any) -> str:
    now = int(time.time())
    full = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "exp": now + 60,
        "jti": secrets.token_hex(8),
        **claims,
    }
    return jwt.encode({"alg": "ES256", "kid": key.kid}, full, key)


async def test_private_key_jwt_client_credentials() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(**MACHINE_CLIENTS) as (auth, client):
            key = ECKey.generate_key("P-256", auto_kid=True)
            registered = await register(
                client,
                grant_types=["client_credentials"],
                redirect_uris=[],
                token_endpoint_auth_method="private_key_jwt",
                jwks={"keys": [key.as_dict(private=False)]},
            )
            assert "client_secret" not in registered
            client_id = registered["client_id"]
            token_url = auth.issuer + "/token"

            def grant(assertion: str) -> dict[str, str]:
                return {
                    "grant_type": "client_credentials",
                    "client_assertion_type": JWT_BEARER,
                    "client_assertion": assertion,
                    "resource": RESOURCE,
                }

            assertion = client_assertion(key, client_id, token_url)
            answer = await client.post("/token", data=grant(assertion))
            assert answer.status_code == 200, answer.text
            claims = auth.read_token(answer.json()["access_token"])
            assert claims is not None and claims["sub"] == client_id
            stranger = ECKey.generate_key("P-256", auto_kid=True)
            refused = {
                "replayed": assertion,
                "wrong audience": client_assertion(key, client_id, "https://elsewhere.example"),
                "expired": client_assertion(key, client_id, token_url, exp=int(time.time()) - 120),
                "far future": client_assertion(
                    key, client_id, token_url, exp=int(time.time()) + 9999
                ),
                "other key": client_assertion(stranger, client_id, token_url),
                "not a JWT": "garbage",
            }
            for why, bad in refused.items():
                answer = await client.post("/token", data=grant(bad))
                assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client"), why
            metadata = (await client.get("/.well-known/oauth-authorization-server")).json()
            assert "private_key_jwt" in metadata["token_endpoint_auth_methods_supported"]
