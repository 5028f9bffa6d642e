"""mcptrio's client against ``@modelcontextprotocol/server-everything``, a server nobody here wrote.

Every test runs twice: over stdio (a server process per test) and over Streamable HTTP (one
server process for the module, ``PORT=N node dist/index.js streamableHttp``, one session per
test). The server is the reference implementation built on the official TypeScript SDK.

What its tools do (read from its ``dist/``): ``trigger-sampling-request``,
``trigger-elicitation-request`` and ``get-roots-list`` exist only for a client that declared the
matching capability, and send ``sampling/createMessage``, ``elicitation/create`` and
``roots/list``; ``trigger-long-running-operation`` reports progress to a caller that gave a
progress token; ``toggle-simulated-logging`` and ``toggle-subscriber-updates`` send a log message
and an update of every subscribed resource at once, then every 5 s until toggled off.

Its task tools (2025-11-25), both directions:

- ``simulate-research-query`` (``taskSupport: "required"``) runs on the server as a task through
  four one-second stages: mcptrio's client creates it, polls it, cancels one, fetches the result.
- ``trigger-sampling-request-async`` / ``trigger-elicitation-request-async`` exist only for a
  client that declared ``tasks.requests.sampling.createMessage`` /
  ``tasks.requests.elicitation.create``: the server sends the request task-augmented, mcptrio's
  client runs it as a task, and the server polls ``tasks/get`` and fetches ``tasks/result``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterator
from typing import Any, TypeVar

import pytest
import trio
from programs import free_port
from real_servers import (
    EVERYTHING_SERVER,
    LOCALHOST_ONLY,
    node,
    node_env,
    require_interop,
    running_http_server,
)

import mcptrio
from mcptrio.client import Handlers, NotificationCallbacks, Timeouts
from mcptrio.protocol.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ImageContent,
    LoggingMessageNotification,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)
from mcptrio.protocol.types.tasks import RELATED_TASK_META_KEY
from mcptrio.runtime.context import RequestContext

require_interop(EVERYTHING_SERVER, LOCALHOST_ONLY)

TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
T = TypeVar("T")


@pytest.fixture(scope="module")
def everything_http_url() -> Iterator[str]:
    port = free_port()
    command = [node(), str(EVERYTHING_SERVER), "streamableHttp"]
    with running_http_server(command, port, env=node_env(PORT=str(port))):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(params=["stdio", "streamable-http"])
def everything(request: pytest.FixtureRequest) -> str | list[str]:
    """The server as an ``open_client`` target."""
    if request.param == "stdio":
        return [node(), str(EVERYTHING_SERVER), "stdio"]
    url: str = request.getfixturevalue("everything_http_url")
    return url


def texts(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def first_while_on(client: mcptrio.Client, toggle: str, arrivals: AsyncIterable[T]) -> T:
    """Switch the server's ``toggle`` tool on, wait for the first of ``arrivals``, switch it off
    again (it sends every 5 s until then)."""
    started = await client.call_tool(toggle, {})
    assert "Started" in texts(started)
    try:
        with trio.fail_after(10):
            first = await anext(aiter(arrivals))
    finally:
        stopped = await client.call_tool(toggle, {})
    assert "Stopped" in texts(stopped)
    return first


async def test_lists_and_calls_its_tools(everything: str | list[str]) -> None:
    with trio.fail_after(30):
        async with mcptrio.open_client(everything, timeouts=Timeouts(request=20)) as client:
            assert client.server_info.name == "mcp-servers/everything"
            assert client.protocol_version == "2025-11-25"
            assert client.instructions is not None
            names = {tool.name async for tool in client.iter_tools()}
            assert {"echo", "get-sum", "get-structured-content", "get-tiny-image"} <= names
            # Tools that need a client capability are not offered to a client without it.
            assert not names & {"trigger-sampling-request", "get-roots-list"}

            assert texts(await client.call_tool("echo", {"message": "trio"})) == "Echo: trio"
            result = await client.call_tool("get-sum", {"a": 2, "b": 40})
            assert texts(result) == "The sum of 2 and 40 is 42."
            # Checked against the tool's outputSchema by the client.
            result = await client.call_tool("get-structured-content", {"location": "Chicago"})
            assert result.structured_content == {
                "temperature": 36,
                "conditions": "Light rain / drizzle",
                "humidity": 82,
            }
            result = await client.call_tool("get-tiny-image", {})
            assert any(
                isinstance(block, ImageContent) and block.mime_type == "image/png"
                for block in result.content
            )
            # Bad arguments are a tool error result (the SDK validates them), not a crash.
            result = await client.call_tool("get-sum", {"a": "two", "b": 40})
            assert result.is_error is True
            # This SDK answers an unknown tool with an error result too.
            result = await client.call_tool("no-such-tool", {}, validate_output=False)
            assert result.is_error is True
            await client.ping()


async def test_reads_a_template_resource_gets_prompts_and_completes_arguments(
    everything: str | list[str],
) -> None:
    with trio.fail_after(30):
        async with mcptrio.open_client(everything, timeouts=Timeouts(request=20)) as client:
            templates = [t.uri_template async for t in client.iter_resource_templates()]
            assert TEXT_TEMPLATE in templates
            read = await client.read_resource("demo://resource/dynamic/text/7")
            (contents,) = read.contents
            assert isinstance(contents, TextResourceContents)
            assert contents.uri == "demo://resource/dynamic/text/7"
            assert str(contents.text).startswith("Resource 7: This is a plaintext resource")

            documents = [r.uri async for r in client.iter_resources()]
            assert any(uri.startswith("demo://resource/static/document/") for uri in documents)
            read = await client.read_resource(documents[0])
            assert read.contents[0].uri == documents[0]

            prompts = {prompt.name async for prompt in client.iter_prompts()}
            assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts
            prompt = await client.get_prompt("args-prompt", {"city": "Lyon", "state": "Rhone"})
            message = prompt.messages[0]
            assert message.role == "user"
            assert message.content == TextContent(text="What's weather in Lyon, Rhone?")

            completion = await client.complete(
                PromptReference(name="completable-prompt"), "department", "Eng"
            )
            assert completion.completion.values == ["Engineering"]
            # The second argument's suggestions depend on the first (context, 2025-06-18+).
            completion = await client.complete(
                PromptReference(name="completable-prompt"),
                "name",
                "",
                context={"department": "Sales"},
            )
            assert completion.completion.values == ["David", "Eve", "Frank"]
            completion = await client.complete(
                ResourceTemplateReference(uri=TEXT_TEMPLATE), "resourceId", "12"
            )
            assert completion.completion.values == ["12"]


async def test_answers_its_sampling_elicitation_and_roots_requests(
    everything: str | list[str],
) -> None:
    sampled: list[CreateMessageRequest] = []
    elicited: list[ElicitRequest] = []
    logs: list[Any] = []

    async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
        sampled.append(request)
        return CreateMessageResult(
            role="assistant", content=TextContent(text="trio is a cat"), model="test-model"
        )

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        elicited.append(request)
        return ElicitResult(
            action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7}
        )

    def on_log(message: LoggingMessageNotification) -> None:
        logs.append(message.data)

    first_roots = [Root(uri="file:///work/project", name="project")]
    with trio.fail_after(30):
        async with mcptrio.open_client(
            everything,
            timeouts=Timeouts(request=20),
            handlers=Handlers(sampling=sample, elicitation=elicit, roots=first_roots),
            notifications=NotificationCallbacks(on_log=on_log),
        ) as client:
            names = {tool.name async for tool in client.iter_tools()}
            assert {"trigger-sampling-request", "trigger-elicitation-request"} <= names
            assert "get-roots-list" in names

            result = await client.call_tool(
                "trigger-sampling-request", {"prompt": "what is trio?", "maxTokens": 50}
            )
            assert "trio is a cat" in texts(result)
            (request,) = sampled
            assert request.max_tokens == 50
            assert request.messages[0].content == TextContent(
                text="Resource trigger-sampling-request context: what is trio?"
            )

            result = await client.call_tool("trigger-elicitation-request", {})
            assert "User provided the requested information" in texts(result)
            assert "- Name: Ada Lovelace" in texts(result)
            (form,) = elicited
            assert isinstance(form.requested_schema, dict)
            assert form.requested_schema["required"] == ["name"]

            result = await client.call_tool("get-roots-list", {})
            assert "URI: file:///work/project" in texts(result)

            # Changing the roots sends roots/list_changed; the server asks again, then logs it.
            async with client.log_messages() as messages:
                await client.set_roots([*first_roots, Root(uri="file:///work/docs", name="docs")])
                async for message in messages:
                    if "2 root(s) received" in str(message.data):
                        break
            result = await client.call_tool("get-roots-list", {})
            assert "Current MCP Roots (2 total)" in texts(result)
            assert "URI: file:///work/docs" in texts(result)
    assert any("root(s) received from client" in str(data) for data in logs)


async def test_receives_its_progress_and_log_notifications(everything: str | list[str]) -> None:
    progress: list[tuple[float, float | None]] = []
    with trio.fail_after(30):
        async with mcptrio.open_client(everything, timeouts=Timeouts(request=20)) as client:
            result = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                on_progress=lambda p, total, message: progress.append((p, total)),
            )
            assert "Long running operation completed" in texts(result)
            assert progress == [(1, 3), (2, 3), (3, 3)]

            await client.set_logging_level("debug")
            async with client.log_messages() as messages:
                message = await first_while_on(client, "toggle-simulated-logging", messages)
            assert message.level in (
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency",
            )
            assert "-level message" in str(message.data) or "level-message" in str(message.data)


async def test_subscribes_to_a_resource_and_receives_its_updates(
    everything: str | list[str],
) -> None:
    uri = "demo://resource/dynamic/text/3"
    updated: list[str] = []
    with trio.fail_after(30):
        async with mcptrio.open_client(
            everything,
            timeouts=Timeouts(request=20),
            notifications=NotificationCallbacks(on_resource_updated=updated.append),
        ) as client:
            assert client.server_capabilities.resources.subscribe is True  # type: ignore[union-attr]
            async with client.subscribe(uri) as updates:
                first = await first_while_on(client, "toggle-subscriber-updates", updates)
            assert first == uri
            assert uri in updated
            # Unsubscribed on leaving the block: the session still works.
            await client.ping()


# ---------------------------------------------------------------------- tasks


async def test_creates_polls_and_fetches_a_server_task(everything: str | list[str]) -> None:
    with trio.fail_after(40):
        async with mcptrio.open_client(everything, timeouts=Timeouts(request=30)) as client:
            tools = {tool.name: tool async for tool in client.iter_tools()}
            research = tools["simulate-research-query"]
            assert research.execution is not None
            assert research.execution.task_support == "required"
            # taskSupport "required": a plain call is refused. The spec says with a -32601 error;
            # this SDK wraps the -32601 in a tool error result instead.
            plain = await client.call_tool("simulate-research-query", {"topic": "trio"})
            assert plain.is_error is True and "-32601" in texts(plain)
            handle = await client.call_tool(
                "simulate-research-query", {"topic": "trio"}, as_task=True
            )
            assert handle.task.status == "working"
            assert handle.task.poll_interval == 1000
            seen = {(await handle.status()).status}
            task = await handle.wait(poll_interval=0.25)
            seen.add(task.status)
            assert task.status == "completed"
            assert seen <= {"working", "completed"}
            result = await handle.result()
            assert "# Research Report: trio" in texts(result)
            assert result.meta == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}


async def test_cancels_a_server_task(everything: str | list[str]) -> None:
    with trio.fail_after(40):
        async with mcptrio.open_client(everything, timeouts=Timeouts(request=30)) as client:
            handle = await client.call_tool(
                "simulate-research-query", {"topic": "cancel me"}, as_task=True
            )
            cancelled = await handle.cancel()
            assert cancelled.status == "cancelled"
            assert (await handle.status()).status == "cancelled"
            with pytest.raises(mcptrio.InvalidParams):
                await handle.cancel()


async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
    await trio.sleep(0.2)
    return CreateMessageResult(
        role="assistant", content=TextContent(text="sampled as a task"), model="trio-model"
    )


async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    await trio.sleep(0.2)
    return ElicitResult(action="accept", content={"name": "Ada", "color": "blue"})


async def test_runs_the_servers_sampling_and_elicitation_as_client_tasks(
    everything: str | list[str],
) -> None:
    handlers = Handlers(sampling=sample, elicitation=elicit, tasks=True)
    with trio.fail_after(60):
        async with mcptrio.open_client(
            everything, handlers=handlers, timeouts=Timeouts(request=50)
        ) as client:
            names = {tool.name async for tool in client.iter_tools()}
            assert {"trigger-sampling-request-async", "trigger-elicitation-request-async"} <= names
            result = await client.call_tool(
                "trigger-sampling-request-async", {"prompt": "hi"}, validate_output=False
            )
            text = texts(result)
            assert "sampled as a task" in text, text
            assert "completed" in text
            result = await client.call_tool(
                "trigger-elicitation-request-async", {}, validate_output=False
            )
            text = texts(result)
            assert "Ada" in text, text
