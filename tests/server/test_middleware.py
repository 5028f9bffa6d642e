"""Middleware: an ordered chain around every request and notification the handlers receive,
able to answer, change, time or refuse; on every transport, in both eras; free when absent."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from cancellation import Waiter

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Revisions
from mcptrio.protocol.base import Result
from mcptrio.protocol.types import CallToolRequest, CallToolResult, TextContent
from mcptrio.server import dispatch as dispatch_module
from mcptrio.server.middleware import Call, CallNext

STATELESS = Revisions(protocol_version="2026-07-28")
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": STATELESS}
PLACES = [
    ("memory", "handshake"),
    ("memory", "stateless"),
    ("http", "handshake"),
    ("http", "stateless"),
    ("websocket", "handshake"),
]


@asynccontextmanager
async def connected(
    server: mcptrio.Server, place: str = "memory", era: str = "handshake"
) -> AsyncIterator[mcptrio.Client]:
    """A client of ``server`` over ``place`` ("memory", "http", "websocket") in ``era``."""
    if place == "memory":
        async with mcptrio.open_client(server, revisions=ERAS[era]) as client:
            yield client
        return
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http)
        if place == "websocket":
            url = url.replace("http://", "ws://")
        async with mcptrio.open_client(f"{url}/mcp", revisions=ERAS[era]) as client:
            yield client
        nursery.cancel_scope.cancel()


def echo_server(*middleware: Any) -> mcptrio.Server:
    server = mcptrio.Server("echo", middleware=middleware)

    @server.tool
    async def echo(text: str, ctx: mcptrio.Context) -> str:
        return f"{text} (arguments {dict(ctx.arguments)})"

    return server


def text_of(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_every_request_passes_through_the_chain_outermost_first(place: str, era: str) -> None:
    seen: list[tuple[str, str, bool]] = []

    def recorder(label: str) -> Any:
        async def mw(call: Call, call_next: CallNext) -> Result | None:
            seen.append((label, call.method, call.context is not None))
            answer = await call_next(call)
            seen.append((label + " done", call.method, call.is_request))
            return answer

        return mw

    server = echo_server(recorder("outer"), recorder("inner"))
    with trio.fail_after(10):
        async with connected(server, place, era) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert text_of(result) == "hi (arguments {'text': 'hi'})"
    calls = [entry for entry in seen if entry[1] == "tools/call"]
    assert calls == [
        ("outer", "tools/call", True),
        ("inner", "tools/call", True),
        ("inner done", "tools/call", True),
        ("outer done", "tools/call", True),
    ]


async def test_notifications_pass_through_with_no_context() -> None:
    seen: list[Call] = []

    async def mw(call: Call, call_next: CallNext) -> Result | None:
        if not call.is_request:
            seen.append(call)
            assert await call_next(call) is None
            return None
        return await call_next(call)

    server = echo_server(mw)
    with trio.fail_after(5):
        async with connected(server) as client:
            await client.call_tool("echo", {"text": "x"})
    assert [call.method for call in seen] == ["notifications/initialized"]
    assert seen[0].context is None and seen[0].request_id is None


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_a_middleware_answers_without_the_handler(place: str, era: str) -> None:
    async def cached(call: Call, call_next: CallNext) -> Result | None:
        if isinstance(call.params, CallToolRequest) and call.params.name == "echo":
            return CallToolResult(content=[TextContent(text="from the cache")])
        return await call_next(call)

    with trio.fail_after(10):
        async with connected(echo_server(cached), place, era) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert text_of(result) == "from the cache"


async def test_a_middleware_changes_the_params_the_handler_sees() -> None:
    async def shout(call: Call, call_next: CallNext) -> Result | None:
        params = call.params
        if isinstance(params, CallToolRequest) and isinstance(params.arguments, dict):
            louder = {**params.arguments, "text": str(params.arguments["text"]).upper()}
            return await call_next(
                call.replace(params=msgspec.structs.replace(params, arguments=louder))
            )
        return await call_next(call)

    with trio.fail_after(5):
        async with connected(echo_server(shout)) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert text_of(result) == "HI (arguments {'text': 'HI'})"


async def test_a_middleware_changes_the_result() -> None:
    async def suffix(call: Call, call_next: CallNext) -> Result | None:
        result = await call_next(call)
        if isinstance(result, CallToolResult):
            result = msgspec.structs.replace(
                result, content=[*result.content, TextContent(text="checked")]
            )
        return result

    with trio.fail_after(5):
        async with connected(echo_server(suffix)) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert [c.text for c in result.content if isinstance(c, TextContent)][-1] == "checked"


@pytest.mark.parametrize(("place", "era"), PLACES)
async def test_a_refusal_is_the_json_rpc_error_it_raised(place: str, era: str) -> None:
    async def refuse(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "tools/call":
            raise mcptrio.McpError("Not today", {"why": "closed"}, code=-32000)
        return await call_next(call)

    with trio.fail_after(10):
        async with connected(echo_server(refuse), place, era) as client:
            with pytest.raises(mcptrio.McpError) as caught:
                await client.call_tool("echo", {"text": "hi"})
            # The session carries on.
            assert (await client.list_tools()).tools[0].name == "echo"
    assert (caught.value.code, caught.value.message, caught.value.data) == (
        -32000,
        "Not today",
        {"why": "closed"},
    )


async def test_a_middleware_that_fails_gets_an_internal_error() -> None:
    async def broken(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "tools/call":
            raise KeyError("oops")
        return await call_next(call)

    with trio.fail_after(5):
        async with connected(echo_server(broken)) as client:
            with pytest.raises(mcptrio.InternalError, match="KeyError"):
                await client.call_tool("echo", {"text": "hi"})


async def test_a_middleware_returning_nothing_for_a_request_gets_an_internal_error() -> None:
    async def forgetful(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "tools/call":
            await call_next(call)
            return None
        return await call_next(call)

    with trio.fail_after(5):
        async with connected(echo_server(forgetful)) as client:
            with pytest.raises(mcptrio.InternalError, match="returned None, not a result"):
                await client.call_tool("echo", {"text": "hi"})


async def test_replace_keeps_the_type_of_the_params() -> None:
    seen: list[str] = []

    async def swap(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "tools/call":
            try:
                call.replace(params=mcptrio.protocol.types.ListToolsRequest())
            except TypeError as exc:
                seen.append(str(exc))
        return await call_next(call)

    with trio.fail_after(5):
        async with connected(echo_server(swap)) as client:
            await client.call_tool("echo", {"text": "hi"})
    assert seen == [
        "A middleware may change a CallToolRequest's params, not replace it with a ListToolsRequest"
    ]


async def test_a_peer_cancellation_interrupts_a_middleware() -> None:
    waiter = Waiter()

    async def slow(call: Call, call_next: CallNext) -> Result | None:
        if call.method == "tools/call":
            await waiter.wait_until_cancelled()
        return await call_next(call)

    with trio.fail_after(5):
        async with connected(echo_server(slow)) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "echo", {"text": "hi"})
                await waiter.entered.wait()
                nursery.cancel_scope.cancel()
            await waiter.cancelled.wait()


async def test_middleware_added_and_removed_while_sessions_run() -> None:
    seen: list[str] = []

    async def mw(call: Call, call_next: CallNext) -> Result | None:
        seen.append(call.method)
        return await call_next(call)

    server = echo_server()
    with trio.fail_after(5):
        async with connected(server) as client:
            await client.call_tool("echo", {"text": "before"})
            assert server.add_middleware(mw) is mw
            assert server.middleware == (mw,)
            await client.call_tool("echo", {"text": "during"})
            assert server.remove_middleware(mw)
            assert not server.remove_middleware(mw)
            await client.call_tool("echo", {"text": "after"})
    assert seen == ["tools/call"]


async def test_without_middleware_no_call_is_ever_made(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_call(*args: object) -> None:
        raise AssertionError("a Call was made for a server with no middleware")

    monkeypatch.setattr(dispatch_module, "Call", no_call)
    server = echo_server()
    chains = server._dispatch.middleware
    assert chains.request is None and chains.notification is None
    with trio.fail_after(5):
        async with connected(server) as client:
            assert text_of(await client.call_tool("echo", {"text": "hi"})).startswith("hi")


def test_middleware_must_be_callable() -> None:
    with pytest.raises(TypeError, match="async callable"):
        mcptrio.Server("x", middleware=["not a function"])  # type: ignore[list-item]


STDIO_SERVER = """
import mcptrio

async def refuse(call, call_next):
    if call.method == "tools/call" and call.params.name == "secret":
        raise mcptrio.McpError("Refused over stdio", code=-32000)
    return await call_next(call)

server = mcptrio.Server("stdio-guarded", middleware=[refuse])

@server.tool
async def secret() -> str:
    return "leaked"

@server.tool
async def public() -> str:
    return "fine"

server.run_stdio()
"""


async def test_middleware_works_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "guarded.py"
    script.write_text(STDIO_SERVER, encoding="utf-8")
    with trio.fail_after(30):
        async with mcptrio.open_client([sys.executable, str(script)]) as client:
            assert text_of(await client.call_tool("public", {})) == "fine"
            with pytest.raises(mcptrio.McpError, match="Refused over stdio"):
                await client.call_tool("secret", {})
