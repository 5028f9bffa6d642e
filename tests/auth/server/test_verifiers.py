"""The two token verifiers: JWT against a JWKS (cached, rotated, with deadlines and limits), and
RFC 7662 introspection against the development authorization server."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx2
import pytest
import trio
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey

from mcptrio.auth.dev_server import DevAuthorizationServer
from mcptrio.auth.server import (
    BearerAuth,
    IntrospectionVerifier,
    InvalidToken,
    JwtVerifier,
    VerifierUnavailable,
)
from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder, WebSocketPeer

from oauth_servers import IO_LIMIT, open_protected

ISSUER = "https://issuer.example"
RESOURCE = "https://mcp.example/mcp"


class KeyServer:
    """Serves a JWKS that a test can change, break, slow down or grow."""

    def __init__(self) -> None:
        self.keys: list[ECKey | RSAKey] = [ECKey.generate_key("P-256", auto_kid=True)]
        self.fetches = 0
        self.mode = "ok"

    def sign(self, claims: dict[str, Any], key: ECKey | RSAKey | None = None, **header: Any) -> str:
        key = key or self.keys[0]
        alg = "ES256" if isinstance(key, ECKey) else "RS256"
        now = int(time.time())
        full = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": now + 600, **claims}
        return jwt.encode({"alg": alg, "kid": key.kid, **header}, full, key)

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        self.fetches += 1
        json_type = [(b"content-type", b"application/json")]
        if self.mode == "slow":
            await trio.sleep_forever()
        elif self.mode == "error":
            await responder.send_response(500, json_type, b"{}")
        elif self.mode == "huge":
            await responder.send_response(200, json_type, b'{"keys": [' + b" " * 100_000 + b"]}")
        elif self.mode == "garbage":
            await responder.send_response(200, json_type, b'{"keys": 5}')
        else:
            document = {"keys": [key.as_dict(private=False) for key in self.keys]}
            await responder.send_response(200, json_type, json.dumps(document).encode())

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await peer.reject(404)


@asynccontextmanager
async def key_server() -> AsyncIterator[tuple[KeyServer, str]]:
    keys = KeyServer()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_builtin, keys))
        try:
            yield keys, url + "/jwks"
        finally:
            nursery.cancel_scope.cancel()


async def test_a_valid_token_is_verified_and_the_key_set_is_cached() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            verifier = JwtVerifier(ISSUER, url)
            token = keys.sign({"scope": "read write", "client_id": "c1"})
            for _ in range(3):
                access = await verifier.verify(token, resource=RESOURCE)
            assert (access.subject, access.client_id) == ("alice", "c1")
            assert access.scopes == {"read", "write"}
            assert keys.fetches == 1
            await verifier.aclose()


async def test_an_unknown_kid_fetches_the_rotated_set_once() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            verifier = JwtVerifier(ISSUER, url, refresh_interval=0)
            await verifier.verify(keys.sign({}), resource=RESOURCE)
            rotated = RSAKey.generate_key(2048, auto_kid=True)
            keys.keys = [rotated]
            access = await verifier.verify(keys.sign({"sub": "bob"}, rotated), resource=RESOURCE)
            assert access.subject == "bob"
            assert keys.fetches == 2


async def test_made_up_kids_cost_one_fetch_per_refresh_interval() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            verifier = JwtVerifier(ISSUER, url, refresh_interval=0.5)
            await verifier.verify(keys.sign({}), resource=RESOURCE)
            stranger = ECKey.generate_key("P-256", auto_kid=True)
            for _ in range(5):
                with pytest.raises(InvalidToken, match="key id"):
                    await verifier.verify(keys.sign({}, stranger), resource=RESOURCE)
            assert keys.fetches == 1
            await trio.sleep(0.6)
            with pytest.raises(InvalidToken, match="key id"):
                await verifier.verify(keys.sign({}, stranger), resource=RESOURCE)
            assert keys.fetches == 2


@pytest.mark.parametrize(
    ("claims", "header", "message"),
    [
        ({"iss": "https://evil.example"}, {}, "issuer"),
        ({"aud": "https://other.example/mcp"}, {}, "audience"),
        ({"aud": ["https://a.example", "https://b.example"]}, {}, "audience"),
        ({"exp": int(time.time()) - 120}, {}, "expired"),
        ({"exp": "soon"}, {}, "expiry"),
        ({"nbf": int(time.time()) + 600}, {}, "not valid yet"),
        ({"sub": None, "client_id": None}, {}, "subject"),
        ({}, {"alg": "HS256"}, "algorithm"),
        ({}, {"kid": 7}, "JWT|kid"),
    ],
)
async def test_bad_claims_and_headers_are_invalid_tokens(
    claims: dict[str, Any], header: dict[str, Any], message: str
) -> None:
    keys = KeyServer()
    verifier = JwtVerifier(ISSUER, keys={"keys": [keys.keys[0].as_dict(private=False)]})
    if header.get("alg") == "HS256":
        secret = OctKey.import_key("a-shared-secret-of-enough-length-xx")
        token = jwt.encode({"alg": "HS256"}, {"sub": "x"}, secret)
    elif "kid" in header:
        token = (
            ".".join(
                base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
                for part in ({"alg": "ES256", "kid": 7}, {"sub": "x"})
            )
            + ".c2ln"
        )
    else:
        token = keys.sign({k: v for k, v in claims.items() if v is not None}, **header)
        if claims.get("sub", "") is None:
            token = jwt.encode(
                {"alg": "ES256", "kid": keys.keys[0].kid},
                {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 60},
                keys.keys[0],
            )
    with pytest.raises(InvalidToken, match=message):
        await verifier.verify(token, resource=RESOURCE)


async def test_leeway_allows_small_clock_skew() -> None:
    keys = KeyServer()
    verifier = JwtVerifier(ISSUER, keys={"keys": [keys.keys[0].as_dict(private=False)]}, leeway=60)
    token = keys.sign({"exp": int(time.time()) - 10, "nbf": int(time.time()) + 10})
    assert (await verifier.verify(token, resource=RESOURCE + "/")).subject == "alice"


@pytest.mark.parametrize("mode", ["error", "huge", "garbage"])
async def test_a_failed_jwks_fetch_is_unavailable_not_invalid(mode: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            keys.mode = mode
            verifier = JwtVerifier(ISSUER, url)
            with pytest.raises(VerifierUnavailable, match="JWKS"):
                await verifier.verify(keys.sign({}), resource=RESOURCE)


async def test_a_jwks_fetch_that_hangs_ends_at_its_deadline() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            keys.mode = "slow"
            verifier = JwtVerifier(ISSUER, url, fetch_timeout=0.3)
            started = trio.current_time()
            with pytest.raises(VerifierUnavailable, match=r"took over 0\.3s"):
                await verifier.verify(keys.sign({}), resource=RESOURCE)
            assert trio.current_time() - started < 2


async def test_an_unreachable_jwks_keeps_the_last_good_set() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            verifier = JwtVerifier(ISSUER, url, cache_ttl=0, refresh_interval=0)
            token = keys.sign({})
            await verifier.verify(token, resource=RESOURCE)
            keys.mode = "error"
            assert (await verifier.verify(token, resource=RESOURCE)).subject == "alice"


async def test_jwks_trouble_answers_503_and_reaches_no_handler() -> None:
    with trio.fail_after(IO_LIMIT):
        async with trio.open_nursery() as nursery:
            # A port that was just closed: the fetch is refused.
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            await listeners[0].aclose()
            verifier = JwtVerifier("http://127.0.0.1:9", f"http://127.0.0.1:{port}/jwks")
            async with (
                open_protected(verifier=verifier) as protected,
                httpx2.AsyncClient() as client,
            ):
                token = protected.token()
                answer = await client.post(
                    protected.url,
                    content=b"{}",
                    headers={
                        "authorization": f"Bearer {token}",
                        "content-type": "application/json",
                    },
                )
                assert answer.status_code == 503
                assert protected.calls == []
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    "build",
    [
        lambda: JwtVerifier("http://auth.example.com", keys={"keys": []}),
        lambda: JwtVerifier("https://auth.example.com", "http://auth.example.com/jwks"),
        lambda: JwtVerifier("https://a.example", keys={"keys": []}, algorithms=["HS256"]),
        lambda: JwtVerifier("https://a.example"),
        lambda: BearerAuth(
            JwtVerifier("https://a.example", "https://a.example/jwks"),
            authorization_servers=["http://a.example"],
            resource="https://mcp.example/mcp",
        ),
        lambda: BearerAuth(
            JwtVerifier("https://a.example", "https://a.example/jwks"),
            authorization_servers=[],
            resource="https://mcp.example/mcp",
        ),
        lambda: BearerAuth(
            JwtVerifier("https://a.example", "https://a.example/jwks"),
            authorization_servers=["https://a.example"],
            resource="http://mcp.example/mcp",
        ),
        lambda: IntrospectionVerifier(
            "http://a.example/introspect", client_id="x", client_secret="y"
        ),
        lambda: DevAuthorizationServer("http://auth.example.com"),
    ],
)
def test_plain_http_outside_loopback_and_other_misconfigurations_are_refused(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


async def test_introspection_against_the_dev_server() -> None:
    with trio.fail_after(IO_LIMIT):
        auth = DevAuthorizationServer(scopes=("mcp",))
        async with trio.open_nursery() as nursery:
            issuer = await nursery.start(auth.serve)
            auth.register_client(
                client_id="rs", secret="rs-secret", grant_types=["client_credentials"]
            )
            verifier = IntrospectionVerifier(
                issuer + "/introspect", client_id="rs", client_secret="rs-secret", issuer=issuer
            )
            token = auth.issue_token("alice", scopes=["mcp"], resource=RESOURCE)
            access = await verifier.verify(token, resource=RESOURCE)
            assert (access.subject, access.scopes, access.issuer) == ("alice", {"mcp"}, issuer)
            with pytest.raises(InvalidToken, match="audience"):
                await verifier.verify(token, resource="https://other.example/mcp")
            with pytest.raises(InvalidToken, match="not active"):
                await verifier.verify("opaque-garbage", resource=RESOURCE)
            wrong = IntrospectionVerifier(
                issuer + "/introspect", client_id="rs", client_secret="nope"
            )
            with pytest.raises(VerifierUnavailable, match="401"):
                await wrong.verify(token, resource=RESOURCE)
            await verifier.aclose()
            await wrong.aclose()
            nursery.cancel_scope.cancel()


async def test_a_protected_server_can_verify_by_introspection() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            # The JWT verifier serves this server; a second server would use introspection.
            protected.auth.register_client(
                client_id="rs", secret="s", grant_types=["client_credentials"]
            )
            verifier = IntrospectionVerifier(
                protected.auth.issuer + "/introspect", client_id="rs", client_secret="s"
            )
            access = await verifier.verify(protected.token("zoe"), resource=protected.url)
            assert access.subject == "zoe"
            answer = await client.get(protected.base + "/.well-known/oauth-protected-resource")
            assert answer.status_code == 200


async def test_a_failing_jwks_is_asked_once_per_refresh_interval() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            keys.mode = "error"
            verifier = JwtVerifier(ISSUER, url, refresh_interval=0.5)
            for _ in range(4):
                with pytest.raises(VerifierUnavailable, match="500"):
                    await verifier.verify(keys.sign({}), resource=RESOURCE)
            assert keys.fetches == 1
            keys.mode = "ok"
            await trio.sleep(0.6)
            assert (await verifier.verify(keys.sign({}), resource=RESOURCE)).subject == "alice"
            assert keys.fetches == 2


async def test_concurrent_requests_share_one_fetch() -> None:
    with trio.fail_after(IO_LIMIT):
        async with key_server() as (keys, url):
            verifier = JwtVerifier(ISSUER, url)
            token = keys.sign({})
            subjects: list[str] = []

            async def one() -> None:
                subjects.append((await verifier.verify(token, resource=RESOURCE)).subject)

            async with trio.open_nursery() as nursery:
                for _ in range(10):
                    nursery.start_soon(one)
            assert subjects == ["alice"] * 10
            assert keys.fetches == 1
