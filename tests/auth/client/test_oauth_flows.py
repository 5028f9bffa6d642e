"""The OAuth client against a real authorization server and protected resource on loopback.

Each test serves an :class:`~oauth_peer.OAuthPeer` with mcptrio's built-in HTTP server and sends
requests through the HTTP client transports' auth hook (``AuthorizedRequests``), the path every
MCP request takes; the last tests run a whole MCP session through it.
"""

from __future__ import annotations

import stat
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from oauth_peer import Behaviour, OAuthPeer

import mcptrio
import mcptrio.auth.client.store
from mcptrio.auth.client import (
    AuthorizationCode,
    AuthorizationError,
    AuthorizationResponseError,
    ClientCredentials,
    ClientMetadata,
    ClientRegistration,
    DiscoveryError,
    EnterpriseManaged,
    FileTokenStore,
    HeadlessUserAgent,
    InsufficientScope,
    JwtBearer,
    LoopbackBrowser,
    OAuthClient,
    TokenError,
    Tokens,
)
from mcptrio.transports.http.client.auth_hook import AuthorizedRequests
from mcptrio.transports.http.client.legacy_sse import open_legacy_sse_client_transport
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.client_pool import HttpClientPool

TIMEOUT = 10


@asynccontextmanager
async def serving(peer: OAuthPeer) -> AsyncIterator[OAuthPeer]:
    async with trio.open_nursery() as nursery:
        if isinstance(peer.inner, McpHttpApp):
            await nursery.start(peer.inner.run)
        peer.url = await nursery.start(partial(serve_builtin, peer))
        yield peer
        nursery.cancel_scope.cancel()


def headless(**options: Any) -> OAuthClient:
    return OAuthClient(AuthorizationCode(HeadlessUserAgent()), timeout=TIMEOUT, **options)


async def get(oauth: OAuthClient, url: str) -> tuple[int, Any]:
    """A GET through the auth hook: status and JSON body."""
    pool = HttpClientPool()
    try:
        async with AuthorizedRequests(pool, oauth).request("GET", url) as response:
            body = await response.read(1 << 16)
            return response.status, msgspec.json.decode(body) if body else None
    finally:
        await pool.aclose()


# ---------------------------------------------------------------- logging in


async def test_a_401_logs_in_with_pkce_dcr_and_the_resource_parameter() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(prm_scopes=["read", "write"]))) as peer:
            oauth = headless()
            assert await get(oauth, f"{peer.url}/mcp") == (
                200,
                {"scopes": ["read", "write"], "scheme": "Bearer"},
            )
            [registration] = peer.paths("/register")
            assert registration["application_type"] == "native"
            assert "refresh_token" in registration["grant_types"]
            [authorize] = peer.paths("/authorize")
            assert authorize["code_challenge_method"] == "S256"
            assert authorize["resource"] == f"{peer.url}/mcp"
            assert authorize["scope"] == "read write"
            [token] = peer.paths("/token")
            assert token["resource"] == f"{peer.url}/mcp"
            assert token["code_verifier"]
            # The token is reused: no second login.
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            assert len(peer.paths("/authorize")) == 1


async def test_the_challenge_scope_wins_and_no_scope_is_sent_when_none_is_known() -> None:
    with trio.fail_after(TIMEOUT):
        behaviour = Behaviour(prm_scopes=["read", "write"], challenge_scope="read")
        async with serving(OAuthPeer(behaviour)) as peer:
            await get(headless(), f"{peer.url}/mcp")
            assert peer.paths("/authorize")[0]["scope"] == "read"
        async with serving(OAuthPeer()) as peer:
            await get(headless(), f"{peer.url}/mcp")
            assert "scope" not in peer.paths("/authorize")[0]


async def test_offline_access_is_asked_for_only_when_the_server_lists_it() -> None:
    with trio.fail_after(TIMEOUT):
        listed = Behaviour(prm_scopes=["read"], as_scopes=["read", "offline_access"])
        async with serving(OAuthPeer(listed)) as peer:
            await get(headless(), f"{peer.url}/mcp")
            assert peer.paths("/authorize")[0]["scope"] == "read offline_access"
        async with serving(OAuthPeer(Behaviour(prm_scopes=["read"], as_scopes=["read"]))) as peer:
            await get(headless(), f"{peer.url}/mcp")
            assert peer.paths("/authorize")[0]["scope"] == "read"


async def test_a_403_insufficient_scope_steps_up_to_the_union_of_scopes() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(challenge_scope="read"))) as peer:
            oauth = headless()
            status, body = await get(oauth, f"{peer.url}/mcp/admin")
            assert status == 200
            assert body["scopes"] == ["read", "admin"]
            assert [a["scope"] for a in peer.paths("/authorize")] == ["read", "read admin"]


async def test_a_scope_the_server_never_accepts_stops_after_one_step_up() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(challenge_scope="read"))) as peer:
            oauth = headless()
            await get(oauth, f"{peer.url}/mcp/admin")
            # The server now refuses every token for admin.
            for token in peer.tokens.values():
                token.scopes = ["read"]
            with pytest.raises(InsufficientScope):
                await get(oauth, f"{peer.url}/mcp/admin")
            assert len(peer.paths("/authorize")) <= 3


async def test_a_refused_token_is_refreshed_rather_than_logging_in_again() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as peer:
            oauth = headless()
            await get(oauth, f"{peer.url}/mcp")
            for token in peer.tokens.values():
                token.valid = False
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            grants = [t["grant_type"] for t in peer.paths("/token")]
            assert grants == ["authorization_code", "refresh_token"]
            assert len(peer.paths("/authorize")) == 1


async def test_an_expiring_token_is_refreshed_before_it_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(expires_in=60))) as peer:
            oauth = headless()
            await get(oauth, f"{peer.url}/mcp")
            # A minute later the token is about to expire.
            later = time.time() + 60
            monkeypatch.setattr(mcptrio.auth.client.store.time, "time", lambda: later)
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            grants = [t["grant_type"] for t in peer.paths("/token")]
            assert grants == ["authorization_code", "refresh_token"]
            # Refused once (before the login), then never again.
            assert len(peer.paths("/mcp")) == 3


async def test_requests_refused_together_cause_one_login() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as peer:
            oauth = headless()
            statuses: list[int] = []

            async def one() -> None:
                statuses.append((await get(oauth, f"{peer.url}/mcp"))[0])

            async with trio.open_nursery() as nursery:
                for _ in range(5):
                    nursery.start_soon(one)
            assert statuses == [200] * 5
            assert len(peer.paths("/authorize")) == 1


async def test_a_server_refusing_the_token_it_just_had_issued_gets_one_login() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(refuse_all=True))) as peer:
            with pytest.raises(AuthorizationError, match="just issued"):
                await get(headless(), f"{peer.url}/mcp")
            assert len(peer.paths("/mcp")) == 2
            assert len(peer.paths("/authorize")) == 1


async def test_a_client_id_metadata_document_replaces_registration() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(cimd=True))) as peer:
            document_url = "https://app.example/oauth/client.json"
            oauth = headless(client=ClientMetadata(metadata_url=document_url))
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            assert peer.paths("/register") == []
            assert peer.paths("/authorize")[0]["client_id"] == document_url


async def test_a_new_authorization_server_gets_a_new_registration_and_no_old_token() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as first, serving(OAuthPeer()) as second:
            oauth = headless()
            await get(oauth, f"{first.url}/mcp")
            old_client = first.paths("/authorize")[0]["client_id"]
            # The resource moves to the second authorization server; its tokens are not valid.
            first.behaviour.authorization_servers = [second.url]
            first.tokens = second.tokens
            assert (await get(oauth, f"{first.url}/mcp"))[0] == 200
            assert len(second.paths("/register")) == 1
            assert second.paths("/authorize")[0]["client_id"] != old_client
            # No refresh token of the first server was offered to the second.
            assert [t["grant_type"] for t in second.paths("/token")] == ["authorization_code"]


async def test_client_credentials_use_the_pre_registered_secret() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(challenge_scope="read"))) as peer:
            peer.clients["machine"] = "s3cret"
            oauth = OAuthClient(
                ClientCredentials(),
                credentials=[ClientRegistration(client_id="machine", client_secret="s3cret")],
            )
            assert (await get(oauth, f"{peer.url}/mcp"))[1]["scopes"] == ["read"]
            assert peer.paths("/register") == []
            assert peer.paths("/authorize") == []


async def test_a_workload_presents_its_assertion_and_a_refusal_is_final() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as peer:
            workload = [ClientRegistration(client_id="workload", token_endpoint_auth_method="none")]
            oauth = OAuthClient(JwtBearer("workload-jwt"), credentials=workload)
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            [token] = peer.paths("/token")
            assert token["assertion"] == "workload-jwt"
            assert token["client_id"] == "workload"
        async with serving(OAuthPeer()) as peer:
            oauth = OAuthClient(JwtBearer("expired-jwt"), credentials=workload)
            for _ in range(2):
                with pytest.raises(TokenError, match="invalid_grant"):
                    await get(oauth, f"{peer.url}/mcp")
            assert len(peer.paths("/token")) == 1


async def test_enterprise_managed_authorization_trades_the_sso_token_for_an_id_jag() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as peer:
            peer.clients["mcp-client"] = "s3cret"
            grant = EnterpriseManaged(
                idp_token_endpoint=f"{peer.url}/idp/token",
                identity_assertion="sso-id-token",
                idp_client_id="idp-client",
            )
            oauth = OAuthClient(
                grant,
                credentials=[ClientRegistration(client_id="mcp-client", client_secret="s3cret")],
            )
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            [exchange] = peer.paths("/idp/token")
            assert exchange["audience"] == peer.url
            assert exchange["resource"] == f"{peer.url}/mcp"
            assert peer.paths("/token")[0]["assertion"] == f"id-jag-for-{peer.url}"
            assert peer.paths("/authorize") == []


async def test_dpop_binds_the_token_and_answers_the_resource_nonce() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(dpop=True, resource_nonce="n-1"))) as peer:
            oauth = headless()
            assert (await get(oauth, f"{peer.url}/mcp"))[1]["scheme"] == "DPoP"
            # A second request gets a fresh proof with the nonce remembered.
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200


async def test_tokens_survive_in_a_file_store_readable_by_its_owner_only(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT):
        store_path = tmp_path / "tokens.json"
        async with serving(OAuthPeer()) as peer:
            await get(headless(store=FileTokenStore(store_path)), f"{peer.url}/mcp")
            assert stat.S_IMODE(store_path.stat().st_mode) == 0o600
            # Another client with the same file logs in no more.
            await get(headless(store=FileTokenStore(store_path)), f"{peer.url}/mcp")
            assert len(peer.paths("/authorize")) == 1
            stored = await FileTokenStore(store_path).get_tokens(f"{peer.url}/mcp")
            assert isinstance(stored, Tokens) and stored.issuer == peer.url


async def test_writers_sharing_a_file_store_lose_no_write_and_leave_no_temporary_file(
    tmp_path: Path,
) -> None:
    # As several command-line processes do: each its own store object, writing at once.
    store_path = tmp_path / "tokens.json"
    stores = [FileTokenStore(store_path) for _ in range(6)]
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            for n, store in enumerate(stores):
                for m in range(8):
                    token = Tokens(access_token=f"{n}-{m}" * 500)
                    nursery.start_soon(store.set_tokens, f"https://s{n}.example/{m}", token)
                nursery.start_soon(
                    store.set_registration,
                    f"https://as{n}.example",
                    ClientRegistration(client_id="c"),
                )
    reader = FileTokenStore(store_path)
    for n in range(6):
        assert await reader.get_registration(f"https://as{n}.example") is not None
        for m in range(8):
            kept = await reader.get_tokens(f"https://s{n}.example/{m}")
            assert kept is not None and kept.access_token == f"{n}-{m}" * 500
    left = sorted(path.name for path in await trio.Path(tmp_path).iterdir())
    assert left == ["tokens.json", "tokens.json.lock"]
    assert stat.S_IMODE(store_path.stat().st_mode) == 0o600


async def test_the_loopback_browser_catches_the_redirect() -> None:
    opened: list[str] = []

    def browser(url: str) -> None:
        # A browser: follows the authorization server's redirect to the loopback listener.
        import urllib.request

        opened.append(url)
        with urllib.request.urlopen(url, timeout=5) as answer:
            assert b"close this window" in answer.read()

    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer()) as peer:
            oauth = OAuthClient(AuthorizationCode(LoopbackBrowser(open_url=browser)))
            assert (await get(oauth, f"{peer.url}/mcp"))[0] == 200
            assert opened and opened[0].startswith(f"{peer.url}/authorize?")
            assert peer.paths("/authorize")[0]["redirect_uri"].startswith("http://127.0.0.1:")


# ---------------------------------------------------------------- refusing bad input


@pytest.mark.parametrize(
    ("behaviour", "error", "words"),
    [
        (Behaviour(oversized_metadata=True), DiscoveryError, "larger than"),
        (Behaviour(token_answer=b"[" * 300_000), TokenError, "larger than"),
        (Behaviour(metadata_redirect="http://127.0.0.2:9/x"), DiscoveryError, "another origin"),
        (Behaviour(metadata_redirect="http://[::1"), DiscoveryError, "invalid URL"),
        (
            Behaviour(authorization_servers=["http://auth.example.com"]),
            DiscoveryError,
            "https",
        ),
        (Behaviour(metadata_issuer="https://attacker.example"), DiscoveryError, "issuer"),
        (Behaviour(prm_resource="https://evil.example/mcp"), DiscoveryError, "evil.example"),
        (Behaviour(pkce_methods=None), AuthorizationError, "S256"),
        (Behaviour(iss_in_redirect="https://evil.example"), AuthorizationResponseError, "issuer"),
        (Behaviour(iss_in_redirect=None), AuthorizationResponseError, "iss"),
        (Behaviour(token_answer=b"not json"), TokenError, "JSON"),
        (Behaviour(token_answer=b'{"token_type": "Bearer"}'), TokenError, "access_token"),
        (
            Behaviour(token_answer=b'{"access_token": "t", "token_type": "mac"}'),
            TokenError,
            "token_type",
        ),
        (
            Behaviour(
                token_answer=b'{"access_token": "t", "token_type": "Bearer", "expires_in": -5}'
            ),
            TokenError,
            "expires_in",
        ),
    ],
)
async def test_bad_metadata_or_answers_are_clear_errors_and_no_token_is_sent(
    behaviour: Behaviour, error: type[Exception], words: str
) -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(behaviour)) as peer:
            with pytest.raises(error, match=words):
                await get(headless(), f"{peer.url}/mcp")
            # Nothing past the refusal reached the resource with a token.
            assert all(t.valid for t in peer.tokens.values())
            assert len(peer.paths("/mcp")) == 1


async def test_a_failed_login_is_not_repeated_by_the_next_request() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(Behaviour(token_answer=b"{}"))) as peer:
            oauth = headless()
            for _ in range(2):
                with pytest.raises(TokenError):
                    await get(oauth, f"{peer.url}/mcp")
            assert len(peer.paths("/token")) == 1


# ---------------------------------------------------------------- a whole MCP session


async def test_an_mcp_client_logs_in_and_calls_a_tool() -> None:
    server = mcptrio.Server("protected")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with trio.fail_after(TIMEOUT):
        async with serving(OAuthPeer(inner=McpHttpApp(server))) as peer:
            target = mcptrio.client.http(f"{peer.url}/mcp", auth=headless())
            async with mcptrio.open_client(target) as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
                assert result.structured_content == {"result": 5}
            assert len(peer.paths("/authorize")) == 1


async def test_the_legacy_sse_transport_logs_in_too() -> None:
    server = mcptrio.Server("protected")

    @server.tool()
    def echo(text: str) -> str:
        return text

    with trio.fail_after(TIMEOUT):
        behaviour = Behaviour(prm_at_root=True)
        async with serving(OAuthPeer(behaviour, inner=McpHttpApp(server))) as peer:
            oauth = headless()
            async with (
                open_legacy_sse_client_transport(f"{peer.url}/sse", auth=oauth) as transport,
                mcptrio.open_client(transport) as client,
            ):
                result = await client.call_tool("echo", {"text": "hi"})
                assert [block.text for block in result.content] == ["hi"]  # type: ignore[union-attr]
            assert len(peer.paths("/authorize")) == 1
            assert len(peer.paths("/messages")) >= 2
