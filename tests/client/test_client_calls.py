"""The client's typed calls, pagination, timeouts and cancellation, against an in-memory Server.

Every exchange is validated against the official schema of the negotiated revision.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.client import RepeatedCursor, Revisions, Timeouts
from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import (
    ListToolsRequest,
    ListToolsResult,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
    Tool,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.runtime.transport import Outgoing, Transport
from mcptrio.server.context import Context
from mcptrio.transports.memory import memory_transport_pair

from conftest import Wire, open_recorded_client


@pytest.fixture(params=HANDSHAKE_SUPPORTED)
def revision(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs once in every revision of the handshake era."""
    return str(request.param)


def feature_server(page_size: int | None = 100) -> mcptrio.Server:
    server = mcptrio.Server("features", page_size=page_size)

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool()
    async def slow(ctx: Context, steps: int = 3) -> str:
        for i in range(steps):
            await trio.sleep(1)
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        return "done"

    @server.tool()
    async def forever() -> str:
        await trio.sleep_forever()
        return "never"

    server.add_resource("hello", "note://hello", name="hello", mime_type="text/plain")

    @server.resource("repo://{owner}/{name}", completions={"owner": ["alice", "albert", "bob"]})
    def repo(owner: str, name: str) -> str:
        return f"{owner}/{name}"

    @server.prompt(completions={"language": ["python", "perl", "rust"]})
    def review(language: str, code: str = "") -> str:
        return f"Review this {language}: {code}"

    return server


def many_server(count: int, page_size: int) -> mcptrio.Server:
    server = mcptrio.Server("many", page_size=page_size)
    for i in range(count):
        server.add_tool(lambda: "ok", name=f"tool_{i}")
        server.add_resource(f"text {i}", f"note://{i}", name=f"note_{i}")
        server.add_resource(lambda x: x, f"tmpl{i}://{{x}}", name=f"tmpl_{i}")
        server.add_prompt(lambda: "hi", name=f"prompt_{i}")
    return server


# ---------------------------------------------------------------------- the typed calls


async def test_every_typed_call_gets_its_typed_result(revision: str) -> None:
    with trio.fail_after(10):
        async with open_recorded_client(feature_server(), revisions=only(revision)) as (
            client,
            wire,
            _,
        ):
            assert client.protocol_version == revision
            assert client.server_info.name == "features"
            await client.ping()
            tools = await client.list_tools()
            assert {t.name for t in tools.tools} == {"add", "slow", "forever"}
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content == [TextContent(text="5")]
            resources = await client.list_resources()
            assert [r.uri for r in resources.resources] == ["note://hello"]
            read = await client.read_resource("note://hello")
            assert read.contents == [
                TextResourceContents(uri="note://hello", text="hello", mime_type="text/plain")
            ]
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == [
                "repo://{owner}/{name}"
            ]
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["review"]
            got = await client.get_prompt("review", {"language": "rust", "code": "fn main"})
            assert got.messages[0].content == TextContent(text="Review this rust: fn main")
            done = await client.complete(PromptReference(name="review"), "language", "p")
            assert done.completion.values == ["python", "perl"]
            done = await client.complete(
                ResourceTemplateReference(uri="repo://{owner}/{name}"), "owner", "al"
            )
            assert done.completion.values == ["alice", "albert"]
            await client.set_logging_level("warning")
            wire.validate(revision)
    sent = [m["method"] for m in wire.client_to_server if "method" in m]
    assert sent[:2] == ["initialize", "notifications/initialized"]
    assert "logging/setLevel" in sent


async def test_complete_sends_context_only_from_2025_06_18(revision: str) -> None:
    with trio.fail_after(10):
        async with open_recorded_client(feature_server(), revisions=only(revision)) as (
            client,
            wire,
            _,
        ):
            await client.complete(
                PromptReference(name="review"), "code", "", context={"language": "python"}
            )
            wire.validate(revision)
    request = next(m for m in wire.client_to_server if m.get("method") == "completion/complete")
    if revision >= "2025-06-18":
        assert request["params"]["context"] == {"arguments": {"language": "python"}}
    else:
        assert "context" not in request["params"]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.read_resource("note://missing"), mcptrio.ResourceNotFound),
        (lambda c: c.get_prompt("no-such-prompt"), mcptrio.InvalidParams),
        (lambda c: c.get_prompt("review"), mcptrio.InvalidParams),
        (lambda c: c.list_tools(cursor="not-a-cursor"), mcptrio.InvalidParams),
        (lambda c: c.request(ListToolsRequest(cursor="bogus")), mcptrio.InvalidParams),
    ],
)
async def test_error_answers_raise_the_servers_error_class(call: Any, error: type) -> None:
    # The handshake era: there a missing resource has its own code (-32002); the stateless era
    # answers it -32602 (InvalidParams), as tests/server/test_stateless_requests.py checks.
    with trio.fail_after(10):
        async with mcptrio.open_client(feature_server(), revisions=HANDSHAKE_ERA) as client:
            with pytest.raises(error):
                await call(client)
            # The session carries on.
            await client.ping()


async def test_the_offered_revision_is_the_one_asked_for() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(
            feature_server(), revisions=Revisions(protocol_version="2025-03-26")
        ) as (client, wire, _):
            assert client.protocol_version == "2025-03-26"
    assert wire.client_to_server[0]["params"]["protocolVersion"] == "2025-03-26"


async def test_an_offered_revision_outside_the_supported_ones_is_refused() -> None:
    with pytest.raises(ValueError, match="protocol_version"):
        async with mcptrio.open_client(
            feature_server(),
            revisions=Revisions(protocol_version="2025-06-18", supported=("2025-11-25",)),
        ):
            pass  # pragma: no cover


# ---------------------------------------------------------------------- pagination


async def test_iterators_follow_every_page(revision: str) -> None:
    with trio.fail_after(10):
        async with open_recorded_client(many_server(5, page_size=2), revisions=only(revision)) as (
            client,
            wire,
            _,
        ):
            tools = [t.name async for t in client.iter_tools()]
            resources = [r.name async for r in client.iter_resources()]
            templates = [t.name async for t in client.iter_resource_templates()]
            prompts = [p.name async for p in client.iter_prompts()]
            wire.validate(revision)
    assert tools == [f"tool_{i}" for i in range(5)]
    assert resources == [f"note_{i}" for i in range(5)]
    assert templates == [f"tmpl_{i}" for i in range(5)]
    assert prompts == [f"prompt_{i}" for i in range(5)]
    lists = [m for m in wire.client_to_server if m.get("method") == "tools/list"]
    assert len(lists) == 3
    assert "cursor" not in lists[0].get("params", {})
    assert all("cursor" in m["params"] for m in lists[1:])


async def test_one_page_at_a_time_with_the_cursor() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client(many_server(3, page_size=2)) as client:
            first = await client.list_prompts()
            assert isinstance(first.next_cursor, str)
            second = await client.list_prompts(first.next_cursor)
    assert [p.name for p in first.prompts + second.prompts] == ["prompt_0", "prompt_1", "prompt_2"]
    assert second.next_cursor is None


class LoopingServer(mcptrio.Server):
    """Answers every tools/list with the same nextCursor."""

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        if isinstance(request, ListToolsRequest):
            tool = Tool(name="again", input_schema={"type": "object"})
            return ListToolsResult(tools=[tool], next_cursor="same")
        return await super().handle_request(rctx, request)


async def test_a_repeating_cursor_is_refused_instead_of_looping() -> None:
    server = LoopingServer("loop", declare=["tools"])
    seen: list[str] = []
    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            with pytest.raises(RepeatedCursor, match="same"):
                async for tool in client.iter_tools():
                    seen.append(tool.name)
            assert issubclass(RepeatedCursor, mcptrio.McpError)
    assert seen == ["again", "again"]


# ---------------------------------------------------------------------- time and cancellation


def cancels(wire: Wire) -> list[dict[str, Any]]:
    return [m for m in wire.client_to_server if m.get("method") == "notifications/cancelled"]


async def test_request_timeout_is_the_default_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(100):
        async with open_recorded_client(feature_server(), timeouts=Timeouts(request=3.0)) as (
            client,
            wire,
            _,
        ):
            start = trio.current_time()
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("forever")
            assert trio.current_time() - start == pytest.approx(3.0)
            # An explicit timeout wins.
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("forever", timeout=1.0)
            assert trio.current_time() - start == pytest.approx(4.0)
            await client.ping()
            assert len(cancels(wire)) == 2
            assert "timed out" in cancels(wire)[0]["params"]["reason"]


async def test_leaving_the_callers_scope_sends_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(100):
        async with open_recorded_client(feature_server()) as (client, wire, server_session):
            with trio.move_on_after(2):
                await client.call_tool("forever")
            await client.ping()
            call = next(m for m in wire.client_to_server if m.get("method") == "tools/call")
            assert [c["params"]["requestId"] for c in cancels(wire)] == [call["id"]]
            # The server stopped the handler and never answered it.
            await trio.testing.wait_all_tasks_blocked()
            assert server_session.statistics().in_flight_incoming == 0
            assert not any(m.get("id") == call["id"] for m in wire.server_to_client)


async def test_progress_reaches_on_progress_and_pushes_the_timeout_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(100):
        async with mcptrio.open_client(feature_server(), timeouts=Timeouts(request=1.5)) as client:
            result = await client.call_tool("slow", {"steps": 4}, on_progress=on_progress)
            assert result.content == [TextContent(text="done")]
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool(
                    "slow", {"steps": 4}, max_total_timeout=2.5, on_progress=on_progress
                )
    assert seen[:4] == [(i + 1, 4, f"step {i + 1}") for i in range(4)]


# ---------------------------------------------------------------------- bad server answers


@asynccontextmanager
async def scripted_server(
    answers: Mapping[str, Any],
) -> AsyncIterator[Transport]:
    """A raw peer: answers initialize properly, then each method with ``answers[method]``
    (a raw JSON-RPC message without the id; a list of ``bytes``: whole frames, ``ID`` standing
    for the id; ``None``: never answer)."""
    client_end, server_end = memory_transport_pair()

    async def serve() -> None:
        while True:
            try:
                frame = await server_end.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
                return
            assert isinstance(frame, bytes)
            message = json.loads(frame)
            if "id" not in message or "method" not in message:
                continue
            if message["method"] == "initialize":
                reply: Any = {
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                        "serverInfo": {"name": "scripted", "version": "1"},
                    }
                }
            else:
                reply = answers.get(message["method"])
                if reply is None:
                    continue
            if isinstance(reply, list):
                rid = json.dumps(message["id"]).encode()
                await server_end.send([Outgoing(frame.replace(b"ID", rid)) for frame in reply])
                continue
            data = json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode()
            await server_end.send([Outgoing(data)])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        yield client_end
        nursery.cancel_scope.cancel()


async def test_malformed_results_raise_instead_of_hanging(
    autojump_clock: trio.testing.MockClock,
) -> None:
    answers = {
        "tools/list": {"result": {"tools": "not a list"}},
        "tools/call": {"result": {"content": [{"type": "no-such-type"}]}},
        "resources/read": {"error": {"code": "not an int", "message": 3}},
        "prompts/get": {"result": 42},
        "prompts/list": None,
    }
    with trio.fail_after(100):
        async with (
            scripted_server(answers) as transport,
            mcptrio.open_client(transport, timeouts=Timeouts(request=5)) as client,
        ):
            with pytest.raises(mcptrio.InvalidParams, match=r"\$\.tools"):
                await client.list_tools()
            with pytest.raises(mcptrio.InvalidParams):
                await client.call_tool("x", validate_output=False)
            with pytest.raises(mcptrio.McpError):
                await client.read_resource("a://b")
            with pytest.raises(mcptrio.InvalidParams):
                await client.get_prompt("p")
            with pytest.raises(mcptrio.RequestTimeout):
                await client.list_prompts()


async def test_an_answer_too_deep_to_read_fails_its_call_instead_of_hanging() -> None:
    # No request timeout: before, each call waited for an answer that could not come.
    nested = b"[" * 5000 + b"]" * 5000
    answers = {
        "tools/call": [
            b'{"jsonrpc":"2.0","id":ID,"result":{"content":[],"structuredContent":{"v":'
            + nested
            + b"}}}"
        ],
        "resources/read": [
            b'{"jsonrpc": "2.0", "id": ID, "error": {"code": -1, "message": "x", "data": '
            + nested
            + b"}}"
        ],
        "tools/list": {"result": {"tools": []}},
    }
    with trio.fail_after(10):
        async with (
            scripted_server(answers) as transport,
            mcptrio.open_client(transport, revisions=HANDSHAKE_ERA) as client,
        ):
            with pytest.raises(mcptrio.ParseError, match="Unreadable response: Parse error"):
                await client.call_tool("x", validate_output=False)
            with pytest.raises(mcptrio.ParseError, match="Unreadable response: Parse error"):
                await client.read_resource("a://b")
            assert (await client.list_tools()).tools == []


async def test_a_broken_line_that_begins_like_an_answer_is_not_taken_for_it() -> None:
    # A stray half of an answer (a debug print, say) is a parse error, and the call still gets
    # the answer that follows it: only a frame too deep to read is taken by how it begins.
    answer = b'{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"whole"}]}}'
    answers = {"tools/call": [answer[:40], answer]}
    with trio.fail_after(10):
        async with (
            scripted_server(answers) as transport,
            mcptrio.open_client(transport, revisions=HANDSHAKE_ERA) as client,
        ):
            result = await client.call_tool("x", validate_output=False)
            assert result.content == [TextContent(text="whole")]


async def test_arguments_too_deep_to_write_raise_value_error_and_leave_nothing_pending() -> None:
    nested: Any = 0
    for _ in range(5000):
        nested = [nested]
    with trio.fail_after(10):
        async with mcptrio.open_client(feature_server()) as client:
            with pytest.raises(ValueError, match="nested too deeply to be written"):
                await client.call_tool("echo", {"text": nested}, validate_output=False)
            assert client.session.connection.pending() == 0
            assert client.session.connection.pending_result_types() == {}
            await client.list_tools()


async def test_a_server_that_goes_away_fails_pending_calls_with_connection_closed() -> None:
    client_end, server_end = memory_transport_pair()
    server = feature_server()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            server_scope = trio.CancelScope()

            async def run_server() -> None:
                with server_scope:
                    await server.serve_session(server_end)

            nursery.start_soon(run_server)
            async with mcptrio.open_client(client_end) as client:

                async def cut() -> None:
                    await trio.sleep(0.05)
                    await server_end.aclose()

                nursery.start_soon(cut)
                with pytest.raises(mcptrio.ConnectionClosed):
                    await client.call_tool("forever")
                with pytest.raises(mcptrio.ConnectionClosed):
                    await client.ping()
            server_scope.cancel()


async def test_a_server_that_never_answers_initialize_times_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    client_end, _server_end = memory_transport_pair()
    with trio.fail_after(100):
        start = trio.current_time()
        with pytest.raises(mcptrio.RequestTimeout, match="initialize"):
            async with mcptrio.open_client(
                client_end, timeouts=Timeouts(initialize=7), revisions=HANDSHAKE_ERA
            ):
                pass  # pragma: no cover
    assert trio.current_time() - start == pytest.approx(7)
