"""The HTTP+SSE client transport and the fallback to it, against the SDK's server and a script."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from fake_server import FakeExchange, FakeRequest, FakeServerStats, serve_fake_http
from sdk_peer import open_sdk_server

import mcptrio
from mcptrio.client import http
from mcptrio.protocol.errors import McpError, TransportError
from mcptrio.protocol.sse import encode_event
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.legacy_sse import (
    LegacySseError,
    open_legacy_sse_client_transport,
    resolve_endpoint,
)
from mcptrio.transports.http.client.transport import (
    HttpClientTransport,
    fallback_statuses,
    open_http_client_transport,
)


async def test_legacy_sse_handshake_list_call_and_progress_against_the_sdk_server() -> None:
    progress: list[float] = []
    with trio.fail_after(30):
        async with (
            open_sdk_server("sse") as base,
            open_legacy_sse_client_transport(base + "/sse", timeout=10) as transport,
            mcptrio.open_client(transport) as client,
        ):
            assert transport.endpoint is not None
            assert transport.endpoint.startswith(base + "/messages/")
            assert client.server_info.name == "sdk-peer"
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"add", "countdown"}
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.content == [TextContent(text="3")]
            result = await client.call_tool(
                "countdown", {"start": 2}, on_progress=lambda p, t, m: progress.append(p)
            )
            assert result.content == [TextContent(text="liftoff")]
    assert progress == [1, 2]


@asynccontextmanager
async def open_http_client(url: str) -> AsyncIterator[tuple[HttpClientTransport, mcptrio.Client]]:
    """A client of ``url`` over the HTTP client transport, which falls back to HTTP+SSE."""
    async with (
        open_http_client_transport(url, timeout=10) as transport,
        mcptrio.open_client(transport) as client,
    ):
        yield transport, client


async def test_streamable_post_to_a_legacy_only_server_falls_back_to_http_sse() -> None:
    with trio.fail_after(30):
        async with open_sdk_server("sse") as base:
            async with open_http_client(base + "/sse") as (transport, client):
                assert transport.kind == "legacy"
                result = await client.call_tool("add", {"a": 20, "b": 22})
                assert result.content == [TextContent(text="42")]
            # open_client takes the URL as is and does the same.
            async with mcptrio.open_client(http(base + "/sse", timeout=10)) as client:
                assert (await client.list_tools()).tools


async def test_open_client_with_an_http_url_speaks_streamable_http_to_a_streamable_server() -> None:
    with trio.fail_after(30):
        async with open_sdk_server("streamable-sse") as base:
            async with open_http_client(base + "/mcp") as (transport, client):
                assert transport.kind == "streamable"
                await client.ping()
            async with mcptrio.open_client(http(base + "/mcp", timeout=10)) as client:
                result = await client.call_tool("add", {"a": 1, "b": 1})
                assert result.content == [TextContent(text="2")]


# --------------------------------------------------------------------------- scripted servers


@asynccontextmanager
async def serve(handler: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_fake_http, handler, FakeServerStats())
        yield f"http://127.0.0.1:{port}"
        nursery.cancel_scope.cancel()


async def test_endpoint_on_another_origin_is_refused() -> None:
    async def other_origin(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200, [("content-type", "text/event-stream")])
        await exchange.send(encode_event("http://evil.example/messages", event="endpoint"))
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with serve(other_origin) as base:
            with pytest.raises(LegacySseError, match="not on the origin"):
                async with open_legacy_sse_client_transport(base + "/sse"):
                    pass


async def test_missing_endpoint_event_times_out(autojump_clock: trio.testing.MockClock) -> None:
    async def silent(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200, [("content-type", "text/event-stream")])
        await exchange.send(b": hello\n\n")
        await trio.sleep_forever()

    with trio.fail_after(100):
        async with serve(silent) as base:
            with pytest.raises(LegacySseError, match="No endpoint event"):
                async with open_legacy_sse_client_transport(base + "/sse", timeout=5):
                    pass


async def test_refused_post_answers_the_request_and_stream_end_ends_the_session() -> None:
    stream_end = trio.Event()

    async def legacy(request: FakeRequest, exchange: FakeExchange) -> None:
        if request.method == "GET":
            await exchange.start(200, [("content-type", "text/event-stream")])
            await exchange.send(encode_event("/messages?s=1", event="endpoint"))
            await stream_end.wait()
            await exchange.end()
            return
        assert request.target == "/messages?s=1"
        message = json.loads(request.body)
        await exchange.respond(500 if message.get("method") == "initialize" else 202)

    with trio.fail_after(10):
        async with (
            serve(legacy) as base,
            open_legacy_sse_client_transport(base + "/sse") as transport,
        ):
            assert transport.endpoint == base + "/messages?s=1"
            with pytest.raises(McpError, match="HTTP 500"):
                async with mcptrio.open_client(transport):
                    pass
        async with (
            serve(legacy) as base,
            open_legacy_sse_client_transport(base + "/sse") as transport,
        ):
            stream_end.set()
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()


def test_fallback_statuses_follow_the_offered_revision() -> None:
    assert fallback_statuses("2025-11-25") == {400, 404, 405}
    assert fallback_statuses(None) == {400, 404, 405}
    assert 401 in fallback_statuses("2025-03-26")
    assert resolve_endpoint("http://a:1/sse", "/m?x=1") == "http://a:1/m?x=1"
    with pytest.raises(LegacySseError):
        resolve_endpoint("http://a:1/sse", "https://a:1/m")


@pytest.mark.parametrize("endpoint", ["/sse", "/mcp"], ids=["legacy-sse", "streamable-sse"])
async def test_an_sse_answer_over_the_limit_fails_its_call_at_once(endpoint: str) -> None:
    server = mcptrio.Server("big")

    @server.tool()
    def big() -> str:
        return "x" * 10_000

    @server.tool()
    def small() -> str:
        return "ok"

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(partial(server.serve_http, json_response=False))
            if endpoint == "/sse":
                opened = open_legacy_sse_client_transport(base + endpoint, max_frame_size=2000)
            else:
                opened = open_http_client_transport(base + endpoint, max_frame_size=2000)
            async with opened as transport, mcptrio.open_client(transport) as client:
                with pytest.raises(TransportError, match="exceeds the size limit of 2000"):
                    await client.call_tool("big")
                assert (await client.call_tool("small")).content == [TextContent(text="ok")]
            nursery.cancel_scope.cancel()
