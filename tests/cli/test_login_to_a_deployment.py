"""Issue 39's first "done when": ``mcptrio run --workers 2 --redis URL --auth jwt ...`` serves a
protected server that ``mcptrio call --login`` (against the development authorization server)
and the official SDK client with its OAuth provider can both use."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
import trio
from redis_servers import RedisServer
from test_login import User
from test_run_workers import supervised

pytest.importorskip("mcptrio.auth.dev_server")
pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from programs import free_port

from mcptrio.auth.dev_server import DevAuthorizationServer

from oauth_servers import HeadlessBrowser, MemoryStorage, oauth_provider


async def sdk_whoami(url: str, auth: httpx2.Auth) -> bool:
    """Whether the official SDK's client, authenticated by ``auth``, calls ``whoami``."""
    async with (
        httpx2.AsyncClient(auth=auth) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("whoami", {})
    return not result.is_error


async def test_mcptrio_call_login_and_the_sdk_client_use_a_protected_server_with_workers(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    user = User(tmp_path)
    auth = DevAuthorizationServer(
        scopes=("mcp", "offline_access"), auto_approve=False, users={"ada": "lovelace"}
    )
    # The resource (the tokens' audience) names the port, so the port is chosen first.
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            issuer = await nursery.start(auth.serve)
            async with supervised(
                "--port", str(port), "--workers", "2", "--redis", redis_server.url,
                "--allow-host", "mcp.example.com", "--auth", "jwt", "--resource", resource,
                "--issuer", issuer, "--jwks-url", f"{issuer}/jwks", "--scope", "mcp",
            ) as supervisor:  # fmt: skip
                assert supervisor.url == resource
                called = await user.mcptrio("call", resource, "whoami", "--login")
                assert called.code == 0, called.stderr
                assert called.stdout.startswith("w")
                again = await user.mcptrio("call", resource, "whoami")
                assert (again.code, again.stderr) == (0, "")
                assert user.browser_visits() == 1

                browser = HeadlessBrowser(login=("ada", "lovelace"))
                provider = oauth_provider(resource, browser, MemoryStorage())
                assert await sdk_whoami(resource, provider)
                assert len(browser.authorization_urls) == 1
            nursery.cancel_scope.cancel()
