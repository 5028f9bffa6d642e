"""What the OAuth tests share: a development authorization server, and a protected server.

Every server binds loopback port 0; each test that does I/O runs under ``trio.fail_after``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

import mcptrio
from mcptrio.auth.dev_server import DevAuthorizationServer
from mcptrio.auth.server import BearerAuth, TokenVerifier
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity
from mcptrio.transports.http.serve import serve_http

#: Seconds any one test may take for its I/O.
IO_LIMIT = 20.0


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
) -> AsyncIterator[Protected]:
    """A dev authorization server and a protected server (``/mcp``) using it."""
    auth = DevAuthorizationServer(scopes=("mcp", "admin", "offline_access"))
    calls: list[tuple[str, str | None, frozenset[str]]] = []
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(auth.serve)
        bearer = BearerAuth(
            verifier or auth.verifier(),
            authorization_servers=[issuer],
            scopes=scopes,
            scopes_supported=("mcp", "admin"),
        )
        app = McpHttpApp(
            protected_server(calls),
            security=HttpSecurity(authenticator=bearer),
            stateless=stateless,
        )
        base = await nursery.start(partial(serve_http, app, front_end=front_end))  # type: ignore[arg-type]
        try:
            yield Protected(base, base + "/mcp", auth, app, calls)
        finally:
            nursery.cancel_scope.cancel()
