"""Tools over the wire: tools/list and tools/call as each revision sees them.

Every test runs a real ``mcptrio.Server`` behind the in-memory transport, records both
directions, checks the exact messages and validates each one against the negotiated revision's
schema.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest
import trio
import trio.testing
from cancellation import Waiter
from contexts import context_for
from eras import only

import mcptrio
from mcptrio.protocol.call_key import CALL_KEY
from mcptrio.protocol.types import (
    GetPromptRequest,
    Icon,
    ResourceLink,
    TextContent,
    ToolAnnotations,
)
from mcptrio.server.context import Context
from mcptrio.server.media import Audio
from mcptrio.server.tools import ToolError, make_tool

from conftest import Wire, as_sent, open_recorded_client
from schema_validation import HANDSHAKE_REVISIONS, validate_message

WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
B64_WAV = base64.b64encode(WAV).decode()
STRUCTURED_SINCE = "2025-06-18"


@pytest.fixture(params=HANDSHAKE_REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs once in every revision of the handshake era."""
    return str(request.param)


class Point(msgspec.Struct):
    x: int
    y: int


def tools_server() -> mcptrio.Server:
    server = mcptrio.Server("tools")

    @server.tool()
    async def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def locate(name: str) -> Point:
        return Point(len(name), 0)

    @server.tool()
    async def wrong() -> int:
        return "three"  # type: ignore[return-value]

    @server.tool()
    async def fail_politely(n: int) -> str:
        raise ToolError(f"{n} is too big: try a number under 10")

    @server.tool()
    async def crash() -> str:
        raise RuntimeError("boom")

    @server.tool()
    async def refuse() -> str:
        raise mcptrio.McpError("teapot", {"why": "tea"}, code=-31000)

    @server.tool()
    async def speak() -> Audio:
        return Audio(WAV)

    @server.tool()
    async def link() -> ResourceLink:
        return ResourceLink(uri="file:///notes.md", name="notes.md")

    @server.tool()
    async def who(ctx: Context, label: str = "me") -> str:
        return f"{label}: request {ctx.request_id}"

    return server


def result_of(wire: Wire, revision: str) -> Any:
    """The last tools/call exchange: the request and response, both validated."""
    request = [m for m in wire.client_to_server if m.get("method") == "tools/call"][-1]
    validate_message(request, revision, "client")
    response = next(m for m in wire.server_to_client if m.get("id") == request["id"])
    if "result" in response:
        validate_message(response, revision, "CallToolResult")
    else:
        validate_message(response, revision)
    assert set(response) == {"jsonrpc", "id", "result"} or set(response) == {
        "jsonrpc",
        "id",
        "error",
    }
    return response.get("result", response.get("error"))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [text(message)], "isError": True}


async def call(client: mcptrio.Client, wire: Wire, name: str, args: Any = None) -> Any:
    await client.call_tool(name, args)
    return result_of(wire, client.protocol_version)


# ------------------------------------------------------------------ tools/list


async def test_tools_list_on_the_wire(revision: str) -> None:
    server = mcptrio.Server("listing")

    @server.tool()
    async def greet(name: str, punctuation: str = "!") -> str:
        """Greet someone."""
        return f"Hello, {name}{punctuation}"

    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            await client.list_tools()
    response = next(m for m in wire.server_to_client if "result" in m and "tools" in m["result"])
    validate_message(response, revision, "ListToolsResult")
    assert response["result"] == {
        "tools": [
            {
                "name": "greet",
                "description": "Greet someone.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "punctuation": {"type": "string", "default": "!"},
                    },
                    "required": ["name"],
                },
            }
        ]
    }


async def test_tools_list_shows_each_revision_its_fields(revision: str) -> None:
    server = mcptrio.Server("listing")

    @server.tool(
        title="Adder",
        annotations=ToolAnnotations(read_only_hint=True),
        icons=[Icon(src="https://example.com/add.png")],
        meta={"com.example/k": "v"},
    )
    async def add(a: int, b: int) -> int:
        return a + b

    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            await client.list_tools()
    response = next(m for m in wire.server_to_client if "tools" in m.get("result", {}))
    validate_message(response, revision, "ListToolsResult")
    expected: dict[str, Any] = {
        "name": "add",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    }
    if revision == "2025-03-26":
        expected["annotations"] = {"title": "Adder", "readOnlyHint": True}
    if revision >= STRUCTURED_SINCE:
        expected["title"] = "Adder"
        expected["annotations"] = {"readOnlyHint": True}
        expected["outputSchema"] = {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }
        expected["_meta"] = {"com.example/k": "v"}
    if revision >= "2025-11-25":
        expected["icons"] = [{"src": "https://example.com/add.png"}]
    assert response["result"] == {"tools": [expected]}


async def test_a_context_parameter_gets_the_call_s_context(revision: str) -> None:
    server = mcptrio.Server("ctx")

    @server.tool()
    async def where(ctx: Context, label: str) -> str:
        await ctx.report_progress(1, 1)
        return f"{label} {ctx.revision} {ctx.request_id} {ctx.server is server}"

    progress: list[float] = []
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            await client.call_tool(
                "where", {"label": "here"}, on_progress=lambda p, t, m: progress.append(p)
            )
            result = result_of(wire, revision)
            listed = await client.list_tools()
    call_id = [m for m in wire.client_to_server if m.get("method") == "tools/call"][-1]["id"]
    assert result == {"content": [text(f"here {revision} {call_id} True")]}
    assert progress == [1]
    assert listed.tools[0].input_schema["properties"] == {"label": {"type": "string"}}


async def test_every_listed_tool_validates_in_every_revision() -> None:
    for revision in HANDSHAKE_REVISIONS:
        server = tools_server()
        with trio.fail_after(5):
            async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
                listed = await client.list_tools()
        assert [t.name for t in listed.tools] == [
            "greet",
            "add",
            "locate",
            "wrong",
            "fail_politely",
            "crash",
            "refuse",
            "speak",
            "link",
            "who",
        ]
        response = next(m for m in wire.server_to_client if "tools" in m.get("result", {}))
        validate_message(response, revision, "ListToolsResult")


# ------------------------------------------------------------------ tools/call


async def test_calls_on_the_wire(revision: str) -> None:
    modern = revision >= STRUCTURED_SINCE
    server = tools_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            assert client.protocol_version == revision
            assert await call(client, wire, "greet", {"name": "Ada"}) == {
                "content": [text("Hello, Ada!")]
            }
            request = [m for m in wire.client_to_server if m.get("method") == "tools/call"][-1]
            # Every call carries its call key (mcptrio.client.call_keys), and nothing else.
            meta = request["params"].pop("_meta")
            assert list(meta) == [CALL_KEY] and isinstance(meta[CALL_KEY], str)
            assert request["params"] == {"name": "greet", "arguments": {"name": "Ada"}}

            added = await call(client, wire, "add", {"a": 1, "b": 2})
            assert added == (
                {"content": [text("3")], "structuredContent": {"result": 3}}
                if modern
                else {"content": [text("3")]}
            )
            located = await call(client, wire, "locate", {"name": "abc"})
            assert located == (
                {"content": [text('{"x":3,"y":0}')], "structuredContent": {"x": 3, "y": 0}}
                if modern
                else {"content": [text('{"x":3,"y":0}')]}
            )
            who = await call(client, wire, "who", {"label": "it"})
            who_id = [m for m in wire.client_to_server if m.get("method") == "tools/call"][-1]["id"]
            assert who == {"content": [text(f"it: request {who_id}")]}


async def test_bad_arguments_are_a_tool_error_the_model_can_act_on(revision: str) -> None:
    server = tools_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            assert await call(client, wire, "add", {"a": "one", "b": 2}) == tool_error(
                "Invalid arguments for tool 'add': Expected `int`, got `str` - at `$.a`"
            )
            assert await call(client, wire, "add", {"a": 1}) == tool_error(
                "Invalid arguments for tool 'add': Object missing required field `b`"
            )
            assert await call(client, wire, "add") == tool_error(
                "Invalid arguments for tool 'add': Object missing required field `a`"
            )
            # Unknown arguments are ignored.
            added = await call(client, wire, "add", {"a": 1, "b": 2, "c": 3})
            assert added["content"] == [text("3")]


async def test_tool_failures(revision: str, caplog: pytest.LogCaptureFixture) -> None:
    server = tools_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            assert await call(client, wire, "fail_politely", {"n": 12}) == tool_error(
                "12 is too big: try a number under 10"
            )
            with caplog.at_level(logging.ERROR, logger="mcptrio.server"):
                assert await call(client, wire, "crash") == tool_error(
                    "Error executing tool crash: boom"
                )
                assert await call(client, wire, "wrong") == tool_error(
                    "Error executing tool wrong: returned str does not match its return type"
                    " int: Expected `int`, got `str`"
                )
            failed = [r for r in caplog.records if r.name == "mcptrio.server"]
            assert [r.getMessage() for r in failed] == [
                "Tool 'crash' failed",
                "Tool 'wrong' failed",
            ]
            assert failed[0].exc_info is not None
            with pytest.raises(mcptrio.McpError) as refused:
                await client.call_tool("refuse")
            assert (refused.value.code, refused.value.message, refused.value.data) == (
                -31000,
                "teapot",
                {"why": "tea"},
            )
            assert result_of(wire, revision) == {
                "code": -31000,
                "message": "teapot",
                "data": {"why": "tea"},
            }
            with pytest.raises(mcptrio.InvalidParams, match="Unknown tool: nope"):
                await client.call_tool("nope")
            assert result_of(wire, revision)["code"] == -32602
            # The session carries on.
            assert (await client.call_tool("greet", {"name": "B"})).content == [
                TextContent(text="Hello, B!")
            ]


async def test_content_the_revision_lacks_is_converted(revision: str) -> None:
    server = tools_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            spoken = await call(client, wire, "speak")
            linked = await call(client, wire, "link")
    if revision >= "2025-03-26":
        assert spoken == {"content": [{"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"}]}
    else:
        note = f"[audio (audio/wav) left out: protocol revision {revision} has no audio]"
        assert spoken == {"content": [text(note)]}
    if revision >= STRUCTURED_SINCE:
        assert linked == {
            "content": [{"type": "resource_link", "uri": "file:///notes.md", "name": "notes.md"}]
        }
    else:
        assert linked == {"content": [text("[resource link: notes.md <file:///notes.md>]")]}


async def test_a_sync_tool_runs_in_a_thread_and_never_blocks_the_loop() -> None:
    server = mcptrio.Server("threads")
    entered = threading.Event()
    release = threading.Event()
    loop_thread = threading.get_ident()

    @server.tool()
    def blocking() -> str:
        entered.set()
        released = release.wait(timeout=5)
        where = "worker thread" if threading.get_ident() != loop_thread else "event loop"
        return f"released={released} in {where}"

    @server.tool()
    async def unblock() -> str:
        release.set()
        return "unblocked"

    results: dict[str, Any] = {}
    with trio.fail_after(10):
        async with open_recorded_client(server) as (client, _, _):

            async def call_blocking() -> None:
                results["blocking"] = await client.call_tool("blocking")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_blocking)
                assert await trio.to_thread.run_sync(entered.wait, 5)
                # The sync tool is now waiting in its thread; another call still completes.
                results["unblock"] = await client.call_tool("unblock")
                assert "blocking" not in results
    assert results["unblock"].content == [TextContent(text="unblocked")]
    assert results["blocking"].content == [TextContent(text="released=True in worker thread")]


async def test_cancelling_an_async_tool_interrupts_it() -> None:
    server = mcptrio.Server("cancel")
    waiter = Waiter()

    @server.tool()
    async def forever() -> str:
        await waiter.wait_until_cancelled()

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _):
            with trio.CancelScope() as scope:

                async def cancel_when_entered() -> None:
                    await waiter.entered.wait()
                    scope.cancel()

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(cancel_when_entered)
                    await client.call_tool("forever")
            await waiter.cancelled.wait()
            await client.ping()
    call_id = next(m["id"] for m in wire.client_to_server if m.get("method") == "tools/call")
    assert not [m for m in wire.server_to_client if m.get("id") == call_id]


# ------------------------------------------------------------------ contexts


def make_context(revision: str) -> Context:
    return context_for(GetPromptRequest(name="x"), revision, request_id=7)


async def test_context_parameters_receive_the_context() -> None:
    seen: dict[str, Any] = {}

    async def inspect_contexts(ctx: Context, n: int = 1, again: Context | None = None) -> str:
        seen.update(ctx=ctx, again=again)
        return f"{ctx.revision} request {ctx.request_id} n={n}"

    def sync_inspect(n: int, /, ctx: Context | None = None) -> str:
        return f"sync {n} {ctx is not None and ctx.request_id}"

    context = make_context("2025-06-18")
    tool = make_tool(inspect_contexts)
    result = await tool.call(context, {"n": 2})
    assert result.content == [TextContent(text="2025-06-18 request 7 n=2")]
    assert seen == {"ctx": context, "again": context}
    positional = make_tool(sync_inspect)
    assert positional.input_schema["required"] == ["n"]
    assert (await positional.call(context, {"n": 5})).content == [TextContent(text="sync 5 7")]


async def test_a_tool_without_parameters_takes_no_arguments_given_or_not() -> None:
    calls: list[tuple[Any, ...]] = []

    async def now() -> str:
        calls.append(())
        return "noon"

    async def who(ctx: Context) -> str:
        calls.append((ctx.request_id,))
        return "me"

    context = make_context("2025-11-25")
    for arguments in (None, {}, {"unknown": 1}):
        assert (await make_tool(now).call(context, arguments)).content == [TextContent(text="noon")]
        assert (await make_tool(who).call(context, arguments)).content == [TextContent(text="me")]
    assert calls == [(), (7,)] * 3


async def test_a_call_answers_in_the_newest_shape_which_the_connection_fits() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    tool = make_tool(add)
    old = await tool.call(make_context("2025-03-26"), {"a": 1, "b": 2})
    assert old.structured_content == {"result": 3}
    assert as_sent(old, "2025-03-26").structured_content is None


async def test_a_generator_tool_returns_its_items_as_a_list() -> None:
    def numbers() -> Iterator[int]:
        yield 1
        yield 2

    async def words() -> AsyncIterator[str]:
        yield "a"
        yield "b"

    listed = await make_tool(numbers).call(make_context("2025-11-25"), {})
    assert listed.structured_content == {"result": [1, 2]}
    assert (await make_tool(words).call(make_context("2025-11-25"), {})).content == [
        TextContent(text="a"),
        TextContent(text="b"),
    ]


async def test_trio_cancelled_propagates_from_a_tool(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def forever() -> str:
        await trio.sleep_forever()
        return "never"

    tool = make_tool(forever)
    with trio.move_on_after(1) as scope:
        await tool.call(make_context("2025-11-25"), {})
    assert scope.cancelled_caught


async def test_errors_from_a_nursery_inside_a_tool(caplog: pytest.LogCaptureFixture) -> None:
    async def raise_in_nursery(*errors: Exception) -> None:
        async def fail(exc: Exception) -> None:
            raise exc

        async with trio.open_nursery() as nursery:
            for exc in errors:
                nursery.start_soon(fail, exc)

    async def polite() -> str:
        await raise_in_nursery(ToolError("first"), ToolError("second"))
        return "never"

    async def protocol() -> str:
        await raise_in_nursery(mcptrio.InvalidParams("bad"))
        return "never"

    async def mixed() -> str:
        await raise_in_nursery(ValueError("v"), ToolError("t"))
        return "never"

    context = make_context("2025-11-25")
    polite_result = await make_tool(polite).call(context, {})
    assert polite_result.is_error is True
    # Trio runs the nursery's tasks in no fixed order, so the messages come in either order.
    assert isinstance(polite_result.content[0], TextContent)
    assert sorted(polite_result.content[0].text.split("\n")) == ["first", "second"]
    with pytest.raises(mcptrio.InvalidParams, match="bad"):
        await make_tool(protocol).call(context, {})
    with caplog.at_level(logging.ERROR, logger="mcptrio.server"):
        mixed_result = await make_tool(mixed).call(context, {})
    assert mixed_result.content in (
        [TextContent(text="Error executing tool mixed: v; t")],
        [TextContent(text="Error executing tool mixed: t; v")],
    )
    assert "Tool 'mixed' failed" in caplog.text
