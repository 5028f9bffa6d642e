"""The client as the receiver of tasks (2025-11-25): the server's task-augmented sampling and
elicitation run as tasks on the client, which answers tasks/get, tasks/result, tasks/list and
tasks/cancel. Every message is checked against the 2025-11-25 schema."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import Handlers, Revisions
from mcptrio.protocol.errors import CapabilityNotNegotiated
from mcptrio.protocol.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListTasksRequest,
    SamplingMessage,
    TextContent,
)
from mcptrio.protocol.types.tasks import RELATED_TASK_META_KEY
from mcptrio.runtime.context import RequestContext
from mcptrio.testing import open_test_client
from mcptrio.testing.transcript import Transcript

REV = Revisions(supported=("2025-11-25",))


def sampling_request() -> CreateMessageRequest:
    return CreateMessageRequest(
        messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=10
    )


async def sample(ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
    await trio.sleep(0.01)
    return CreateMessageResult(role="assistant", content=TextContent(text="sampled"), model="m")


async def test_the_client_declares_tasks_for_the_requests_it_handles() -> None:
    server = mcptrio.Server("s")
    transcript = Transcript()
    with trio.fail_after(10):
        async with open_test_client(
            server,
            revisions=REV,
            transcript=transcript,
            handlers=Handlers(sampling=sample, tasks=True),
        ):
            pass
    (initialize,) = transcript.requests("initialize")
    assert initialize["params"]["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}},
    }


async def test_a_server_runs_sampling_on_the_client_as_a_task_and_gets_its_result() -> None:
    server = mcptrio.Server("s")
    seen: dict[str, Any] = {}

    @server.tool
    async def delegate(ctx: mcptrio.Context) -> str:
        handle = await ctx.request_as_task(sampling_request(), ttl=30)
        seen["created"] = handle.task.status
        listed = await ctx.send_request(ListTasksRequest())
        seen["listed"] = [t.task_id for t in listed.tasks]
        result = await handle.result()
        seen["meta"] = result.meta
        seen["final"] = (await handle.status()).status
        return result.content.text  # type: ignore[union-attr]

    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=REV, handlers=Handlers(sampling=sample, tasks=True)
        ) as client:
            result = await client.call_tool("delegate", {})
    assert result.content[0].text == "sampled"  # type: ignore[union-attr]
    assert seen["created"] == "working"
    assert len(seen["listed"]) == 1
    assert seen["meta"] == {RELATED_TASK_META_KEY: {"taskId": seen["listed"][0]}}
    assert seen["final"] == "completed"


async def test_a_server_cancels_an_elicitation_task_on_the_client() -> None:
    server = mcptrio.Server("s")
    stopped = trio.Event()
    seen: dict[str, Any] = {}

    async def elicit(ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    @server.tool
    async def ask_then_cancel(ctx: mcptrio.Context) -> str:
        request = ElicitRequest(message="?", requested_schema={"type": "object", "properties": {}})
        handle = await ctx.request_as_task(request)
        seen["cancelled"] = (await handle.cancel()).status
        return "done"

    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=REV, handlers=Handlers(elicitation=elicit, tasks=True)
        ) as client:
            await client.call_tool("ask_then_cancel", {})
            await stopped.wait()
    assert seen["cancelled"] == "cancelled"


async def test_a_client_without_tasks_gets_no_task_requests() -> None:
    server = mcptrio.Server("s")

    @server.tool
    async def delegate(ctx: mcptrio.Context) -> str:
        with pytest.raises(CapabilityNotNegotiated):
            await ctx.request_as_task(sampling_request())
        return "refused before sending"

    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=REV, handlers=Handlers(sampling=sample)
        ) as client:
            result = await client.call_tool("delegate", {})
    assert result.content[0].text == "refused before sending"  # type: ignore[union-attr]


async def test_as_task_against_a_server_without_task_tools_is_refused_before_sending() -> None:
    server = mcptrio.Server("s")

    @server.tool
    async def plain() -> str:
        return "x"

    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            with pytest.raises(CapabilityNotNegotiated):
                await client.call_tool("plain", {}, as_task=True)
