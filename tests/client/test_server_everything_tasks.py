"""mcptrio's client and ``@modelcontextprotocol/server-everything``'s task tools (2025-11-25),
both directions, over stdio and Streamable HTTP.

- ``simulate-research-query`` (``taskSupport: "required"``) runs on the server as a task through
  four one-second stages: mcptrio's client creates it, polls it, cancels one, fetches the result.
- ``trigger-sampling-request-async`` / ``trigger-elicitation-request-async`` exist only for a
  client that declared ``tasks.requests.sampling.createMessage`` /
  ``tasks.requests.elicitation.create``: the server sends the request task-augmented, mcptrio's
  client runs it as a task, and the server polls ``tasks/get`` and fetches ``tasks/result``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio
from real_servers import (
    EVERYTHING_SERVER,
    LOCALHOST_ONLY,
    free_port,
    node,
    node_env,
    require_interop,
    running_http_server,
)

import mcptrio
from mcptrio.client import Handlers, Timeouts
from mcptrio.protocol.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    TextContent,
)
from mcptrio.protocol.types.tasks import RELATED_TASK_META_KEY
from mcptrio.runtime.context import RequestContext

require_interop(EVERYTHING_SERVER, LOCALHOST_ONLY)


@pytest.fixture(scope="module")
def everything_http_url() -> Iterator[str]:
    port = free_port()
    command = [node(), str(EVERYTHING_SERVER), "streamableHttp"]
    with running_http_server(command, port, env=node_env(PORT=str(port))):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(params=["stdio", "streamable-http"])
def everything(request: pytest.FixtureRequest) -> str | list[str]:
    if request.param == "stdio":
        return [node(), str(EVERYTHING_SERVER), "stdio"]
    url: str = request.getfixturevalue("everything_http_url")
    return url


def texts(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


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
