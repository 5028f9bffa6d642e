"""CORS on the MCP endpoint: a page of an origin the Origin check lets in may talk to it from
the browser (preflights answered, the session id and the challenge readable); a page of any
other origin is refused as before, and a request without ``Origin`` gets nothing added."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from http_client_for_tests import TestConnection, open_test_connection
from test_streamable_http import make_server, serve

from mcptrio.auth.server import BearerAuth
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.cors import allowed_request_headers
from mcptrio.transports.http.endpoints.security import HttpSecurity

PAGE = "http://localhost:5173"
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "page", "version": "1"},
        },
    }
).encode()
JSON_POST = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]


@asynccontextmanager
async def open_protected_connection() -> AsyncIterator[TestConnection]:
    """A connection to an endpoint that takes the development authorization server's tokens."""
    from mcptrio.auth.dev_server import DevAuthorizationServer

    auth = DevAuthorizationServer()
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(auth.serve)
        bearer = BearerAuth(
            auth.verifier(), authorization_servers=[issuer], resource="http://127.0.0.1/mcp"
        )
        app = McpHttpApp(make_server(), security=HttpSecurity(authenticator=bearer))
        async with serve("builtin-h11", app) as url, open_test_connection(url) as conn:
            yield conn
        nursery.cancel_scope.cancel()


def preflight(origin: str) -> list[tuple[str, str]]:
    return [
        ("origin", origin),
        ("access-control-request-method", "POST"),
        ("access-control-request-headers", "content-type, mcp-protocol-version, x-tracking"),
    ]


@pytest.mark.parametrize("front_end", ["builtin-h11", "hypercorn"])
async def test_a_preflight_from_an_allowed_origin_names_the_mcp_headers(front_end: str) -> None:
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(make_server())) as url,
            open_test_connection(url) as conn,
        ):
            answer = await conn.request("OPTIONS", "/mcp", headers=preflight(PAGE))
    assert answer.status == 204
    assert answer.header("access-control-allow-origin") == PAGE.encode()
    assert b"POST" in (answer.header("access-control-allow-methods") or b"")
    assert answer.header("access-control-allow-headers") == b"content-type, mcp-protocol-version"
    assert answer.header("access-control-allow-credentials") is None


async def test_a_preflight_from_another_origin_is_refused() -> None:
    with trio.fail_after(10):
        async with (
            serve("builtin-h11", McpHttpApp(make_server())) as url,
            open_test_connection(url) as conn,
        ):
            answer = await conn.request(
                "OPTIONS", "/mcp", headers=preflight("https://evil.example")
            )
    assert answer.status == 403
    assert answer.header("access-control-allow-origin") is None


async def test_a_page_reads_the_session_id_of_its_answer() -> None:
    with trio.fail_after(10):
        async with (
            serve("builtin-h11", McpHttpApp(make_server())) as url,
            open_test_connection(url) as conn,
        ):
            answer = await conn.request(
                "POST", "/mcp", headers=[*JSON_POST, ("origin", PAGE)], body=INITIALIZE
            )
            plain = await conn.request("POST", "/mcp", headers=JSON_POST, body=INITIALIZE)
    assert answer.status == 200
    assert answer.header("access-control-allow-origin") == PAGE.encode()
    assert b"Mcp-Session-Id" in (answer.header("access-control-expose-headers") or b"")
    assert answer.header("mcp-session-id") is not None
    # Not from a browser: nothing added.
    assert plain.status == 200
    assert plain.header("access-control-allow-origin") is None


async def test_a_page_reads_the_challenge_of_a_protected_endpoint() -> None:
    with trio.fail_after(10):
        async with open_protected_connection() as conn:
            answer = await conn.request(
                "POST", "/mcp", headers=[*JSON_POST, ("origin", PAGE)], body=INITIALIZE
            )
            # A preflight carries no credentials, and is answered all the same.
            allowed = await conn.request("OPTIONS", "/mcp", headers=preflight(PAGE))
    assert answer.status == 401
    assert answer.header("access-control-allow-origin") == PAGE.encode()
    assert b"WWW-Authenticate" in (answer.header("access-control-expose-headers") or b"")
    assert allowed.status == 204


async def test_the_public_metadata_keeps_its_own_single_allow_origin() -> None:
    with trio.fail_after(10):
        async with open_protected_connection() as conn:
            answer = await conn.request(
                "GET", "/.well-known/oauth-protected-resource/mcp", headers=[("origin", PAGE)]
            )
    assert answer.status == 200
    # One value: a browser refuses an answer that allows two.
    assert [v for k, v in answer.headers if k == b"access-control-allow-origin"] == [b"*"]


def test_only_the_transports_request_headers_are_allowed() -> None:
    requested = b"Content-Type, Authorization, Mcp-Session-Id, Mcp-Param-Region, Cookie, X-Y"
    allowed = allowed_request_headers(requested)
    assert allowed == b"content-type, authorization, mcp-session-id, mcp-param-region"
    assert allowed_request_headers(None) == b""
