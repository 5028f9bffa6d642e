"""The shipped middleware examples (``examples/middleware.py``) work as their docstrings say,
on every transport and in both eras, and the program prints what the how-to shows."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from programs import ROOT, import_program, run_python

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, ClientIdentity, Revisions
from mcptrio.protocol.types import Implementation

from conftest import ForwardingTransport

EXAMPLE = ROOT / "examples" / "middleware.py"
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": Revisions(protocol_version="2026-07-28")}
PLACES = [
    ("memory", "handshake"),
    ("memory", "stateless"),
    ("http", "handshake"),
    ("http", "stateless"),
    ("websocket", "handshake"),
]


example = import_program("middleware_example", EXAMPLE)


@asynccontextmanager
async def connected(
    server: mcptrio.Server, place: str, era: str, name: str = "viewer"
) -> AsyncIterator[mcptrio.Client]:
    identity = ClientIdentity(info=Implementation(name=name, version="1.0"))
    options = {"revisions": ERAS[era], "identity": identity}
    if place == "memory":
        async with mcptrio.open_client(server, **options) as client:  # type: ignore[arg-type]
            yield client
        return
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http)
        if place == "websocket":
            url = url.replace("http://", "ws://")
        async with mcptrio.open_client(f"{url}/mcp", **options) as client:  # type: ignore[arg-type]
            yield client
        nursery.cancel_scope.cancel()


def test_the_program_prints_what_the_howto_shows() -> None:
    done = run_python(EXAMPLE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "viewer sees: ['read_note']",
        "read_note: buy milk",
        "delete_note refused: -32000 Not allowed to call tool 'delete_note'",
        "then refused: Rate limit: 1 requests a second, in bursts of 4 ['retryAfter']",
        "editor sees: ['read_note', 'delete_note']",
    ]
    logged = done.stderr.splitlines()
    assert "examples.middleware: tools/call delete_note error -32000 in" in "\n".join(logged)
    assert all(line.endswith(" ms") for line in logged), logged


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_logging_times_every_request(
    place: str, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = mcptrio.Server("logged", middleware=[example.log_requests])

    @server.tool
    async def nap() -> str:
        await trio.sleep(0.05)
        return "done"

    caplog.set_level(logging.INFO, logger="examples.middleware")
    with trio.fail_after(10):
        async with connected(server, place, era) as client:
            await client.call_tool("nap", {})
            with pytest.raises(mcptrio.McpError):
                await client.call_tool("missing", {})
    lines = [r.getMessage() for r in caplog.records if r.name == "examples.middleware"]
    nap_line = next(line for line in lines if line.startswith("tools/call nap ok in "))
    assert float(nap_line.split()[-2]) >= 50.0
    assert any(line.startswith("tools/call missing error -32602 in ") for line in lines)


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_the_rate_limit_refuses_past_the_burst_then_recovers(place: str, era: str) -> None:
    server = mcptrio.Server("limited", middleware=[example.RateLimit(rate=20.0, burst=3)])

    @server.tool
    async def ping_me() -> str:
        return "pong"

    with trio.fail_after(10):
        async with connected(server, place, era) as client:
            await client.list_tools()
            answers: list[str] = []
            for _ in range(5):
                try:
                    await client.call_tool("ping_me", {})
                    answers.append("ok")
                except mcptrio.McpError as exc:
                    assert exc.code == example.REFUSED
                    assert 0 < exc.data["retryAfter"] <= 0.05
                    answers.append("refused")
            await trio.sleep(0.1)
            await client.call_tool("ping_me", {})
    assert answers.count("refused") >= 2
    assert answers[:2] == ["ok", "ok"]


async def test_each_handshake_session_has_its_own_bucket() -> None:
    server = mcptrio.Server("limited", middleware=[example.RateLimit(rate=0.001, burst=2)])

    @server.tool
    async def ping_me() -> str:
        return "pong"

    with trio.fail_after(5):
        async with connected(server, "memory", "handshake") as first:
            await first.list_tools()
            await first.call_tool("ping_me", {})
            with pytest.raises(mcptrio.McpError, match="Rate limit"):
                await first.call_tool("ping_me", {})
            async with connected(server, "memory", "handshake") as second:
                await second.list_tools()
                await second.call_tool("ping_me", {})


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_permissions_hide_and_refuse_tools_the_client_may_not_call(
    place: str, era: str
) -> None:
    server = example.build_server(rate=1000.0, burst=1000)
    with trio.fail_after(10):
        async with connected(server, place, era, name="viewer") as viewer:
            assert [t.name for t in (await viewer.list_tools()).tools] == ["read_note"]
            with pytest.raises(mcptrio.McpError) as refused:
                await viewer.call_tool("delete_note", {"name": "todo"})
        async with connected(server, place, era, name="editor") as editor:
            names = [t.name for t in (await editor.list_tools()).tools]
            deleted = await editor.call_tool("delete_note", {"name": "todo"})
    assert refused.value.code == example.REFUSED
    assert refused.value.data == {"tool": "delete_note", "needs": "notes:write"}
    assert names == ["read_note", "delete_note"]
    assert deleted.structured_content == {"result": True}


class _Token:
    """A principal as an authenticator establishes it (the fields the examples read)."""

    def __init__(self, subject: str, scopes: frozenset[str]) -> None:
        self.subject = subject
        self.scopes = scopes


class _AuthenticatedTransport(ForwardingTransport):
    """The server's end of an in-memory pair, carrying the principal an authenticator would
    have bound to the session (as the HTTP session transports do)."""

    def __init__(self, inner: Any, principal: _Token) -> None:
        super().__init__(inner)
        self.principal = principal


@asynccontextmanager
async def as_principal(server: mcptrio.Server, token: _Token) -> AsyncIterator[mcptrio.Client]:
    from mcptrio.transports.memory import memory_transport_pair

    client_end, server_end = memory_transport_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_session, _AuthenticatedTransport(server_end, token))
        async with mcptrio.open_client(client_end, revisions=HANDSHAKE_ERA) as client:
            yield client
        nursery.cancel_scope.cancel()


async def test_permissions_by_scopes_and_a_rate_limit_per_principal() -> None:
    seen: list[str | None] = []

    async def who(call: Any, call_next: Any) -> Any:
        principal = call.principal
        seen.append(None if principal is None else principal.subject)
        return await call_next(call)

    permissions = example.ToolPermissions({"delete_note": "notes:write"}, example.granted_by_scopes)
    limit = example.RateLimit(rate=0.001, burst=3)
    server = mcptrio.Server("scoped", middleware=[who, limit, permissions])

    @server.tool
    async def delete_note(name: str) -> bool:
        return True

    reader = _Token("ada", frozenset({"notes:read"}))
    writer = _Token("grace", frozenset({"notes:write"}))
    with trio.fail_after(5):
        async with as_principal(server, reader) as client:
            assert [t.name for t in (await client.list_tools()).tools] == []
            with pytest.raises(mcptrio.McpError, match="Not allowed"):
                await client.call_tool("delete_note", {"name": "x"})
        async with as_principal(server, writer) as client:
            assert (await client.call_tool("delete_note", {"name": "x"})).structured_content
        # A second session of the same principal shares its bucket (3 requests so far).
        async with as_principal(server, writer) as client:
            await client.list_tools()
            with pytest.raises(mcptrio.McpError, match="Rate limit"):
                await client.call_tool("delete_note", {"name": "y"})
    # Every request and notification saw its principal (none went through without one).
    assert set(seen) == {"ada", "grace"}
