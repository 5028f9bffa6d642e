"""The gateway against in-process upstreams: what it forwards, in both eras on each side."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA
from weather_catalogue import add_weather_catalogue, notes_server

import mcptrio
from mcptrio.client import Handlers, Revisions
from mcptrio.gateway import Gateway, Upstream
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import (
    ElicitRequest,
    ElicitResult,
    PromptReference,
    SubscribeRequest,
    ToolAnnotations,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

from conftest import Wire, open_recorded_client
from schema_validation import validate_exchange

STATELESS = Revisions(protocol_version="2026-07-28")
OLDEST = Revisions(supported=(HANDSHAKE_SUPPORTED[-1],))
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": STATELESS, "2024-11-05": OLDEST}
# "mounted": an in-process upstream served without a protocol in between (InProcessUpstream);
# the others connect to it in memory, speaking that era.
UPSTREAM_ERAS = {**ERAS, "mounted": None}


def weather(log: list[str]) -> mcptrio.Server:
    server = mcptrio.Server("weather")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True), title="Forecast")
    async def forecast(city: str, ctx: Context) -> dict[str, Any]:
        """The forecast for a city."""
        await ctx.report_progress(1, 2, "looking")
        return {"city": city, "sky": "clear"}

    @server.tool
    async def slow(ctx: Context) -> str:
        log.append("slow started")
        try:
            await trio.sleep_forever()
        finally:
            log.append("slow cancelled")

    @server.tool
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"{answer.action} {answer.data}"

    add_weather_catalogue(server)
    return server


def notes() -> mcptrio.Server:
    server = notes_server()

    @server.tool
    def delete_all() -> str:
        return "gone"

    return server


def upstream_in(era: str, name: str, target: mcptrio.Server, **options: Any) -> Upstream:
    """``target`` as the upstream ``name``, spoken to in ``era`` (a key of UPSTREAM_ERAS)."""
    return Upstream(
        name=name,
        target=target,
        revisions=UPSTREAM_ERAS[era],
        in_process=era == "mounted",
        **options,
    )


async def elicited(_ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("downstream_era", list(ERAS))
async def test_everything_is_forwarded_in_either_era_on_either_side(
    upstream_era: str, downstream_era: str
) -> None:
    log: list[str] = []
    gateway = Gateway(
        upstreams=[
            upstream_in(upstream_era, "weather", weather(log)),
            upstream_in(
                upstream_era, "notes", notes(), exclude=["delete_*"], rename={"add": "add_note"}
            ),
        ]
    )
    progress: list[tuple[float, float | None, str | None]] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_recorded_client(
                gateway,
                revisions=ERAS[downstream_era],
                handlers=Handlers(elicitation=elicited),
            ) as (client, wire, _s):
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert sorted(tools) == [
                    "add_note",
                    "weather_confirm",
                    "weather_forecast",
                    "weather_slow",
                ]
                forecast = tools["weather_forecast"]
                assert forecast.input_schema["required"] == ["city"]
                if upstream_era != "2024-11-05" and client.protocol_version >= "2025-06-18":
                    # What the older revision on either side lacks is not there to forward.
                    assert forecast.output_schema is not None
                    assert forecast.title == "Forecast"
                if upstream_era != "2024-11-05" and client.protocol_version >= "2025-03-26":
                    assert forecast.annotations.read_only_hint is True
                result = await client.call_tool(
                    "weather_forecast",
                    {"city": "Oslo"},
                    on_progress=lambda p, t, m: progress.append((p, t, m)),
                )
                if upstream_era != "2024-11-05" and client.protocol_version >= "2025-06-18":
                    assert result.structured_content == {"city": "Oslo", "sky": "clear"}
                assert json.loads(result.content[0].text) == {"city": "Oslo", "sky": "clear"}
                both_newer = upstream_era != "2024-11-05" and client.protocol_version > "2024-11-05"
                assert progress == [(1, 2, "looking" if both_newer else None)]
                added = await client.call_tool("add_note", {"text": "milk"})
                assert added.content[0].text == "added milk"
                read = await client.read_resource("weather://city/oslo")
                assert read.contents[0].text == "station at oslo"
                prompt = await client.get_prompt("weather_ask", {"city": "Oslo"})
                assert prompt.messages[0].content.text == "What is the weather in Oslo?"
                done = await client.complete(PromptReference(name="weather_ask"), "city", "o")
                assert done.completion.values == ["oslo", "ottawa"]
                assert validate_exchange(
                    wire.client_to_server, wire.server_to_client, client.protocol_version
                )
                # (After the check: the recording's checker does not know input-required results.)
                if not both_newer or client.protocol_version < "2025-06-18":
                    # Elicitation came with 2025-06-18: the upstream's tool is refused it.
                    with pytest.raises(mcptrio.McpError, match="elicitation"):
                        await client.call_tool("weather_confirm")
                else:
                    confirmed = await client.call_tool("weather_confirm")
                    assert confirmed.content[0].text == "accept {'ok': True}"
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("upstream_era", ["handshake", "stateless", "mounted"])
@pytest.mark.parametrize("downstream_era", ["handshake", "stateless"])
async def test_a_downstream_cancel_cancels_the_upstream_call(
    upstream_era: str, downstream_era: str
) -> None:
    log: list[str] = []
    gateway = Gateway(upstreams=[upstream_in(upstream_era, "w", weather(log))])
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(gateway, revisions=ERAS[downstream_era]) as client:
                with trio.move_on_after(0.3):
                    await client.call_tool("w_slow")
                while "slow cancelled" not in log:  # noqa: ASYNC110
                    await trio.sleep(0.01)
                assert log == ["slow started", "slow cancelled"]
            nursery.cancel_scope.cancel()


async def wait_for(predicate: Any) -> None:
    with trio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await trio.sleep(0.01)


def sent(wire: Wire, method: str) -> int:
    return wire.methods_sent_by_server().count(method)


@pytest.mark.parametrize("in_process", [False, True])
async def test_upstream_changes_and_updates_reach_the_downstream_clients(in_process: bool) -> None:
    log: list[str] = []
    upstream = weather(log)
    gateway = Gateway(upstreams=[Upstream(name="w", target=upstream, in_process=in_process)])
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_recorded_client(gateway, revisions=HANDSHAKE_ERA) as (c, wire, _s):
                await c.request(SubscribeRequest(uri="weather://stations"))

                async def extra() -> str:
                    return "extra"

                upstream.add_tool(extra)
                await wait_for(lambda: sent(wire, "notifications/tools/list_changed") >= 1)
                assert "w_extra" in [t.name for t in (await c.list_tools()).tools]
                upstream.notify_resource_updated("weather://stations")
                await wait_for(lambda: sent(wire, "notifications/resources/updated") >= 1)
            nursery.cancel_scope.cancel()


async def test_pages_are_followed_upstream_and_served_in_pages_downstream() -> None:
    upstream = mcptrio.Server("many", page_size=7)
    for i in range(30):

        async def tool() -> str:
            return "ok"

        upstream.add_tool(tool, name=f"t{i:02d}")
    gateway = Gateway(
        upstreams=[Upstream(name="m", target=upstream, in_process=False)], page_size=10
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(gateway) as client:
                first = await client.list_tools()
                assert len(first.tools) == 10
                names = [t.name async for t in client.iter_tools()]
                assert names == [f"m_t{i:02d}" for i in range(30)]
            nursery.cancel_scope.cancel()


async def test_an_upstream_that_fails_to_start_is_isolated() -> None:
    gateway = Gateway(
        upstreams=[
            Upstream(name="broken", target=["/nonexistent/mcp-server"]),
            Upstream(name="notes", target=notes()),
        ]
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            assert gateway.upstreams["broken"].state == "down"
            async with mcptrio.open_client(gateway) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["notes_add", "notes_delete_all"]
            nursery.cancel_scope.cancel()


async def test_a_handshake_upstreams_question_is_never_put_to_the_wrong_client() -> None:
    log: list[str] = []
    gateway = Gateway(
        upstreams=[
            Upstream(name="w", target=weather(log), in_process=False, revisions=HANDSHAKE_ERA)
        ]
    )
    handlers = Handlers(elicitation=elicited)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with (
                mcptrio.open_client(gateway, revisions=HANDSHAKE_ERA, handlers=handlers) as a,
                mcptrio.open_client(gateway, revisions=HANDSHAKE_ERA, handlers=handlers) as b,
            ):
                # Alone, b is asked; while a waits on the same upstream too, nobody is.
                confirmed = await b.call_tool("w_confirm")
                assert confirmed.content[0].text == "accept {'ok': True}"
                async with trio.open_nursery() as calls:
                    calls.start_soon(a.call_tool, "w_slow")
                    while "slow started" not in log:  # noqa: ASYNC110
                        await trio.sleep(0.01)
                    with pytest.raises(mcptrio.McpError, match="Several clients"):
                        await b.call_tool("w_confirm")
                    calls.cancel_scope.cancel()
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("downstream_era", ["handshake", "stateless"])
async def test_a_client_is_never_asked_what_it_did_not_declare(downstream_era: str) -> None:
    # server-everything asks every client for its roots whatever is being called; a client with
    # no roots handler must not be asked (the upstream gets -32601), and its call goes on.
    upstream = mcptrio.Server("asker")

    @upstream.tool
    async def look(ctx: Context) -> str:
        try:
            roots = await ctx.list_roots()
        except mcptrio.MethodNotFound:
            return "no roots asked"
        return f"{len(roots)} roots"

    gateway = Gateway(
        upstreams=[Upstream(name="a", target=upstream, in_process=False, revisions=HANDSHAKE_ERA)]
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(gateway, revisions=ERAS[downstream_era]) as client:
                result = await client.call_tool("a_look")
                assert result.content[0].text == "no roots asked"
            nursery.cancel_scope.cancel()
