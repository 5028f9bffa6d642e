"""The official Python SDK's client logs in to a protected mcptrio server, through mcptrio's
development authorization server, with the SDK's own OAuth provider (``mcp.client.auth``).

The browser is played headlessly: the redirect handler follows the authorization URL to the
development server, which approves at once and redirects to the client's callback; the callback
handler reads the code from that redirect. Everything else (PRM discovery from the 401's
``WWW-Authenticate``, authorization server metadata, dynamic client registration, PKCE, the
``resource`` parameter, the token request, step-up on 403) is the SDK's.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
import trio

from oauth_servers import (
    FRONT_ENDS,
    IO_LIMIT,
    HeadlessBrowser,
    MemoryStorage,
    oauth_provider,
    open_protected,
)

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult


async def sdk_call(url: str, auth: httpx2.Auth, tool: str) -> CallToolResult:
    """Call ``tool`` at ``url`` with the SDK's client, its HTTP requests authenticated by
    ``auth``."""
    async with (
        httpx2.AsyncClient(auth=auth) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await session.call_tool(tool, {})


@pytest.mark.parametrize("front_end", FRONT_ENDS)
async def test_the_sdk_client_logs_in_through_the_dev_server_and_calls_a_tool(
    front_end: str,
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected(front_end) as protected:
            browser = HeadlessBrowser()
            storage = MemoryStorage()
            auth = oauth_provider(protected.url, browser, storage)
            result = await sdk_call(protected.url, auth, "whoami")
            assert not result.is_error
            assert result.content[0].text == "dev-user"  # type: ignore[union-attr]
            # One login, with PKCE S256 and the resource parameter, by a registered client.
            assert len(browser.authorization_urls) == 1
            asked = parse_qs(urlsplit(browser.authorization_urls[0]).query)
            assert asked["code_challenge_method"] == ["S256"]
            assert asked["resource"] == [protected.url]
            # The challenge's scope, and offline_access (SEP-2207) since the server lists it.
            assert asked["scope"] == ["mcp offline_access"]
            assert storage.client is not None and storage.tokens is not None
            assert protected.calls == [("whoami", "dev-user", frozenset({"mcp", "offline_access"}))]


async def test_the_sdk_client_steps_up_when_a_tool_needs_another_scope() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            browser = HeadlessBrowser()
            auth = oauth_provider(protected.url, browser, MemoryStorage())
            result = await sdk_call(protected.url, auth, "reset")
            assert result.content[0].text == "reset"  # type: ignore[union-attr]
            # The 403's challenge named the scopes: the second login asked for them.
            assert len(browser.authorization_urls) == 2
            second = parse_qs(urlsplit(browser.authorization_urls[1]).query)
            assert set(second["scope"][0].split()) >= {"admin", "mcp"}
            assert [call[:2] for call in protected.calls] == [("reset", "dev-user")]
            assert {"mcp", "admin"} <= protected.calls[0][2]
