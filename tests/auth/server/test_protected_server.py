"""A protected mcptrio server over HTTP: metadata, challenges, 401/403/404, the principal.

Real peers throughout: a development authorization server issues the tokens, the server runs
on both front ends, and calls come from httpx (raw HTTP), mcptrio's own client (both eras) and
the official Python SDK's client with its OAuth provider.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
import trio

import mcptrio
from mcptrio.client.options import Revisions
from mcptrio.client.targets import http as http_target
from mcptrio.client.targets import websocket as websocket_target

from oauth_servers import FRONT_ENDS, IO_LIMIT, open_protected

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(params=FRONT_ENDS)
def front_end(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on each front end the protected server is served by."""
    return str(request.param)


def initialize_body(rid: int = 1, version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


def call_body(name: str, rid: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}


def challenge_params(value: str) -> dict[str, str]:
    scheme, _, rest = value.partition(" ")
    assert scheme == "Bearer"
    params = {}
    for part in rest.split(", "):
        key, _, quoted = part.partition("=")
        params[key] = json.loads(quoted)
    return params


async def initialize(client: httpx2.AsyncClient, url: str, token: str) -> str:
    answer = await client.post(
        url, json=initialize_body(), headers={**ACCEPT, "authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


async def test_metadata_is_served_at_both_well_known_paths_without_credentials(
    front_end: str,
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(front_end) as protected, httpx2.AsyncClient() as client:
            for path in (
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
            ):
                answer = await client.get(protected.base + path)
                assert answer.status_code == 200
                assert answer.headers["access-control-allow-origin"] == "*"
                document = answer.json()
                assert document == {
                    "resource": protected.url,
                    "authorization_servers": [protected.auth.issuer],
                    "scopes_supported": ["admin", "mcp"],
                    "bearer_methods_supported": ["header"],
                    # It checks DPoP proofs of DPoP-bound tokens (RFC 9449, RFC 9728).
                    "dpop_signing_alg_values_supported": [
                        "ES256",
                        "ES384",
                        "PS256",
                        "RS256",
                        "EdDSA",
                    ],
                }
            elsewhere = await client.get(protected.base + "/.well-known/oauth-protected-resource/x")
            assert elsewhere.status_code == 404
            preflight = await client.options(
                protected.base + "/.well-known/oauth-protected-resource/mcp",
                headers={
                    "origin": "https://inspector.example",
                    "access-control-request-method": "GET",
                    "access-control-request-headers": "mcp-protocol-version",
                },
            )
            assert preflight.status_code == 204
            assert preflight.headers["access-control-allow-origin"] == "*"


async def test_a_request_without_a_token_gets_401_with_the_metadata_and_scope(
    front_end: str,
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(front_end) as protected, httpx2.AsyncClient() as client:
            answer = await client.post(protected.url, json=initialize_body(), headers=ACCEPT)
            assert answer.status_code == 401
            params = challenge_params(answer.headers["www-authenticate"])
            assert params == {
                "resource_metadata": protected.base + "/.well-known/oauth-protected-resource/mcp",
                "scope": "mcp",
            }
            # A token in the query string is not looked at (the MCP spec forbids them there).
            token = protected.token()
            answer = await client.post(
                protected.url + f"?access_token={token}", json=initialize_body(), headers=ACCEPT
            )
            assert answer.status_code == 401
            assert protected.calls == []


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        "a.b.c",
        "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
        "x" * 20_000,
        "é.é.é",
    ],
)
async def test_malformed_tokens_get_401_invalid_token(token: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            answer = await client.post(
                protected.url,
                json=initialize_body(),
                headers={**ACCEPT, "authorization": f"Bearer {token}".encode()},  # type: ignore[dict-item]
            )
            assert answer.status_code == 401
            params = challenge_params(answer.headers["www-authenticate"])
            assert params["error"] == "invalid_token"
            assert protected.calls == []


async def test_tokens_for_another_resource_expired_or_unsigned_by_the_issuer_get_401() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            other_issuer = mcptrio.auth.dev_server.DevAuthorizationServer(protected.auth.issuer)
            bad = {
                "audience": protected.token(resource="http://127.0.0.1:1/other"),
                "expiry": protected.token(lifetime=-3600),
                "no audience": protected.auth.issue_token("alice", scopes=["mcp"]),
                "signature": other_issuer.issue_token(
                    "alice", scopes=["mcp"], resource=protected.url
                ),
            }
            for why, token in bad.items():
                answer = await client.post(
                    protected.url,
                    json=initialize_body(),
                    headers={**ACCEPT, "authorization": f"Bearer {token}"},
                )
                assert answer.status_code == 401, why
                params = challenge_params(answer.headers["www-authenticate"])
                assert params["error"] == "invalid_token", why
            assert protected.calls == []


async def open_batch_session(client: httpx2.AsyncClient, url: str, token: str) -> dict[str, str]:
    """A 2025-03-26 session (the revision with batches), initialized: its request headers."""
    answer = await client.post(
        url,
        json=initialize_body(version="2025-03-26"),
        headers={**ACCEPT, "authorization": f"Bearer {token}"},
    )
    headers = {
        **ACCEPT,
        "authorization": f"Bearer {token}",
        "mcp-session-id": answer.headers["mcp-session-id"],
    }
    await client.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    return headers


async def test_a_call_without_the_tools_scope_gets_403_insufficient_scope(front_end: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(front_end) as protected, httpx2.AsyncClient() as client:
            token = protected.token()
            session = await initialize(client, protected.url, token)
            headers = {**ACCEPT, "authorization": f"Bearer {token}", "mcp-session-id": session}
            answer = await client.post(protected.url, json=call_body("reset"), headers=headers)
            assert answer.status_code == 403
            params = challenge_params(answer.headers["www-authenticate"])
            assert params["error"] == "insufficient_scope"
            assert params["scope"] == "admin mcp"
            assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
            for body in (
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "prompts/get",
                    "params": {"name": "secrets_prompt"},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "resources/read",
                    "params": {"uri": "notes://private/a"},
                },
            ):
                answer = await client.post(protected.url, json=body, headers=headers)
                assert answer.status_code == 403
            assert protected.calls == []
            # With the scope (step-up), the same session may call it.
            stepped = protected.token(scopes=("mcp", "admin"))
            headers["authorization"] = f"Bearer {stepped}"
            answer = await client.post(protected.url, json=call_body("reset"), headers=headers)
            assert answer.status_code == 200
            assert protected.calls == [("reset", "alice", frozenset({"mcp", "admin"}))]


async def test_a_token_without_the_servers_own_scope_gets_403() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            token = protected.token(scopes=())
            answer = await client.post(
                protected.url,
                json=initialize_body(),
                headers={**ACCEPT, "authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 403
            assert challenge_params(answer.headers["www-authenticate"])["scope"] == "mcp"


async def test_a_session_id_used_with_another_principals_token_gets_404(front_end: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(front_end) as protected, httpx2.AsyncClient() as client:
            session = await initialize(client, protected.url, protected.token("alice"))
            mallory = protected.token("mallory")
            headers = {**ACCEPT, "authorization": f"Bearer {mallory}", "mcp-session-id": session}
            answer = await client.post(protected.url, json=call_body("whoami"), headers=headers)
            assert answer.status_code == 404
            answer = await client.delete(protected.url, headers=headers)
            assert answer.status_code == 404
            assert protected.calls == []
            # Alice still can.
            headers["authorization"] = f"Bearer {protected.token('alice')}"
            answer = await client.post(protected.url, json=call_body("whoami"), headers=headers)
            assert answer.status_code == 200
            assert protected.calls == [("whoami", "alice", frozenset({"mcp"}))]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25", "2025-03-26"])
async def test_the_principal_reaches_handlers_in_both_eras(revision: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            token = protected.token("bob")
            target = http_target(protected.url, headers={"Authorization": f"Bearer {token}"})
            async with mcptrio.open_client(
                target, revisions=Revisions(protocol_version=revision)
            ) as client:
                result = await client.call_tool("whoami", {})
                assert result.content[0].text == "bob"  # type: ignore[union-attr]
                with pytest.raises(mcptrio.McpError):
                    await client.call_tool("reset", {})
            assert protected.calls == [("whoami", "bob", frozenset({"mcp"}))]


async def test_a_stateless_server_checks_tokens_too() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(stateless=True) as protected, httpx2.AsyncClient() as client:
            answer = await client.post(protected.url, json=call_body("whoami"), headers=ACCEPT)
            assert answer.status_code == 401
            token = protected.token("carol")
            target = http_target(protected.url, headers={"Authorization": f"Bearer {token}"})
            async with mcptrio.open_client(target) as mcp:
                result = await mcp.call_tool("whoami", {})
                assert result.content[0].text == "carol"  # type: ignore[union-attr]


async def test_over_websocket_the_upgrade_needs_a_token_and_calls_need_their_scopes() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            ws_url = protected.url.replace("http://", "ws://", 1)
            with pytest.raises(mcptrio.McpError, match="401"):
                async with mcptrio.open_client(ws_url):
                    pass
            token = protected.token("wendy")
            target = websocket_target(ws_url, headers={"Authorization": f"Bearer {token}"})
            async with mcptrio.open_client(target) as client:
                result = await client.call_tool("whoami", {})
                assert result.content[0].text == "wendy"  # type: ignore[union-attr]
                with pytest.raises(mcptrio.InvalidRequest) as refused:
                    await client.call_tool("reset", {})
                assert refused.value.data == {"error": "insufficient_scope", "scope": "admin"}
            assert protected.calls == [("whoami", "wendy", frozenset({"mcp"}))]


async def test_a_batch_member_without_its_scope_gets_a_json_rpc_error() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            headers = await open_batch_session(client, protected.url, protected.token())
            answer = await client.post(
                protected.url, json=[call_body("whoami", 2), call_body("reset", 3)], headers=headers
            )
            assert answer.status_code == 200
            by_id = {item["id"]: item for item in answer.json()}
            assert by_id[2]["result"]["content"][0]["text"] == "alice"
            assert by_id[3]["error"]["code"] == -32600
            assert by_id[3]["error"]["data"]["error"] == "insufficient_scope"
            assert [call[0] for call in protected.calls] == ["whoami"]


async def test_the_legacy_sse_endpoints_check_tokens_sessions_and_scopes() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            refused = await client.get(protected.base + "/sse")
            assert refused.status_code == 401
            alice = {"authorization": f"Bearer {protected.token('alice')}"}
            async with client.stream("GET", protected.base + "/sse", headers=alice) as stream:
                lines = stream.aiter_lines()
                endpoint = ""
                async for line in lines:
                    if line.startswith("data: "):
                        endpoint = line.removeprefix("data: ")
                        break
                post_url = protected.base + endpoint
                mallory = {"authorization": f"Bearer {protected.token('mallory')}"}
                stolen = await client.post(post_url, json=initialize_body(), headers=mallory)
                assert stolen.status_code == 404
                answer = await client.post(post_url, json=call_body("reset"), headers=alice)
                assert answer.status_code == 403
                assert challenge_params(answer.headers["www-authenticate"])["scope"] == "admin mcp"
            assert protected.calls == []
