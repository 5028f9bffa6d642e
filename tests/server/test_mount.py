"""In-process composition: ``server.mount(other, namespace=...)``, checked on the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA
from weather_catalogue import add_weather_catalogue, notes_server

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.types import (
    CallToolResult,
    PromptReference,
    ResourceTemplateReference,
    SubscribeRequest,
    TextContent,
    ToolAnnotations,
)
from mcptrio.server.context import Context

from conftest import Wire, open_recorded_client
from schema_validation import validate_exchange


def weather() -> mcptrio.Server:
    server = mcptrio.Server("weather")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def forecast(city: str, ctx: Context) -> dict[str, Any]:
        """The forecast for a city."""
        await ctx.report_progress(1, 2, "looking")
        return {"city": city, "sky": "clear", "server": ctx.server.info.name}

    add_weather_catalogue(server)
    return server


def sent(wire: Wire, method: str) -> int:
    return wire.methods_sent_by_server().count(method)


async def wait_for(predicate: Any) -> None:
    # The recording is a plain list with nothing to wait on, so poll it.
    with trio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await trio.sleep(0.01)


@pytest.mark.parametrize("revisions", [HANDSHAKE_ERA, Revisions()], ids=["handshake", "probe"])
async def test_mounted_servers_are_served_under_their_namespaces(revisions: Revisions) -> None:
    app = mcptrio.Server("app")
    app.mount(weather(), namespace="weather")
    app.mount(notes_server(), namespace="notes")
    progress: list[float] = []
    with trio.fail_after(5):
        async with open_recorded_client(app, revisions=revisions) as (client, wire, _s):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(tools) == ["notes_add", "weather_forecast"]
            assert tools["weather_forecast"].annotations.read_only_hint is True
            assert tools["weather_forecast"].description == "The forecast for a city."
            result = await client.call_tool(
                "weather_forecast", {"city": "Oslo"}, on_progress=lambda p, t, m: progress.append(p)
            )
            assert result.structured_content == {
                "city": "Oslo",
                "sky": "clear",
                "server": "weather",
            }
            added = await client.call_tool("notes_add", {"text": "milk"})
            assert added.content[0].text == "added milk"
            read = await client.read_resource("weather://city/oslo")
            assert read.contents[0].text == "station at oslo"
            assert (await client.read_resource("weather://stations")).contents[0].text
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["weather://city/{city}"]
            prompt = await client.get_prompt("weather_ask", {"city": "Oslo"})
            assert prompt.messages[0].content.text == "What is the weather in Oslo?"
            done = await client.complete(PromptReference(name="weather_ask"), "city", "o")
            assert done.completion.values == ["oslo", "ottawa"]
            done = await client.complete(
                ResourceTemplateReference(uri="weather://city/{city}"), "city", "b"
            )
            assert done.completion.values == ["bergen"]
            bad = await client.call_tool("notes_add", {})
            assert bad.is_error
            assert validate_exchange(
                wire.client_to_server, wire.server_to_client, client.protocol_version
            )
    assert progress == [1]


async def test_mounting_and_unmounting_at_run_time_sends_list_changed() -> None:
    app = mcptrio.Server("app", declare=("tools", "prompts", "resources"))
    with trio.fail_after(5):
        async with open_recorded_client(app, revisions=HANDSHAKE_ERA) as (client, wire, _s):
            assert (await client.list_tools()).tools == []
            app.mount(weather(), namespace="w")
            await wait_for(lambda: sent(wire, "notifications/tools/list_changed") >= 1)
            await wait_for(lambda: sent(wire, "notifications/prompts/list_changed") >= 1)
            await wait_for(lambda: sent(wire, "notifications/resources/list_changed") >= 1)
            assert [t.name for t in (await client.list_tools()).tools] == ["w_forecast"]
            assert app.unmount("w")
            assert not app.unmount("w")
            await wait_for(lambda: sent(wire, "notifications/tools/list_changed") >= 2)
            assert (await client.list_tools()).tools == []
            assert (await client.list_prompts()).prompts == []
            assert (await client.list_resources()).resources == []


async def test_changes_and_updates_of_a_mounted_server_reach_the_clients() -> None:
    app = mcptrio.Server("app")
    child = weather()
    app.mount(child, namespace="w")
    with trio.fail_after(5):
        async with open_recorded_client(app, revisions=HANDSHAKE_ERA) as (client, wire, _s):
            await client.request(SubscribeRequest(uri="weather://stations"))
            await client.request(SubscribeRequest(uri="weather://city/oslo"))

            async def alerts() -> str:
                return "none"

            child.add_tool(alerts)
            await wait_for(lambda: sent(wire, "notifications/tools/list_changed") >= 1)
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["w_forecast", "w_alerts"]
            assert (await client.call_tool("w_alerts")).content[0].text == "none"
            assert child.notify_resource_updated("weather://stations") == 0  # none of its own
            child.notify_resource_updated("weather://city/oslo")
            await wait_for(lambda: sent(wire, "notifications/resources/updated") >= 2)
            child.remove_tool("alerts")
            await wait_for(lambda: sent(wire, "notifications/tools/list_changed") >= 2)
            assert [t.name for t in (await client.list_tools()).tools] == ["w_forecast"]


async def test_a_mount_of_a_mount_is_namespaced_twice() -> None:
    inner = mcptrio.Server("inner")
    inner.mount(notes_server(), namespace="notes")
    outer = mcptrio.Server("outer")
    outer.mount(inner, namespace="inner")
    with trio.fail_after(5):
        async with mcptrio.open_client(outer) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["inner_notes_add"]
            result = await client.call_tool("inner_notes_add", {"text": "x"})
            assert result.content[0].text == "added x"


def test_a_namespace_the_tool_name_rules_forbid_is_refused() -> None:
    app = mcptrio.Server("app")
    for bad in ("", "has space", "a/b", "x" * 65, "dotted.name"):
        with pytest.raises(ValueError, match="Invalid namespace"):
            app.mount(notes_server(), namespace=bad)
    app.mount(notes_server(), namespace="n")
    with pytest.raises(ValueError, match="already mounted"):
        app.mount(notes_server(), namespace="n")
    with pytest.raises(ValueError, match="itself"):
        app.mount(app, namespace="self")


def test_a_uri_served_already_is_left_out_not_shadowed(caplog: pytest.LogCaptureFixture) -> None:
    app = mcptrio.Server("app")
    app.add_resource("mine", uri="weather://stations")
    app.mount(weather(), namespace="w")
    assert "left out" in caplog.text
    assert "weather://city/{city}" in app.templates
    assert app.resources["weather://stations"].definition.name != "stations"


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def with_lifespan(name: str, log: list[str]) -> mcptrio.Server:
    @asynccontextmanager
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[str]:
        log.append(f"{name} open")
        try:
            yield f"{name}'s pool"
        finally:
            log.append(f"{name} closed")

    server = mcptrio.Server(name, lifespan=lifespan)

    @server.tool
    async def pool(ctx: Context) -> str:
        return str(ctx.lifespan)

    return server


async def test_a_mounted_servers_lifespan_is_open_while_the_mounting_server_serves() -> None:
    log: list[str] = []
    app = with_lifespan("app", log)
    app.mount(with_lifespan("db", log), namespace="db")
    with trio.fail_after(5):
        async with open_recorded_client(app, revisions=HANDSHAKE_ERA) as (client, _wire, _s):
            assert log == ["app open", "db open"]
            assert text_of(await client.call_tool("db_pool", {})) == "db's pool"
            assert text_of(await client.call_tool("pool", {})) == "app's pool"
    # Inside out: the mounted server's closes first.
    assert log == ["app open", "db open", "db closed", "app closed"]


async def test_a_server_mounted_while_serving_tells_its_handlers_its_lifespan_is_not_open() -> None:
    log: list[str] = []
    app = mcptrio.Server("app", declare=("tools",))
    with trio.fail_after(5):
        async with open_recorded_client(app, revisions=HANDSHAKE_ERA) as (client, _wire, _s):
            app.mount(with_lifespan("db", log), namespace="db")
            answer = await client.call_tool("db_pool", {})
            assert answer.is_error
    assert log == []
