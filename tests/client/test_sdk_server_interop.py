"""mcptrio's client against a server written with the official Python SDK (``mcp``, MCPServer).

The server is tests/servers/sdk_everything_server.py. Every test runs over stdio (a process per
test) and over Streamable HTTP (uvicorn on a free loopback port, one process for the module, a
session per test).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager

import pytest
import trio
from eras import HANDSHAKE_ERA
from programs import free_port
from real_servers import ROOT, require_module, running_http_server

import mcptrio
from mcptrio.client import Handlers, NotificationCallbacks, Timeouts
from mcptrio.protocol.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    LoggingMessageNotification,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)
from mcptrio.runtime.context import RequestContext

require_module("mcp")

SERVER = str(ROOT / "tests" / "servers" / "sdk_everything_server.py")


@pytest.fixture(scope="module")
def sdk_http_url() -> Iterator[str]:
    port = free_port()
    with running_http_server([sys.executable, SERVER, "http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(params=["stdio", "streamable-http"])
def sdk_server(request: pytest.FixtureRequest) -> str | list[str]:
    """The server as an ``open_client`` target."""
    if request.param == "stdio":
        return [sys.executable, SERVER, "stdio"]
    url: str = request.getfixturevalue("sdk_http_url")
    return url


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def open_handshake_client(
    sdk_server: str | list[str],
) -> AbstractAsyncContextManager[mcptrio.Client]:
    """A client of the SDK server in the handshake era, each request given 20 s."""
    return mcptrio.open_client(sdk_server, timeouts=Timeouts(request=20), revisions=HANDSHAKE_ERA)


async def test_calls_tools_with_plain_and_structured_output(sdk_server: str | list[str]) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    with trio.fail_after(30):
        async with open_handshake_client(sdk_server) as client:
            assert client.server_info.name == "sdk-everything"
            assert client.protocol_version == "2025-11-25"
            assert client.instructions == "An official-SDK server for interop tests."
            tools = {tool.name: tool async for tool in client.iter_tools()}
            assert {"add", "weather", "fail", "countdown", "ask_llm", "roots"} <= set(tools)
            assert tools["weather"].output_schema is not None

            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert text(result) == "42"
            assert result.structured_content == {"result": 42}
            # Validated against the outputSchema the SDK derived from the return type.
            result = await client.call_tool("weather", {"city": "Lyon"})
            assert result.structured_content == {
                "city": "Lyon",
                "temperature": 21.5,
                "conditions": "sunny",
            }
            # An error result carries no structured content, and that is not a mismatch (the
            # SDK keeps the exception's message to itself).
            result = await client.call_tool("fail", {"reason": "on purpose"})
            assert result.is_error is True
            assert text(result) == "Error executing tool fail"
            # Arguments the tool's schema refuses: an error result from the SDK.
            result = await client.call_tool("add", {"a": "two", "b": 40})
            assert result.is_error is True

            result = await client.call_tool(
                "countdown",
                {"start": 3},
                on_progress=lambda p, total, message: progress.append((p, total, message)),
            )
            assert text(result) == "liftoff"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_reads_resources_and_a_template_gets_prompts_and_completes(
    sdk_server: str | list[str],
) -> None:
    with trio.fail_after(30):
        async with mcptrio.open_client(sdk_server, timeouts=Timeouts(request=20)) as client:
            uris = {resource.uri async for resource in client.iter_resources()}
            assert {"config://app", "counter://main"} <= uris
            (config,) = (await client.read_resource("config://app")).contents
            assert isinstance(config, TextResourceContents)
            assert (config.text, config.mime_type) == ('{"mode": "test"}', "application/json")

            templates = [t.uri_template async for t in client.iter_resource_templates()]
            assert "greeting://{name}" in templates
            (greeting,) = (await client.read_resource("greeting://ada")).contents
            assert isinstance(greeting, TextResourceContents)
            assert greeting.text == "Hello, ada!"
            with pytest.raises(mcptrio.McpError):
                await client.read_resource("nothing://here")

            prompts = {prompt.name: prompt async for prompt in client.iter_prompts()}
            arguments = prompts["review"].arguments
            assert isinstance(arguments, list)
            assert [(a.name, a.required) for a in arguments] == [
                ("code", True),
                ("language", False),
            ]
            prompt = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
            assert prompt.messages[0].role == "user"
            assert prompt.messages[0].content == TextContent(
                text="Please review this rust code:\n\nx = 1"
            )

            completion = await client.complete(PromptReference(name="review"), "language", "p")
            assert completion.completion.values == ["python", "pascal", "perl"]
            completion = await client.complete(
                ResourceTemplateReference(uri="greeting://{name}"), "name", "a"
            )
            assert completion.completion.values == ["ada", "alan"]


async def test_receives_log_messages_after_setting_the_level(sdk_server: str | list[str]) -> None:
    logged: list[LoggingMessageNotification] = []
    with trio.fail_after(30):
        async with mcptrio.open_client(
            sdk_server,
            timeouts=Timeouts(request=20),
            notifications=NotificationCallbacks(on_log=logged.append),
            revisions=HANDSHAKE_ERA,
        ) as client:
            await client.set_logging_level("info")
            async with client.log_messages() as messages:
                result = await client.call_tool("chatty", {})
                assert text(result) == "logged (level info)"
                streamed = []
                async for message in messages:
                    streamed.append(message)
                    if message.data == "warning note":
                        break
    # Messages about a call come before its answer; the SDK leaves filtering by level to the
    # handler of logging/setLevel, so the debug one comes too.
    assert [(m.level, m.data) for m in logged] == [
        ("debug", "debug note"),
        ("info", "info note"),
        ("warning", "warning note"),
    ]
    assert [m.data for m in streamed] == ["debug note", "info note", "warning note"]


async def test_answers_sampling_elicitation_and_roots_from_the_servers_context(
    sdk_server: str | list[str],
) -> None:
    sampled: list[CreateMessageRequest] = []
    answers = iter(
        [
            ElicitResult(action="accept", content={"name": "Ada", "age": 36}),
            ElicitResult(action="decline"),
        ]
    )

    async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        sampled.append(request)
        return CreateMessageResult(
            role="assistant", content=TextContent(text="forty-two"), model="test-model"
        )

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        assert request.message == "Who are you?"
        assert isinstance(request.requested_schema, dict)
        assert set(request.requested_schema["properties"]) == {"name", "age"}
        return next(answers)

    with trio.fail_after(30):
        async with mcptrio.open_client(
            sdk_server,
            timeouts=Timeouts(request=20),
            handlers=Handlers(
                sampling=sample,
                elicitation=elicit,
                roots=[Root(uri="file:///work/project", name="project")],
            ),
            revisions=HANDSHAKE_ERA,
        ) as client:
            result = await client.call_tool("ask_llm", {"question": "the answer?"})
            assert text(result) == "test-model says: forty-two"
            (request,) = sampled
            assert request.max_tokens == 64
            assert request.system_prompt == "Answer briefly."
            assert request.messages[0].content == TextContent(text="the answer?")

            assert text(await client.call_tool("ask_user", {})) == "Hello Ada, 36"
            assert text(await client.call_tool("ask_user", {})) == "no answer (decline)"

            assert text(await client.call_tool("roots", {})) == "file:///work/project"
            await client.set_roots(
                [Root(uri="file:///work/project"), Root(uri="file:///work/docs", name="docs")]
            )
            result = await client.call_tool("roots", {})
            assert text(result) == "file:///work/project file:///work/docs"


async def test_requests_without_a_handler_get_method_not_found(
    sdk_server: str | list[str],
) -> None:
    with trio.fail_after(30):
        async with open_handshake_client(sdk_server) as client:
            # The SDK sends roots/list even to a client that declared no roots capability; the
            # client refuses it with -32601, and the SDK passes that error on as the answer to
            # the tool call.
            with pytest.raises(mcptrio.MethodNotFound, match="roots/list"):
                await client.call_tool("roots", {})
            await client.ping()


async def test_subscribes_to_a_resource_and_receives_its_update(
    sdk_server: str | list[str],
) -> None:
    with trio.fail_after(30):
        async with open_handshake_client(sdk_server) as client:
            assert client.server_capabilities.resources.subscribe is True  # type: ignore[union-attr]
            async with client.subscribe("counter://main") as updates:
                assert text(await client.call_tool("touch", {"uri": "counter://main"})) == (
                    "updated"
                )
                assert await anext(aiter(updates)) == "counter://main"
            # Unsubscribed on leaving the block.
            result = await client.call_tool("touch", {"uri": "counter://main"})
            assert text(result) == "not subscribed"
