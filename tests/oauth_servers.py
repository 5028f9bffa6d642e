"""What the OAuth tests share: a development authorization server, and a protected server.

Every server binds loopback port 0; each test that does I/O runs under ``trio.fail_after``.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import trio
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

import mcptrio
from mcptrio.auth.dev_server import DevAuthorizationServer
from mcptrio.auth.server import BearerAuth, TokenVerifier
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity
from mcptrio.transports.http.serve import serve_http

#: Seconds any one test may take for its I/O.
IO_LIMIT = 20.0
#: The HTTP front ends a protected server is tested on (``@pytest.mark.parametrize``).
FRONT_ENDS = ("builtin", "hypercorn")
#: The headers of a raw Streamable HTTP POST, and the body of an ``initialize`` in one.
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


@dataclass
class Protected:
    """A protected server under test: its URLs, its authorization server, what it saw."""

    base: str
    url: str
    auth: DevAuthorizationServer
    app: McpHttpApp
    #: (tool, principal subject, principal scopes) of every call a handler ran.
    calls: list[tuple[str, str | None, frozenset[str]]] = field(default_factory=list)

    def token(
        self, subject: str = "alice", *, scopes: tuple[str, ...] = ("mcp",), **kw: Any
    ) -> str:
        kw.setdefault("resource", self.url)
        return self.auth.issue_token(subject, scopes=scopes, **kw)


def protected_server(calls: list[tuple[str, str | None, frozenset[str]]]) -> mcptrio.Server:
    server = mcptrio.Server("protected")

    def record(name: str, ctx: Context) -> None:
        principal = ctx.principal
        scopes = getattr(principal, "scopes", frozenset())
        calls.append((name, None if principal is None else principal.subject, scopes))

    @server.tool
    async def whoami(ctx: Context) -> str:
        """Say who is calling."""
        record("whoami", ctx)
        principal = ctx.principal
        return "nobody" if principal is None else principal.subject

    @server.tool(scopes=["admin"])
    async def reset(ctx: Context) -> str:
        """Something only an admin may do."""
        record("reset", ctx)
        return "reset"

    @server.prompt(scopes=["admin"])
    def secrets_prompt(ctx: Context) -> str:
        record("secrets_prompt", ctx)
        return "the secrets"

    @server.resource("notes://private/{name}", scopes=["admin"])
    def private_note(name: str, ctx: Context) -> str:
        record("private_note", ctx)
        return f"note {name}"

    return server


@asynccontextmanager
async def open_protected(
    front_end: str = "builtin",
    *,
    verifier: TokenVerifier | None = None,
    scopes: tuple[str, ...] = ("mcp",),
    stateless: bool = False,
    auth: DevAuthorizationServer | None = None,
    **bearer_options: Any,
) -> AsyncIterator[Protected]:
    """A dev authorization server (``auth``, else one that approves every login) and a
    protected server (``/mcp``) using it."""
    if auth is None:
        auth = DevAuthorizationServer(scopes=("mcp", "admin", "offline_access"))
    calls: list[tuple[str, str | None, frozenset[str]]] = []
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(auth.serve)
        security = HttpSecurity()
        app = McpHttpApp(protected_server(calls), security=security, stateless=stateless)
        base = await nursery.start(partial(serve_http, app, front_end=front_end))  # type: ignore[arg-type]
        # The resource names the port, known once bound (port 0, on either front end); no
        # request arrives before this returns.
        security.authenticator = BearerAuth(
            verifier or auth.verifier(),
            authorization_servers=[issuer],
            resource=base + "/mcp",
            scopes=scopes,
            scopes_supported=("mcp", "admin"),
            **bearer_options,
        )
        try:
            yield Protected(base, base + "/mcp", auth, app, calls)
        finally:
            nursery.cancel_scope.cancel()


CALLBACK = "http://127.0.0.1:1/callback"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class HeadlessBrowser:
    """Plays the user's browser for the official SDK's OAuth provider: follows the authorization
    URL (logging in on the development server's form with ``login`` when it shows one) and
    hands the redirect's code to the SDK."""

    def __init__(self, login: tuple[str, str] | None = None) -> None:
        self.login = login
        self.redirects: list[str] = []
        self.authorization_urls: list[str] = []

    async def open(self, url: str) -> None:
        self.authorization_urls.append(url)
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            answer = await browser.get(url)
            if answer.status_code == 200 and self.login is not None:
                fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', answer.text))
                fields = {key: html.unescape(value) for key, value in fields.items()}
                name, password = self.login
                target = url.split("?", 1)[0]
                answer = await browser.post(
                    target, data={**fields, "username": name, "password": password}
                )
        assert answer.status_code == 302, answer.text
        self.redirects.append(answer.headers["location"])

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.redirects[-1]).query)
        assert "error" not in query, query
        return AuthorizationCodeResult(
            code=query["code"][0], state=query["state"][0], iss=query["iss"][0]
        )


def oauth_provider(
    url: str, browser: HeadlessBrowser, storage: MemoryStorage
) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="sdk test client",
        redirect_uris=[CALLBACK],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
