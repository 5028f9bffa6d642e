"""mcptrio.otel, the other direction: the requests a server's handlers send to the client
(sampling, elicitation, roots) get a span on each side, in one trace with the tool call that
asked, in both eras (the stateless era carries them in input-required results)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from test_tracing import ERAS, Telemetry

import mcptrio
import mcptrio.otel
from mcptrio.client import Handlers
from mcptrio.protocol.types import ElicitRequest, TextContent
from mcptrio.testing import ScriptedElicitation, ScriptedSampling, open_test_client, roots

ASKS = ("elicitation/create", "sampling/createMessage", "roots/list")
PLACES = [
    ("memory", "handshake"),
    ("memory", "stateless"),
    ("http", "handshake"),
    ("http", "stateless"),
]


def asking_server(telemetry: Telemetry) -> mcptrio.Server:
    server = mcptrio.Server("asking")

    @server.tool
    async def plan(topic: str, ctx: mcptrio.Context) -> str:
        who = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        assert who.content is not None
        idea = await ctx.sample(f"An idea about {topic}")
        listed = await ctx.list_roots()
        return f"{who.content['name']}: {idea.content.text} in {listed[0].uri}"  # type: ignore[union-attr]

    mcptrio.otel.instrument_server(server, **telemetry.providers)
    return server


def handlers(elicitation: ScriptedElicitation | None = None) -> Handlers:
    return Handlers(
        elicitation=elicitation or ScriptedElicitation({"name": "Ada"}),
        sampling=ScriptedSampling("gardens"),
        roots=roots("file:///repo"),
    )


@asynccontextmanager
async def asking_client(
    server: mcptrio.Server, telemetry: Telemetry, place: str, era: str, answers: Handlers
) -> AsyncIterator[mcptrio.Client]:
    if place == "memory":
        async with open_test_client(server, revisions=ERAS[era], handlers=answers) as client:
            mcptrio.otel.instrument_client(client, **telemetry.providers)
            yield client
        return
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http)
        async with mcptrio.open_client(
            url + "/mcp", revisions=ERAS[era], handlers=answers
        ) as client:
            mcptrio.otel.instrument_client(client, **telemetry.providers)
            yield client
        nursery.cancel_scope.cancel()


def named(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_a_tool_call_that_asks_the_client_is_one_trace(place: str, era: str) -> None:
    telemetry = Telemetry()
    with trio.fail_after(10):
        async with asking_client(
            asking_server(telemetry), telemetry, place, era, handlers()
        ) as client:
            result = await client.call_tool("plan", {"topic": "trio"})
    assert result.content == [TextContent(text="Ada: gardens in file:///repo")]

    # Other spans (initialize, notifications/initialized) are traces of their own.
    traced = [span for span in telemetry.spans() if span.name in {"tools/call plan", *ASKS}]
    assert len({span.context.trace_id for span in traced}) == 1
    sent = telemetry.spans(SpanKind.CLIENT)
    received = telemetry.spans(SpanKind.SERVER)
    (call,) = named(sent, "tools/call plan")
    handled = named(received, "tools/call plan")
    # The stateless era answers each ask in a round of its own: one server span a round, each
    # the child of the one client span (its retries carry the same trace context).
    assert len(handled) == (1 if era == "handshake" else 1 + len(ASKS))
    assert all(h.parent is not None and h.parent.span_id == call.context.span_id for h in handled)
    revision = "2025-11-25" if era == "handshake" else "2026-07-28"
    handler_spans = {h.context.span_id for h in handled}
    for method in ASKS:
        (asked,) = named(sent, method)  # the server's span, sending
        (answered,) = named(received, method)  # the client's span, answering
        # The ask is the child of the handler's span, and the client's answer of the ask.
        assert asked.parent is not None and asked.parent.span_id in handler_spans
        assert answered.parent is not None and answered.parent.is_remote
        assert answered.parent.span_id == asked.context.span_id
        for span in (asked, answered):
            assert span.attributes is not None
            assert span.attributes["mcp.method.name"] == method
            assert span.attributes["mcp.protocol.version"] == revision
            assert span.status.status_code is StatusCode.UNSET
        assert asked.attributes is not None and answered.attributes is not None
        if era == "handshake":
            assert "jsonrpc.request.id" in asked.attributes
            assert (
                answered.attributes["jsonrpc.request.id"] == asked.attributes["jsonrpc.request.id"]
            )
        else:
            key = asked.attributes["mcptrio.input_request.key"]
            assert answered.attributes["mcptrio.input_request.key"] == key
            assert "jsonrpc.request.id" not in answered.attributes
        if place == "http" and era == "handshake":
            assert asked.attributes["mcp.session.id"] == answered.attributes["mcp.session.id"]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_refused_ask_marks_both_spans(era: str) -> None:
    def refuse(request: ElicitRequest) -> None:
        raise mcptrio.McpError("Not now", code=-32042)

    telemetry = Telemetry()
    with trio.fail_after(10):
        async with asking_client(
            asking_server(telemetry),
            telemetry,
            "memory",
            era,
            handlers(ScriptedElicitation(refuse)),
        ) as client:
            with pytest.raises(mcptrio.McpError):
                await client.call_tool("plan", {"topic": "trio"})
    (answered,) = named(telemetry.spans(SpanKind.SERVER), "elicitation/create")
    assert answered.status.status_code is StatusCode.ERROR
    assert answered.attributes is not None and answered.attributes["error.type"] == "-32042"
    (asked,) = named(telemetry.spans(SpanKind.CLIENT), "elicitation/create")
    if era == "handshake":
        # The server waited for the answer, so its span saw the error too.
        assert asked.status.status_code is StatusCode.ERROR
        assert asked.attributes is not None and asked.attributes["error.type"] == "-32042"


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_asks_are_measured_on_both_sides(era: str) -> None:
    telemetry = Telemetry()
    with trio.fail_after(10):
        async with asking_client(
            asking_server(telemetry), telemetry, "memory", era, handlers()
        ) as client:
            await client.call_tool("plan", {"topic": "trio"})

    def methods(name: str) -> dict[str, int]:
        return {
            point.attributes["mcp.method.name"]: point.count
            for point in telemetry.points(name)
            if point.attributes["mcp.method.name"] in ASKS
        }

    # The client answers: the receiving side's duration, one record an ask.
    assert methods("mcp.server.operation.duration") == dict.fromkeys(ASKS, 1)
    # The server sends; in the stateless era it does not wait for the answer (it comes with the
    # retry), so only the handshake era has a duration to record.
    sender = methods("mcp.client.operation.duration")
    assert sender == (dict.fromkeys(ASKS, 1) if era == "handshake" else {})
    for side in ("server", "client"):
        for point in telemetry.points(f"mcptrio.{side}.operation.active"):
            assert point.value == 0


async def test_an_uninstrumented_pair_has_no_hooks() -> None:
    server = mcptrio.Server("plain")
    assert server.request_hook is None
    with trio.fail_after(10):
        async with open_test_client(server, handlers=handlers()) as client:
            assert client.receive_hook is None and client.send_hook is None


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_mounted_servers_asks_are_traced_by_the_server_that_serves(era: str) -> None:
    telemetry = Telemetry()
    child = mcptrio.Server("child")

    @child.tool
    async def greet(ctx: mcptrio.Context) -> str:
        who = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"Hello {who.content['name'] if who.content else '?'}"

    app = mcptrio.Server("app")
    app.mount(child, namespace="sub")
    mcptrio.otel.instrument_server(app, **telemetry.providers)
    with trio.fail_after(10):
        async with asking_client(app, telemetry, "memory", era, handlers()) as client:
            (tool,) = [t.name async for t in client.iter_tools()]
            result = await client.call_tool(tool, {})
    assert result.content == [TextContent(text="Hello Ada")]
    handled = {
        s.context.span_id for s in named(telemetry.spans(SpanKind.SERVER), f"tools/call {tool}")
    }
    (asked,) = named(telemetry.spans(SpanKind.CLIENT), "elicitation/create")
    (answered,) = named(telemetry.spans(SpanKind.SERVER), "elicitation/create")
    assert asked.parent is not None and asked.parent.span_id in handled
    assert answered.parent is not None and answered.parent.span_id == asked.context.span_id
