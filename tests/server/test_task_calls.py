"""Tools as tasks (2025-11-25) over the wire: creation, polling, results, cancellation, TTL,
the session's end, shutdown, input, and the errors the spec names. Every message is checked
against the 2025-11-25 schema (open_test_client)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.client import Handlers, Revisions
from mcptrio.protocol.errors import InvalidParams, MethodNotFound
from mcptrio.protocol.types import (
    CallToolRequest,
    CallToolResult,
    ElicitResult,
    GetTaskRequest,
    ListTasksRequest,
    TaskMetadata,
)
from mcptrio.protocol.types.tasks import RELATED_TASK_META_KEY
from mcptrio.runtime.context import RequestContext
from mcptrio.server.middleware import Call, CallNext
from mcptrio.server.tools import ToolError
from mcptrio.tasks import CoreTaskBackend, TaskHandle
from mcptrio.testing import open_test_client
from mcptrio.testing.transcript import Transcript

REV = Revisions(supported=("2025-11-25",))


def make_server(**options: Any) -> tuple[mcptrio.Server, dict[str, Any]]:
    server = mcptrio.Server("tasks", **options)
    seen: dict[str, Any] = {"released": trio.Event(), "stopped": trio.Event()}

    @server.tool(task="optional")
    async def echo(text: str) -> str:
        return text

    @server.tool(task="optional")
    async def wait_for_release(ctx: mcptrio.Context) -> str:
        await ctx.report_progress(1, 2, "waiting")
        await ctx.info("waiting for release")
        await seen["released"].wait()
        return "released"

    @server.tool(task="optional")
    async def forever() -> str:
        try:
            await trio.sleep_forever()
        finally:
            seen["stopped"].set()
        return "never"

    @server.tool(task="required")
    async def only_as_task() -> str:
        return "ok"

    @server.tool
    async def never_as_task() -> str:
        return "ok"

    @server.tool(task=True)
    async def fails() -> str:
        raise ToolError("broken on purpose")

    @server.tool(task=True)
    async def refuses() -> str:
        raise InvalidParams("bad input", data={"why": "test"})

    @server.tool(task="optional")
    async def asks(ctx: mcptrio.Context) -> str:
        schema = {"type": "object", "properties": {"n": {"type": "string"}}}
        answer: mcptrio.Elicited[Any] = await ctx.elicit("Your name?", schema)
        return f"hello {answer.content}"

    return server, seen


async def test_a_task_tool_is_listed_with_its_task_support_and_the_server_declares_tasks() -> None:
    server, _ = make_server()
    transcript = Transcript()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV, transcript=transcript) as client:
            tasks = client.server_capabilities.tasks
            assert tasks is not None and tasks.requests is not None
            assert tasks.requests.tools is not None and tasks.list is not None
            tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["echo"].execution is not None
    assert tools["echo"].execution.task_support == "optional"
    assert tools["only_as_task"].execution.task_support == "required"  # type: ignore[union-attr]
    assert tools["never_as_task"].execution is None


async def test_a_task_is_created_polled_and_its_result_is_the_original_result() -> None:
    server, seen = make_server()
    statuses: list[str] = []

    async def on_status(notification: Any) -> None:
        statuses.append(notification.status)

    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            handle = await client.call_tool("wait_for_release", {}, as_task=True, task_ttl=60)
            assert handle.task.status == "working"
            assert handle.task.ttl == 60_000
            assert (await handle.status()).status == "working"
            seen["released"].set()
            result = await handle.result()
            assert result.content[0].text == "released"  # type: ignore[union-attr]
            assert result.meta == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
            assert (await handle.status()).status == "completed"
            with pytest.raises(InvalidParams, match="terminal"):
                await handle.cancel()


async def test_tasks_cancel_stops_the_task_at_its_next_checkpoint() -> None:
    server, seen = make_server()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            handle = await client.call_tool("forever", {}, as_task=True)
            task = await handle.cancel()
            assert task.status == "cancelled"
            await seen["stopped"].wait()
            assert (await handle.status()).status == "cancelled"
            with pytest.raises(mcptrio.McpError, match="cancelled"):
                await handle.result()


async def test_a_tool_error_fails_the_task_and_tasks_result_returns_it() -> None:
    server, _ = make_server()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            handle = await client.call_tool("fails", {}, as_task=True)
            result = await handle.result()
            assert result.is_error is True
            assert (await handle.status()).status == "failed"
            refused = await client.call_tool("refuses", {}, as_task=True)
            with pytest.raises(InvalidParams) as raised:
                await refused.result()
            assert raised.value.data == {"why": "test"}
            assert (await refused.status()).status_message == "bad input"


async def test_task_support_is_enforced_with_method_not_found() -> None:
    server, _ = make_server()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            with pytest.raises(MethodNotFound):
                await client.call_tool("only_as_task", {})
            with pytest.raises(MethodNotFound):
                await client.request(
                    CallToolRequest(name="never_as_task", task=TaskMetadata(ttl=1000))
                )
            assert (await (await client.call_tool("only_as_task", as_task=True)).result()).content


async def test_a_revision_without_tasks_calls_the_tool_as_usual() -> None:
    server, _ = make_server()
    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=Revisions(supported=("2025-06-18",))
        ) as client:
            assert client.server_capabilities.tasks is None
            result = await client.call_tool("only_as_task", {})
            assert result.content[0].text == "ok"  # type: ignore[union-attr]


async def test_unknown_tasks_and_other_sessions_tasks_are_not_found() -> None:
    server, _ = make_server()
    with trio.fail_after(10):
        async with server.open_lifespan(), open_test_client(server, revisions=REV) as first:
            handle = await first.call_tool("forever", {}, as_task=True)
            async with open_test_client(server, revisions=REV) as second:
                with pytest.raises(InvalidParams, match="not found"):
                    await second.request(GetTaskRequest(task_id=handle.task_id))
                listed = await second.request(ListTasksRequest())
                assert listed.tasks == []
            with pytest.raises(InvalidParams, match="not found"):
                await first.request(GetTaskRequest(task_id="no-such-task"))
            await handle.cancel()


async def test_tasks_list_is_paginated() -> None:
    server, _ = make_server(tasks=mcptrio.TaskSupervisor(limits=mcptrio.TaskLimits(page_size=2)))
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            ids = []
            for i in range(5):
                handle = await client.call_tool("echo", {"text": str(i)}, as_task=True)
                ids.append(handle.task_id)
            listed: list[str] = []
            cursor = None
            while True:
                page = await client.request(ListTasksRequest(cursor=cursor))
                listed += [t.task_id for t in page.tasks]
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert listed == ids
            with pytest.raises(InvalidParams):
                await client.request(ListTasksRequest(cursor="bogus"))


async def test_a_task_survives_the_cancellation_of_the_request_that_created_it() -> None:
    server, seen = make_server()
    created = trio.Event()

    @server.add_middleware
    async def hold_the_answer(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.method == "tools/call" and getattr(call.params, "task", None) is not None:
            created.set()
            await trio.sleep_forever()  # the request is cancelled here, after the task exists
        return result

    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(client.call_tool, "wait_for_release", as_task=True))
                await created.wait()
                nursery.cancel_scope.cancel()  # the client gives up: notifications/cancelled
            listed = await client.request(ListTasksRequest())
            (task,) = listed.tasks
            assert task.status == "working"
            seen["released"].set()
            # Polled as a requestor does (the spec's way), not waited on an event.
            handle = TaskHandle(CoreTaskBackend(client.request), task, CallToolResult)
            assert (await handle.wait(poll_interval=0.01)).status == "completed"


async def test_a_task_outlives_the_session_that_created_it() -> None:
    server, seen = make_server()
    with trio.fail_after(10):
        async with server.open_lifespan():
            async with open_test_client(server, revisions=REV) as client:
                handle = await client.call_tool("wait_for_release", {}, as_task=True)
            # The session has ended; the task goes on in the server's task nursery.
            assert server.tasks.live_count == 1
            seen["released"].set()
            record = await server.tasks.store.get(handle.task_id)
            while record is not None and not record.terminal:
                record = await server.tasks.store.wait_for_change(handle.task_id, record.version)
            assert record is not None and record.status == "completed"
            assert record.result is not None and b"released" in record.result


async def test_a_task_expires_after_its_ttl(autojump_clock: trio.testing.MockClock) -> None:
    server, seen = make_server()
    with trio.fail_after(100):
        async with open_test_client(server, revisions=REV) as client:
            handle = await client.call_tool("forever", {}, as_task=True, task_ttl=5)
            await trio.sleep(4.9)
            assert (await handle.status()).status == "working"
            await trio.sleep(0.2)
            await seen["stopped"].wait()
            with pytest.raises(InvalidParams):
                await handle.status()
            assert server.tasks.live_count == 0


async def test_shutting_the_server_down_cancels_running_tasks_and_records_it() -> None:
    server, seen = make_server()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            handle = await client.call_tool("forever", {}, as_task=True)
        # open_test_client's serving has ended: the task nursery is closed.
    assert seen["stopped"].is_set()
    record = await server.tasks.store.get(handle.task_id)
    assert record is not None
    assert record.status == "cancelled" and record.status_message == "The server shut down"
    assert server.tasks.live_count == 0


async def test_a_task_asking_for_input_is_input_required_until_the_answer_comes() -> None:
    server, _ = make_server()
    observed: dict[str, Any] = {}

    async def elicitation(ctx: RequestContext, request: Any) -> ElicitResult:
        observed["meta"] = request.meta
        task_id = request.meta[RELATED_TASK_META_KEY]["taskId"]
        record = await server.tasks.store.get(task_id)
        observed["status"] = None if record is None else record.status
        return ElicitResult(action="accept", content={"n": "Ada"})

    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=REV, handlers=Handlers(elicitation=elicitation)
        ) as client:
            handle = await client.call_tool("asks", {}, as_task=True)
            result = await handle.result()
            assert result.content[0].text == "hello {'n': 'Ada'}"  # type: ignore[union-attr]
    assert observed["meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
    assert observed["status"] == "input_required"


async def test_a_task_is_refused_past_the_per_requestor_limit() -> None:
    server, _ = make_server(
        tasks=mcptrio.TaskSupervisor(limits=mcptrio.TaskLimits(max_unfinished_per_owner=2))
    )
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV) as client:
            first = await client.call_tool("forever", {}, as_task=True)
            await client.call_tool("forever", {}, as_task=True)
            with pytest.raises(mcptrio.InvalidRequest, match="Too many unfinished tasks"):
                await client.call_tool("forever", {}, as_task=True)
            await first.cancel()
            await client.call_tool("forever", {}, as_task=True)


async def test_status_notifications_carry_the_task_and_progress_carries_related_task() -> None:
    server, seen = make_server()
    transcript = Transcript()
    with trio.fail_after(10):
        async with open_test_client(server, revisions=REV, transcript=transcript) as client:
            progress: list[Any] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append(p)

            handle = await client.call_tool(
                "wait_for_release", {}, as_task=True, on_progress=on_progress
            )
            seen["released"].set()
            await handle.result()
    statuses = transcript.notifications("notifications/tasks/status")
    assert statuses[-1]["params"]["status"] == "completed"
    assert statuses[-1]["params"]["taskId"] == handle.task_id
    assert RELATED_TASK_META_KEY not in statuses[-1]["params"].get("_meta", {})
    for method in ("notifications/progress", "notifications/message"):
        (sent,) = transcript.notifications(method)
        assert sent["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": handle.task_id}


async def test_a_request_hook_sees_a_tasks_requests_with_their_related_task() -> None:
    server, _ = make_server()
    hooked: list[Any] = []

    class Hook:
        def __call__(self, ctx: mcptrio.Context, request: Any, send: Any) -> Any:
            hooked.append(request.METHOD)
            return send(request)

        def asking(self, ctx: mcptrio.Context, requests: dict[str, Any]) -> dict[str, Any]:
            return requests

    server.request_hook = Hook()
    observed: dict[str, Any] = {}

    async def elicitation(ctx: RequestContext, request: Any) -> ElicitResult:
        observed["meta"] = request.meta
        return ElicitResult(action="accept", content={"n": "Ada"})

    with trio.fail_after(10):
        async with open_test_client(
            server, revisions=REV, handlers=Handlers(elicitation=elicitation)
        ) as client:
            handle = await client.call_tool("asks", {}, as_task=True)
            await handle.result()
    assert hooked == ["elicitation/create"]
    assert observed["meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
