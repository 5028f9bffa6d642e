"""mcptrio's client against a TypeScript SDK v2 server (``@modelcontextprotocol/server`` 2.4.0),
in both eras, over stdio and Streamable HTTP.

``interop/ts/server.mjs`` defines its tools, resources and prompts once and lets the SDK serve
them to either era: ``serveStdio`` over stdio, ``createMcpHandler`` over HTTP. Every test runs
in each era the client can be asked for:

- ``probing``: the client's default, which probes ``server/discover`` and settles on 2026-07-28;
- ``handshake``: :data:`~mcptrio.client.HANDSHAKE_ERA`, ``initialize``, settling on 2025-11-25.

Over HTTP the stateless era goes to ``/mcp`` (``createMcpHandler`` as shipped). The handshake
era goes to ``/sessions``, where 2025-era requests reach a sessionful transport (the pattern the
SDK documents), since the handler as shipped serves them statelessly, an instance per request:
what that fallback still does is checked by the last test.

The tools that need the client's input return ``inputRequired(...)``: in the stateless era the
client answers the input requests and retries (MRTR); in the handshake era the SDK's shim sends
real ``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` requests instead. The
same ``Handlers`` answer both. List changes and resource updates come on listen streams in the
stateless era (``serveStdio`` and ``createMcpHandler`` serve ``subscriptions/listen``
themselves) and unasked, or after ``resources/subscribe``, in the handshake era.

What the SDK does differently from the spec, as seen here: it answers a missing resource -32602
in the handshake era too (2025-11-25 has -32002).
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from client.real_servers import require_interop
from processes import stop_process

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Handlers, Revisions, Timeouts
from mcptrio.protocol.errors import TransportError
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)
from mcptrio.runtime.context import RequestContext

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "interop" / "node_modules" / ".bin" / "node"
PEER = ROOT / "interop" / "ts" / "server.mjs"
SERVER_PACKAGE = ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "server"
LOCALHOST_ONLY = ROOT / "interop" / "localhost-only.cjs"

require_interop(SERVER_PACKAGE)

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
COUNTER_URI = "ts://counter"
ERAS = {"probing": Revisions(), "handshake": HANDSHAKE_ERA}
SETTLES_ON = {"probing": STATELESS, "handshake": HANDSHAKE}


def node_env() -> dict[str, str]:
    return {**os.environ, "NODE_OPTIONS": f"--require {LOCALHOST_ONLY}"}


@pytest.fixture(scope="module")
def http_base() -> Iterator[str]:
    """One HTTP server process for the module; it prints its base URL once it listens."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [str(NODE), str(PEER), "http"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=node_env(),
        )
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 30)
            line = process.stdout.readline().decode().strip() if ready else ""
            if not line.startswith("http://127.0.0.1:"):
                errors.seek(0)
                raise RuntimeError(f"server.mjs did not start: {errors.read().decode()}")
            yield line
        finally:
            stop_process(process)


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(params=list(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def stdio_target() -> Any:
    return mcptrio.client.stdio([str(NODE), str(PEER), "stdio"], env=node_env())


@pytest.fixture
def target(transport: str, era: str, request: pytest.FixtureRequest) -> Any:
    """The server as an ``open_client`` target for this transport and era."""
    if transport == "stdio":
        return stdio_target()
    base: str = request.getfixturevalue("http_base")
    return f"{base}/mcp" if era == "probing" else f"{base}/sessions"


@asynccontextmanager
async def connected(target: Any, era: str, **options: Any) -> AsyncIterator[mcptrio.Client]:
    async with mcptrio.open_client(
        target, revisions=ERAS[era], timeouts=Timeouts(request=20), **options
    ) as client:
        assert client.protocol_version == SETTLES_ON[era]
        yield client


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="test")


async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def test_settles_its_era_lists_and_calls_tools(target: Any, era: str) -> None:
    with trio.fail_after(30):
        async with connected(target, era) as client:
            assert client.server_info.name == "ts-v2-interop-server"
            assert client.instructions == "A TypeScript SDK v2 server for interop tests."
            names = {tool.name async for tool in client.iter_tools()}
            assert {"echo", "stats", "ask_name", "ask_model", "count", "slow", "touch"} <= names
            assert "locate" in names  # its x-mcp-header annotation follows the rules

            assert text_of(await client.call_tool("echo", {"message": "trio"})) == "echo: trio"
            # Checked against the tool's outputSchema by the client.
            result = await client.call_tool("stats", {"values": [1, 2, 6]})
            assert result.structured_content == {"count": 3, "mean": 3}
            # The SDK validates arguments: a tool error result, not a protocol error.
            result = await client.call_tool("echo", {"message": 7})
            assert result.is_error is True
            await client.ping()


async def test_an_answer_over_the_limit_fails_its_call_at_once(era: str) -> None:
    # The SDK writes the id last ({result, jsonrpc, id}): the client reads it from the end of
    # the answer it drops (before, the call waited for its timeout).
    target = mcptrio.client.stdio(
        [str(NODE), str(PEER), "stdio"], env=node_env(), max_frame_size=8000
    )
    with trio.fail_after(30):
        async with connected(target, era) as client:
            with trio.fail_after(10), pytest.raises(TransportError, match="size limit of 8000"):
                await client.call_tool("echo", {"message": "x" * 10_000})
            assert text_of(await client.call_tool("echo", {"message": "trio"})) == "echo: trio"


@pytest.mark.parametrize("endpoint", ["stdio", "/mcp", "/sessions"])
async def test_a_client_pinned_to_the_stateless_era_speaks_it(
    endpoint: str, request: pytest.FixtureRequest
) -> None:
    """Pinned: no probe, no fallback; ``/sessions`` answers it with its strict handler."""
    target = (
        stdio_target() if endpoint == "stdio" else request.getfixturevalue("http_base") + endpoint
    )
    pinned = Revisions(protocol_version=STATELESS, supported=SUPPORTED)
    with trio.fail_after(30):
        async with mcptrio.open_client(target, revisions=pinned) as client:
            assert client.protocol_version == STATELESS
            assert text_of(await client.call_tool("echo", {"message": "pin"})) == "echo: pin"


async def test_reads_resources_gets_a_prompt_and_completes(target: Any, era: str) -> None:
    with trio.fail_after(30):
        async with connected(target, era) as client:
            uris = [resource.uri async for resource in client.iter_resources()]
            assert COUNTER_URI in uris
            read = await client.read_resource(COUNTER_URI)
            (contents,) = read.contents
            assert isinstance(contents, TextResourceContents)
            assert str(contents.text).startswith("touched ")

            templates = [t.uri_template async for t in client.iter_resource_templates()]
            assert templates == ["ts://items/{id}"]
            read = await client.read_resource("ts://items/12")
            assert read.contents[0] == TextResourceContents(
                uri="ts://items/12", mime_type="text/plain", text="item 12"
            )
            # The SDK answers -32602 in every era (2025-11-25 has -32002 for it): the client
            # reads it as ResourceNotFound only where -32602 is that revision's code for it.
            missing = mcptrio.ResourceNotFound if era == "probing" else mcptrio.InvalidParams
            with pytest.raises(missing) as raised:
                await client.read_resource("ts://nowhere")
            assert raised.value.code == -32602

            (prompt,) = [prompt async for prompt in client.iter_prompts()]
            assert prompt.name == "greet"
            got = await client.get_prompt("greet", {"language": "french"})
            assert got.messages[0].content == TextContent(text="Say hello in french.")

            completion = await client.complete(PromptReference(name="greet"), "language", "e")
            assert completion.completion.values == ["english", "esperanto"]
            completion = await client.complete(
                ResourceTemplateReference(uri="ts://items/{id}"), "id", "12"
            )
            assert completion.completion.values == ["12", "123"]


async def test_answers_elicitation_and_sampling_with_its_handlers(target: Any, era: str) -> None:
    asked: list[Any] = []

    async def elicit_name(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return await elicit(ctx, request)

    async def sample_model(ctx: RequestContext, request: CreateMessageRequest) -> Any:
        asked.append(request)
        return await sample(ctx, request)

    handlers = Handlers(sampling=sample_model, elicitation=elicit_name)
    with trio.fail_after(30):
        async with connected(target, era, handlers=handlers) as client:
            result = await client.call_tool("ask_name", {})
            assert text_of(result) == "Hello, Ada!"
            result = await client.call_tool("ask_model", {})
            # The state the server put in its input-required result came back with the answer
            # (in the handshake era the SDK's shim keeps it in the server).
            assert text_of(result) == "The model said: Paris (state round-1)"
    elicitation, sampling = asked
    assert isinstance(elicitation, ElicitRequest)
    assert elicitation.message == "What is your name?"
    assert elicitation.requested_schema["required"] == ["name"]  # type: ignore[index]
    assert isinstance(sampling, CreateMessageRequest)
    assert sampling.max_tokens == 20
    assert sampling.messages[0].content == TextContent(text="What is the capital of France?")


async def test_answers_a_url_mode_elicitation(target: Any, era: str) -> None:
    asked: list[ElicitRequest] = []

    async def visit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return ElicitResult(action="accept")

    with trio.fail_after(30):
        async with connected(target, era, handlers=Handlers(elicitation=visit)) as client:
            assert text_of(await client.call_tool("ask_visit", {})) == "visit accept"
    (request,) = asked
    assert (request.mode, request.url) == ("url", "https://example.com/sign-in")
    # 2026-07-28 has no elicitationId (the server correlates through requestState); the
    # handshake era's shim makes one up.
    assert isinstance(request.elicitation_id, str) == (era == "handshake")


async def test_a_declined_elicitation_and_the_roots_reach_the_tool(target: Any, era: str) -> None:
    async def decline(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        return ElicitResult(action="decline")

    roots = [Root(uri="file:///work/a", name="a"), Root(uri="file:///work/b")]
    with trio.fail_after(30):
        async with connected(
            target, era, handlers=Handlers(elicitation=decline, roots=roots)
        ) as client:
            assert text_of(await client.call_tool("ask_name", {})) == "No name (decline)"
            result = await client.call_tool("ask_roots", {})
            assert text_of(result) == "file:///work/a file:///work/b"


async def test_receives_log_messages_at_the_level_asked(target: Any, era: str) -> None:
    """A client reading the log gets every level (in the stateless era it names ``debug`` in
    each request's ``_meta``) until it sets one."""
    with trio.fail_after(30):
        async with connected(target, era) as client, client.log_messages() as messages:
            assert text_of(await client.call_tool("log", {})) == "logged"
            first, second = [await anext(aiter(messages)) for _ in range(2)]
            assert (first.level, first.logger, first.data) == ("debug", "ts", "a debug message")
            assert (second.level, second.data) == ("warning", "a warning")
            await client.set_logging_level("warning")
            await client.call_tool("log", {})
            # The debug message, which would come first, is not sent any more.
            assert (await anext(aiter(messages))).data == "a warning"


async def test_reports_progress(target: Any, era: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    with trio.fail_after(30):
        async with connected(target, era) as client:
            result = await client.call_tool(
                "count",
                {"steps": 3},
                on_progress=lambda done, total, message: progress.append((done, total, message)),
            )
    assert text_of(result) == "counted to 3"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def cancellations(client: mcptrio.Client) -> int:
    return int(text_of(await client.call_tool("cancellations", {})))


async def cancel_a_slow_call(client: mcptrio.Client, how: str) -> None:
    """Call ``slow`` and give up on it: ``how`` is by leaving a cancel scope once the server
    said it started, or by the call's timeout; then wait until the server saw it cancelled."""
    before = await cancellations(client)
    if how == "timeout":
        with pytest.raises(mcptrio.RequestTimeout):
            await client.call_tool("slow", {}, timeout=0.2)
    else:
        started = trio.Event()
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:

                async def call() -> None:
                    await client.call_tool("slow", {}, on_progress=lambda *_: started.set())

                nursery.start_soon(call)
                await started.wait()
                scope.cancel()
        assert scope.cancelled_caught
    # The SDK aborts the handler's signal when it hears of the cancellation, which comes on
    # its own (notifications/cancelled, or the closed response stream): ask until it has.
    seen = before
    for _ in range(100):
        seen = await cancellations(client)
        if seen > before:
            break
        await trio.sleep(0.05)
    assert seen == before + 1


@pytest.mark.parametrize("how", ["scope", "timeout"])
async def test_giving_up_on_a_call_cancels_it_in_the_server(
    target: Any, era: str, how: str
) -> None:
    with trio.fail_after(30):
        async with connected(target, era) as client:
            await cancel_a_slow_call(client, how)


async def test_hears_list_changes_and_resource_updates(target: Any, era: str) -> None:
    with trio.fail_after(30):
        async with connected(target, era) as client:
            async with client.subscribe(COUNTER_URI) as updates, client.list_changes() as changes:
                touched = text_of(await client.call_tool("touch", {}))
                assert await anext(aiter(updates)) == COUNTER_URI
                assert await anext(aiter(changes)) == "tools"
            read = await client.read_resource(COUNTER_URI)
            assert read.contents[0].text == touched


async def touched_as_listed(client: mcptrio.Client) -> str:
    (tool,) = [tool async for tool in client.iter_tools() if tool.name == "touched"]
    assert isinstance(tool.description, str)
    return tool.description


async def counter(client: mcptrio.Client) -> str:
    read = await client.read_resource(COUNTER_URI)
    (contents,) = read.contents
    assert isinstance(contents, TextResourceContents)
    return str(contents.text)


async def test_cached_results_last_their_ttl_until_a_change_is_heard(target: Any, era: str) -> None:
    """The server gives ``tools/list`` and the counter resource a ``ttlMs`` of a minute: the
    stateless era's client answers from its cache until a list change or a resource update
    says otherwise (the handshake era has no ``ttlMs``, so nothing is cached)."""
    with trio.fail_after(30):
        async with connected(target, era) as client:
            listed, read = await touched_as_listed(client), await counter(client)
            touched = text_of(await client.call_tool("touch", {}))
            if era == "probing":
                assert (await touched_as_listed(client), await counter(client)) == (listed, read)
            else:
                assert await counter(client) == touched
                assert await touched_as_listed(client) == f"{touched} times"
            async with client.list_changes() as changes, client.subscribe(COUNTER_URI) as updates:
                touched = text_of(await client.call_tool("touch", {}))
                assert await anext(aiter(changes)) == "tools"
                assert await anext(aiter(updates)) == COUNTER_URI
            assert await touched_as_listed(client) == f"{touched} times"
            assert await counter(client) == touched
            # Until it is asked for a fresh one, which it then keeps.
            touched = text_of(await client.call_tool("touch", {}))
            if era == "probing":
                assert await counter(client) != touched
            refreshed = await client.read_resource(COUNTER_URI, cache="refresh")
            assert refreshed.contents[0].text == touched
            assert await counter(client) == touched


async def test_the_shipped_handler_serves_the_handshake_era_without_sessions(
    http_base: str,
) -> None:
    """``createMcpHandler`` as shipped answers 2025-era requests with a fresh instance each: the
    calls work, and giving up on one closes its stream, which the instance hears; but nothing
    can reach the client outside a response (no server-to-client request, no standalone
    stream), so the shim refuses elicitation."""
    handlers = Handlers(sampling=sample, elicitation=elicit)
    with trio.fail_after(30):
        async with connected(f"{http_base}/mcp", "handshake", handlers=handlers) as client:
            assert text_of(await client.call_tool("echo", {"message": "x"})) == "echo: x"
            result = await client.call_tool("stats", {"values": [2]})
            assert result.structured_content == {"count": 1, "mean": 2}
            progress: list[float] = []
            await client.call_tool(
                "count", {"steps": 2}, on_progress=lambda p, *_: progress.append(p)
            )
            assert progress == [1, 2]
            # Giving up on a call closes its response stream, which the instance hears.
            await cancel_a_slow_call(client, "scope")
            result = await client.call_tool("ask_name", {})
            assert result.is_error is True
            assert "per-request legacy serving cannot receive server-to-client requests" in (
                text_of(result)
            )


@pytest.mark.parametrize("region", ["north", pytest.param("Zürich", id="non-ascii")])
async def test_sends_x_mcp_header_arguments_as_headers_the_sdk_checks(
    http_base: str, region: str
) -> None:
    """Stateless era over HTTP: an argument the tool annotates ``x-mcp-header`` goes in an
    ``Mcp-Param-*`` header too (base64-wrapped when not plain ASCII), which the SDK compares
    with the body before the call runs (a mismatch would be -32020)."""
    with trio.fail_after(30):
        async with connected(f"{http_base}/mcp", "probing") as client:
            result = await client.call_tool("locate", {"region": region})
            assert client.tool_header_params("locate") == {("region",): "Region"}
    header = "=?base64?WsO8cmljaA==?=" if region == "Zürich" else region
    assert text_of(result) == f"region {region}, header {header}"
