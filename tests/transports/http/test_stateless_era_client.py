"""The Streamable HTTP client in the stateless era (2026-07-28), against a scripted server:
re-issuing a request whose stream broke, cancelling by closing, and the way the first POST
decides between Streamable HTTP and HTTP+SSE (CHECKLIST 7.6, 7.7)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from fake_server import Cut, FakeExchange, FakeRequest, FakeServerStats, serve_fake_http
from sdk_peer import open_sdk_server

import mcptrio
from mcptrio.client import HttpTarget, Revisions
from mcptrio.protocol.errors import McpError, TransportError
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.transport import open_http_client_transport

BOTH_ERAS = Revisions(supported=SUPPORTED)

DISCOVER = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}},
}
TOOLS = {
    "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
    "ttlMs": 0,
    "cacheScope": "public",
    "resultType": "complete",
}

Script = Callable[[dict[str, Any], FakeExchange], Awaitable[bool]]


def _answer(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


class StatelessFake:
    """A stateless-era endpoint: no session; every POST answered on its own."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.stats = FakeServerStats()
        self.posted: list[dict[str, Any]] = []

    async def __call__(self, request: FakeRequest, exchange: FakeExchange) -> None:
        if request.method != "POST":
            await exchange.respond(405)
            return
        message = json.loads(request.body)
        self.posted.append(message)
        if "id" not in message:
            await exchange.respond(202)
        elif await self.script(message, exchange):
            return
        elif message["method"] == "server/discover":
            await exchange.respond(
                200, [("content-type", "application/json")], _answer(message["id"], DISCOVER)
            )
        elif message["method"] == "tools/list":
            await exchange.respond(
                200, [("content-type", "application/json")], _answer(message["id"], TOOLS)
            )
        else:
            await exchange.respond(
                200,
                [("content-type", "application/json")],
                _answer(message["id"], {"resultType": "complete"}),
            )

    def calls(self) -> list[dict[str, Any]]:
        return [m for m in self.posted if m.get("method") == "tools/call"]


@asynccontextmanager
async def serve(handler: Any, stats: FakeServerStats) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_fake_http, handler, stats)
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


def _sse_head() -> list[tuple[str, str]]:
    return [("content-type", "text/event-stream")]


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "resultType": "complete"}


async def test_a_request_whose_stream_breaks_is_reissued_with_a_new_id_and_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def break_first_stream(message: dict[str, Any], exchange: FakeExchange) -> bool:
        if message.get("method") != "tools/call":
            return False
        await exchange.start(200, _sse_head())
        if len(fake.calls()) == 1:
            raise Cut
        await exchange.send(b"data: " + _answer(message["id"], _text("again")) + b"\n\n")
        await exchange.end()
        return True

    fake = StatelessFake(break_first_stream)
    with trio.fail_after(30):
        async with (
            serve(fake, fake.stats) as url,
            mcptrio.open_client(url, revisions=BOTH_ERAS) as client,
        ):
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("echo", {})
            assert result.content == [TextContent(text="again")]
            # The session's ids go on as if nothing happened.
            assert (await client.list_tools()).tools
    first, second = fake.calls()
    assert first["id"] != second["id"]
    assert first["params"] == second["params"]


async def test_a_reissued_request_whose_answer_is_too_large_fails_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def break_then_answer_too_much(message: dict[str, Any], exchange: FakeExchange) -> bool:
        if message.get("method") != "tools/call":
            return False
        await exchange.start(200, _sse_head())
        if len(fake.calls()) == 1:
            raise Cut
        await exchange.send(b"data: " + _answer(message["id"], _text("x" * 3000)) + b"\n\n")
        await exchange.end()
        return True

    fake = StatelessFake(break_then_answer_too_much)
    with trio.fail_after(30):
        async with (
            serve(fake, fake.stats) as url,
            mcptrio.open_client(
                HttpTarget(url, max_frame_size=2000), revisions=BOTH_ERAS
            ) as client,
        ):
            assert client.protocol_version == "2026-07-28"
            # The answer names the re-issued id; the caller waits on the one it sent.
            with pytest.raises(TransportError, match="exceeds the size limit of 2000 bytes"):
                await client.call_tool("echo", {})
            assert (await client.list_tools()).tools
    # Asked twice (the first stream broke), not again; and nothing sent back about it.
    assert len(fake.calls()) == 2
    assert all("method" in message for message in fake.posted)


async def test_a_request_whose_stream_always_breaks_fails_after_the_reissues(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def always_break(message: dict[str, Any], exchange: FakeExchange) -> bool:
        if message.get("method") != "tools/call":
            return False
        await exchange.start(200, _sse_head())
        raise Cut

    fake = StatelessFake(always_break)
    with trio.fail_after(60):
        async with (
            serve(fake, fake.stats) as url,
            mcptrio.open_client(url, revisions=BOTH_ERAS) as client,
        ):
            with pytest.raises(McpError, match="broke before the answer"):
                await client.call_tool("echo", {})
            await client.ping()
    calls = fake.calls()
    assert len(calls) == 3
    assert len({c["id"] for c in calls}) == 3


async def test_cancelling_a_stateless_request_closes_its_stream_and_sends_no_notice(
    autojump_clock: trio.testing.MockClock,
) -> None:
    closed = trio.Event()

    async def hang(message: dict[str, Any], exchange: FakeExchange) -> bool:
        if message.get("method") != "tools/call":
            return False
        await exchange.start(200, _sse_head())
        try:
            while True:
                await trio.sleep(0.5)
                await exchange.send(b": keep-alive\n\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            closed.set()
            raise Cut from None

    fake = StatelessFake(hang)
    with trio.fail_after(30):
        async with (
            serve(fake, fake.stats) as url,
            mcptrio.open_client(url, revisions=BOTH_ERAS) as client,
        ):
            with pytest.raises(mcptrio.protocol.errors.RequestTimeout):
                await client.call_tool("echo", {}, timeout=2)
            await closed.wait()
            await client.list_tools()
    methods = [m.get("method") for m in fake.posted]
    assert "notifications/cancelled" not in methods
    assert len(fake.calls()) == 1


async def test_ping_in_the_stateless_era_is_a_discover(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def nothing(message: dict[str, Any], exchange: FakeExchange) -> bool:
        return False

    fake = StatelessFake(nothing)
    with trio.fail_after(30):
        async with (
            serve(fake, fake.stats) as url,
            mcptrio.open_client(url, revisions=BOTH_ERAS) as client,
        ):
            await client.ping()
    assert [m["method"] for m in fake.posted] == ["server/discover", "server/discover"]
    assert "ping" not in [m["method"] for m in fake.posted]


async def test_a_probe_refused_by_a_handshake_server_falls_back_and_cancels_with_a_notice(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """After the fallback, the transport speaks the handshake era: cancelling sends
    ``notifications/cancelled`` (closing a stream is no cancellation there)."""
    posted: list[dict[str, Any]] = []
    stats = FakeServerStats()

    async def handshake_only(request: FakeRequest, exchange: FakeExchange) -> None:
        if request.method != "POST":
            await exchange.respond(405)
            return
        message = json.loads(request.body)
        posted.append(message)
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "1"},
            }
            await exchange.respond(
                200,
                [("content-type", "application/json"), ("mcp-session-id", "s1")],
                _answer(message["id"], result),
            )
        elif request.headers.get("mcp-session-id") != "s1":
            await exchange.respond(400, body=b"Bad Request: missing session id")
        elif method == "tools/call":
            await exchange.start(200, _sse_head())
            await trio.sleep_forever()
        elif method == "tools/list":
            tools = {"tools": TOOLS["tools"]}
            await exchange.respond(
                200, [("content-type", "application/json")], _answer(message["id"], tools)
            )
        elif "id" in message:
            await exchange.respond(
                200, [("content-type", "application/json")], _answer(message["id"], {})
            )
        else:
            await exchange.respond(202)

    with trio.fail_after(30):
        async with (
            serve(handshake_only, stats) as url,
            mcptrio.open_client(url, revisions=BOTH_ERAS) as client,
        ):
            assert client.protocol_version == "2025-11-25"
            with pytest.raises(mcptrio.protocol.errors.RequestTimeout):
                await client.call_tool("echo", {}, timeout=2)
            await client.ping()
    methods = [m.get("method") for m in posted]
    assert methods[:2] == ["server/discover", "initialize"]
    assert "notifications/cancelled" in methods


async def test_a_probe_refused_with_a_stateless_era_error_does_not_try_http_sse() -> None:
    stats = FakeServerStats()

    async def refuse_version(request: FakeRequest, exchange: FakeExchange) -> None:
        if request.method == "GET":
            raise AssertionError("a stateless-era server was tried as HTTP+SSE")
        message = json.loads(request.body)
        error = {
            "code": -32021,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"sampling": {}}},
        }
        body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error})
        await exchange.respond(400, [("content-type", "application/json")], body.encode())

    with trio.fail_after(30):
        async with serve(refuse_version, stats) as url:
            with pytest.raises(McpError) as caught:
                async with mcptrio.open_client(url, revisions=BOTH_ERAS):
                    pass
    assert caught.value.code == -32021
    assert [r.method for r in stats.requests] == ["POST"]


async def test_a_probe_of_an_http_sse_only_server_falls_back_to_that_transport() -> None:
    with trio.fail_after(30):
        async with (
            open_sdk_server("sse") as base,
            open_http_client_transport(base + "/sse", timeout=10) as transport,
            mcptrio.open_client(transport, revisions=BOTH_ERAS) as client,
        ):
            assert transport.kind == "legacy"
            assert client.protocol_version != "2026-07-28"
            result = await client.call_tool("add", {"a": 20, "b": 22})
            assert result.content == [TextContent(text="42")]
