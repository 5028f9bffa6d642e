"""The official Python SDK client (``mcp`` 2.3.0) creates, polls, fetches and cancels mcptrio
tasks (2025-11-25) over Streamable HTTP.

The SDK's ``ClientSession`` has no task methods of its own, but its types do (``TaskMetadata``
on ``CallToolRequestParams``, ``GetTaskRequest``, ``CancelTaskRequest``...), and its generic
``send_request`` sends them. It cannot take the answer to a task-augmented ``tools/call``:
``send_request`` checks every ``tools/call`` answer against ``CallToolResult`` for the
negotiated revision, whatever the params (``content`` is missing from a ``CreateTaskResult``).
So the task is created through the session's dispatcher (the SDK's raw request channel,
``JSONRPCDispatcher.send_raw_request``, handed to ``ClientSession(dispatcher=...)``) and
everything else goes through ``send_request``. It runs on anyio, on trio, in the test's loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

import mcptrio

pytest.importorskip("mcp")

import mcp.types as sdk
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher


def task_server() -> tuple[mcptrio.Server, trio.Event]:
    server = mcptrio.Server("tasks-interop")
    release = trio.Event()

    @server.tool(task="optional")
    async def slow_echo(text: str, ctx: mcptrio.Context) -> str:
        await ctx.report_progress(0.5, 1.0)
        await release.wait()
        return text.upper()

    return server, release


@asynccontextmanager
async def sdk_session(
    server: mcptrio.Server,
) -> AsyncIterator[tuple[ClientSession, JSONRPCDispatcher]]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http)
        async with streamable_http_client(url + "/mcp") as (read, write):
            dispatcher = JSONRPCDispatcher(read, write)
            async with ClientSession(dispatcher=dispatcher) as session:
                await session.initialize()
                yield session, dispatcher
        nursery.cancel_scope.cancel()


async def call_as_task(
    dispatcher: JSONRPCDispatcher, name: str, arguments: dict[str, object]
) -> sdk.CreateTaskResult:
    params = sdk.CallToolRequestParams(
        name=name, arguments=arguments, task=sdk.TaskMetadata(ttl=60_000)
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
    raw = await dispatcher.send_raw_request("tools/call", params)
    return sdk.CreateTaskResult.model_validate(raw)


async def test_the_sdk_client_creates_polls_and_fetches_an_mcptrio_task() -> None:
    server, release = task_server()
    with trio.fail_after(30):
        async with sdk_session(server) as (session, dispatcher):
            assert session.protocol_version == "2025-11-25"
            caps = session.server_capabilities
            assert caps is not None and caps.tasks is not None
            tools = await session.list_tools()
            (tool,) = tools.tools
            assert tool.execution is not None and tool.execution.task_support == "optional"

            created = await call_as_task(dispatcher, "slow_echo", {"text": "trio"})
            task_id = created.task.task_id
            assert created.task.status == "working"
            assert created.task.ttl == 60_000
            polled = await session.send_request(
                sdk.GetTaskRequest(params=sdk.GetTaskRequestParams(task_id=task_id)),
                sdk.GetTaskResult,
            )
            assert polled.status == "working"
            listed = await session.send_request(sdk.ListTasksRequest(), sdk.ListTasksResult)
            assert [t.task_id for t in listed.tasks] == [task_id]

            release.set()
            result = await session.send_request(
                sdk.GetTaskPayloadRequest(params=sdk.GetTaskPayloadRequestParams(task_id=task_id)),
                sdk.CallToolResult,
            )
            assert result.content[0].text == "TRIO"  # type: ignore[union-attr]
            assert result.meta is not None
            assert result.meta["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
            done = await session.send_request(
                sdk.GetTaskRequest(params=sdk.GetTaskRequestParams(task_id=task_id)),
                sdk.GetTaskResult,
            )
            assert done.status == "completed"


async def test_the_sdk_client_cancels_an_mcptrio_task() -> None:
    server, _release = task_server()
    with trio.fail_after(30):
        async with sdk_session(server) as (session, dispatcher):
            created = await call_as_task(dispatcher, "slow_echo", {"text": "never"})
            task_id = created.task.task_id
            cancelled = await session.send_request(
                sdk.CancelTaskRequest(params=sdk.CancelTaskRequestParams(task_id=task_id)),
                sdk.CancelTaskResult,
            )
            assert cancelled.status == "cancelled"
            with pytest.raises(MCPError) as raised:
                await session.send_request(
                    sdk.CancelTaskRequest(params=sdk.CancelTaskRequestParams(task_id=task_id)),
                    sdk.CancelTaskResult,
                )
            assert raised.value.error.code == -32602
    assert server.tasks.live_count == 0
