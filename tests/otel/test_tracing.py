"""mcptrio.otel: a span per request on both sides with the MCP semantic-convention attributes,
the trace context carried in ``params._meta``, and call/duration/in-flight metrics."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import mcptrio
import mcptrio.otel
from mcptrio.client import HANDSHAKE_ERA, Revisions
from mcptrio.protocol.base import Result
from mcptrio.server.middleware import Call, CallNext
from mcptrio.testing import Transcript, open_test_client

ERAS = {"handshake": HANDSHAKE_ERA, "stateless": Revisions(protocol_version="2026-07-28")}


class Telemetry:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def providers(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self, kind: SpanKind | None = None) -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if kind in (None, s.kind)]

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


def traced_server(telemetry: Telemetry) -> mcptrio.Server:
    server = mcptrio.Server("traced")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def broken() -> str:
        raise mcptrio.ToolError("no luck")

    @server.prompt
    def hello(name: str) -> str:
        return f"Hello {name}"

    async def refuse(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "prompts/list":
            raise mcptrio.McpError("Not for you", code=-32000)
        return await call_next(call)

    server.add_middleware(refuse)
    mcptrio.otel.instrument_server(server, **telemetry.providers)
    return server


@asynccontextmanager
async def traced_client(
    server: mcptrio.Server, telemetry: Telemetry, place: str, era: str
) -> AsyncIterator[mcptrio.Client]:
    if place == "memory":
        async with open_test_client(server, revisions=ERAS[era]) as client:
            mcptrio.otel.instrument_client(client, **telemetry.providers)
            yield client
        return
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http)
        async with mcptrio.open_client(url + "/mcp", revisions=ERAS[era]) as client:
            mcptrio.otel.instrument_client(client, **telemetry.providers)
            yield client
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("place", "era"),
    [
        ("memory", "handshake"),
        ("memory", "stateless"),
        ("http", "handshake"),
        ("http", "stateless"),
    ],
)
async def test_a_tool_call_is_one_trace_across_client_and_server(place: str, era: str) -> None:
    telemetry = Telemetry()
    with trio.fail_after(10):
        async with traced_client(traced_server(telemetry), telemetry, place, era) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
    (sent,) = [s for s in telemetry.spans(SpanKind.CLIENT) if s.name == "tools/call add"]
    (received,) = [s for s in telemetry.spans(SpanKind.SERVER) if s.name == "tools/call add"]
    assert received.parent is not None and received.parent.is_remote
    assert received.parent.span_id == sent.context.span_id
    assert received.context.trace_id == sent.context.trace_id
    revision = "2025-11-25" if era == "handshake" else "2026-07-28"
    for span in (sent, received):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == "add"
        assert attributes["mcp.protocol.version"] == revision
        assert attributes["jsonrpc.request.id"] == received.attributes["jsonrpc.request.id"]  # type: ignore[index]
        assert span.status.status_code is StatusCode.UNSET
    if place == "http" and era == "handshake":
        assert sent.attributes["mcp.session.id"] == received.attributes["mcp.session.id"]  # type: ignore[index]


async def test_the_trace_context_travels_in_meta() -> None:
    telemetry = Telemetry()
    transcript = Transcript()
    with trio.fail_after(5):
        async with open_test_client(
            traced_server(telemetry), revisions=HANDSHAKE_ERA, transcript=transcript
        ) as client:
            mcptrio.otel.instrument_client(client, **telemetry.providers)
            await client.call_tool("add", {"a": 1, "b": 2})
    (call,) = transcript.requests("tools/call")
    (sent,) = [s for s in telemetry.spans(SpanKind.CLIENT) if s.name == "tools/call add"]
    traceparent = call["params"]["_meta"]["traceparent"]
    version, trace_id, span_id, flags = traceparent.split("-")
    assert (version, trace_id, span_id) == (
        "00",
        f"{sent.context.trace_id:032x}",
        f"{sent.context.span_id:016x}",
    )
    assert int(flags, 16) & 1  # sampled


async def test_errors_mark_the_spans() -> None:
    telemetry = Telemetry()
    with trio.fail_after(5):
        async with traced_client(traced_server(telemetry), telemetry, "memory", "handshake") as c:
            tool_error = await c.call_tool("broken", {})
            assert tool_error.is_error
            with pytest.raises(mcptrio.McpError):
                await c.list_prompts()
            with pytest.raises(mcptrio.McpError):
                await c.call_tool("missing", {})
            assert (await c.get_prompt("hello", {"name": "Ada"})).messages
    by_name = {(s.kind, s.name): s for s in telemetry.spans()}
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        broken = by_name[(kind, "tools/call broken")]
        assert broken.attributes["error.type"] == "tool_error"  # type: ignore[index]
        assert broken.status.status_code is StatusCode.ERROR
        refused = by_name[(kind, "prompts/list")]
        assert refused.attributes["error.type"] == "-32000"  # type: ignore[index]
        assert refused.attributes["rpc.response.status_code"] == "-32000"  # type: ignore[index]
        assert refused.status.description == "Not for you"
        missing = by_name[(kind, "tools/call missing")]
        assert missing.attributes["error.type"] == "-32602"  # type: ignore[index]
        prompt = by_name[(kind, "prompts/get hello")]
        assert prompt.attributes["gen_ai.prompt.name"] == "hello"  # type: ignore[index]


async def test_notifications_get_server_spans_too() -> None:
    telemetry = Telemetry()
    with trio.fail_after(5):
        async with traced_client(traced_server(telemetry), telemetry, "memory", "handshake") as c:
            await c.call_tool("add", {"a": 1, "b": 1})
    names = [s.name for s in telemetry.spans(SpanKind.SERVER)]
    assert "notifications/initialized" in names


async def test_durations_and_in_flight_are_measured() -> None:
    telemetry = Telemetry()
    server = traced_server(telemetry)
    started = trio.Event()
    release = trio.Event()

    @server.tool
    async def wait() -> str:
        started.set()
        await release.wait()
        return "done"

    with trio.fail_after(5):
        async with traced_client(server, telemetry, "memory", "handshake") as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "wait", {})
                await started.wait()
                active = {
                    point.attributes["mcp.method.name"]: point.value
                    for point in telemetry.points("mcptrio.server.operation.active")
                }
                assert active["tools/call"] == 1
                client_active = telemetry.points("mcptrio.client.operation.active")
                assert [
                    p.value
                    for p in client_active
                    if p.attributes["mcp.method.name"] == "tools/call"
                ] == [1]
                release.set()
            for _ in range(3):
                await client.call_tool("add", {"a": 1, "b": 1})
    for side in ("server", "client"):
        points = telemetry.points(f"mcp.{side}.operation.duration")
        add = [p for p in points if p.attributes.get("gen_ai.tool.name") == "add"]
        assert len(add) == 1 and add[0].count == 3 and add[0].sum > 0
        assert add[0].attributes["mcp.method.name"] == "tools/call"
        assert "jsonrpc.request.id" not in add[0].attributes
        active = telemetry.points(f"mcptrio.{side}.operation.active")
        assert all(p.value == 0 for p in active)


def test_mcptrio_never_imports_opentelemetry_unless_asked() -> None:
    code = (
        "import sys, trio, mcptrio\n"
        "from mcptrio.testing import open_test_client\n"
        "server = mcptrio.Server('plain')\n"
        "@server.tool\n"
        "async def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "async def main():\n"
        "    async with open_test_client(server) as client:\n"
        "        await client.call_tool('add', {'a': 1, 'b': 2})\n"
        "trio.run(main)\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_without_the_extra_the_import_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"
        "try:\n"
        "    import mcptrio.otel\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (
        run.stdout.strip() == "mcptrio.otel needs OpenTelemetry's API: pip install 'mcptrio[otel]'"
    )
