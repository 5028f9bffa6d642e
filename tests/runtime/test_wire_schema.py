"""Every kind of message the runtime emits validates against the negotiated revision's schema."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED

from conftest import Wire, open_recorded_client
from schema_validation import validate_exchange


def busy_server() -> mcptrio.Server:
    server = mcptrio.Server("busy", instructions="Use add for sums.")

    @server.tool(title="Add")
    async def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def slow(ctx: mcptrio.Context, steps: int = 2) -> str:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, "working")
        await ctx.session.ping(timeout=5)
        return "done"

    @server.tool()
    async def forever() -> str:
        await trio.sleep_forever()
        return "never"

    @server.tool()
    async def fail() -> str:
        raise mcptrio.InternalError("broken")

    return server


def validate_wire(wire: Wire, revision: str) -> int:
    """Validate every recorded message in both directions; return how many were checked."""
    return validate_exchange(wire.client_to_server, wire.server_to_client, revision)


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_every_message_validates_against_the_negotiated_schema(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            busy_server(), revisions=Revisions(supported=(revision,))
        ) as (
            client,
            wire,
            _,
        ):
            assert client.protocol_version == revision
            await client.ping()
            await client.list_tools()
            await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("add", {"a": "not a number"})
            await client.call_tool("slow", {"steps": 3}, on_progress=lambda *a: None)
            with pytest.raises(mcptrio.InvalidParams):
                await client.call_tool("missing")
            with pytest.raises(mcptrio.InternalError):
                await client.call_tool("fail")
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("forever", timeout=0.05)
    kinds: set[str] = set()
    for message in [*wire.client_to_server, *wire.server_to_client]:
        kinds.add(message.get("method") or ("error" if "error" in message else "result"))
    assert kinds >= {
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "notifications/progress",
        "notifications/cancelled",
        "result",
        "error",
    }
    assert validate_wire(wire, revision) == len(wire.client_to_server) + len(wire.server_to_client)


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_progress_message_field_only_where_the_revision_has_it(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(
            busy_server(), revisions=Revisions(supported=(revision,))
        ) as (
            client,
            wire,
            _,
        ):
            await client.call_tool("slow", {"steps": 1}, on_progress=lambda *a: None)
    progress: list[dict[str, Any]] = [
        m["params"] for m in wire.server_to_client if m.get("method") == "notifications/progress"
    ]
    assert progress
    assert all(("message" in p) == (revision != "2024-11-05") for p in progress)
