"""Tool search mode against real upstreams (the everything server as a stdio subprocess, and an
mcptrio server connected over the protocol), used by a client over Streamable HTTP in either
era: two tools listed, a search finds tools by name, description and argument names and gives
their schemas, call_tool checks arguments against the upstream's schema and forwards, progress,
cancellation and elicitation passing through."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import Client, Handlers, Revisions, open_client, stdio
from mcptrio.gateway import (
    ConfigError,
    Gateway,
    ToolSearch,
    Toolset,
    Upstream,
    parse_gateway_options,
)
from mcptrio.protocol.types import ElicitRequest, ElicitResult, TextContent
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": Revisions()}


def office(log: list[str]) -> mcptrio.Server:
    server = mcptrio.Server("office")

    @server.tool
    async def wait_for_printer(ctx: Context) -> str:
        """Block until the printer is free."""
        log.append("started")
        try:
            await trio.sleep_forever()
        finally:
            log.append("cancelled")

    @server.tool
    async def book_room(room: str, ctx: Context) -> str:
        """Book a meeting room, after asking for confirmation."""
        answer = await ctx.elicit(
            f"Book {room}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"{room}: {answer.action} {answer.data}"

    return server


async def elicited(_ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


def gateway_of(log: list[str], **options: Any) -> Gateway:
    return Gateway(
        upstreams=[
            Upstream(name="everything", target=stdio([sys.executable, EVERYTHING])),
            Upstream(name="office", target=office(log), in_process=False),
        ],
        tool_search=ToolSearch(),
        **options,
    )


async def search(client: Client, query: str, **more: Any) -> list[dict[str, Any]]:
    result = await client.call_tool("search_tools", {"query": query, **more})
    assert not result.is_error
    assert result.structured_content is not None
    found: list[dict[str, Any]] = result.structured_content["tools"]
    return found


@pytest.mark.parametrize("era", list(ERAS))
async def test_search_then_call_with_progress_cancellation_and_elicitation(era: str) -> None:
    log: list[str] = []
    gateway = gateway_of(log)
    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            base = await nursery.start(gateway.serve_http)
            async with open_client(
                f"{base}/mcp", revisions=ERAS[era], handlers=Handlers(elicitation=elicited)
            ) as client:
                listed = (await client.list_tools()).tools
                assert [tool.name for tool in listed] == ["search_tools", "call_tool"]

                # By description, by name, by argument name.
                found = await search(client, "count down seconds with progress")
                assert found[0]["name"] == "everything_countdown"
                assert found[0]["inputSchema"]["properties"]["seconds"]["maximum"] == 60
                assert (await search(client, "note"))[0]["name"] == "everything_add_note"
                assert (await search(client, "room"))[0]["name"] == "office_book_room"
                assert len(await search(client, "test", limit=3)) == 3
                assert await search(client, "zzyzx") == []

                refused = await client.call_tool(
                    "call_tool", {"name": "everything_countdown", "arguments": {"seconds": 99}}
                )
                assert refused.is_error
                assert refused.content == [
                    TextContent(
                        text="Arguments of 'everything_countdown': seconds: 99 is greater than"
                        " the maximum of 60"
                    )
                ]
                unknown = await client.call_tool("call_tool", {"name": "everything_nothing"})
                assert unknown.is_error

                progress: list[tuple[float, float | None]] = []

                async def on_progress(value: float, total: float | None, _m: str | None) -> None:
                    progress.append((value, total))

                counted = await client.call_tool(
                    "call_tool",
                    {"name": "everything_countdown", "arguments": {"seconds": 2}},
                    on_progress=on_progress,
                )
                assert counted.content == [TextContent(text="Lift-off")]
                assert progress == [(0, 2), (1, 2)]

                booked = await client.call_tool(
                    "call_tool", {"name": "office_book_room", "arguments": {"room": "Kepler"}}
                )
                assert booked.content == [TextContent(text="Kepler: accept {'ok': True}")]

                with trio.move_on_after(0.5):
                    await client.call_tool("call_tool", {"name": "office_wait_for_printer"})
                with trio.fail_after(5):
                    while "cancelled" not in log:  # noqa: ASYNC110
                        await trio.sleep(0.01)
                assert log == ["started", "cancelled"]
            nursery.cancel_scope.cancel()


async def test_search_finds_only_what_the_clients_toolsets_show() -> None:
    gateway = gateway_of([], toolsets=[Toolset(name="office", upstreams=["office"])])
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_client(gateway) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert {"search_tools", "call_tool", "gateway_enable_toolset"} <= listed
                before = [tool["name"] for tool in await search(client, "book a room")]
                assert "office_book_room" not in before
                await client.call_tool("gateway_enable_toolset", {"name": "office"})
                assert (await search(client, "book a room"))[0]["name"] == "office_book_room"
            nursery.cancel_scope.cancel()


def test_tool_search_is_read_from_the_configuration(tmp_path: Path) -> None:
    servers = {"everything": {"command": sys.executable, "args": [str(EVERYTHING)]}}
    options = parse_gateway_options(
        {"mcpServers": servers, "toolSearch": {"limit": 3}}, base=tmp_path
    )
    assert options["tool_search"] == ToolSearch(limit=3)
    with pytest.raises(ConfigError) as raised:
        parse_gateway_options({"mcpServers": servers, "toolSearch": "yes"}, base=tmp_path)
    assert str(raised.value) == '"toolSearch" is true, or an object with "limit" and "maxLimit"'
