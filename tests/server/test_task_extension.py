"""The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the server:
per-request negotiation, task results, tasks/get|update|cancel, input inside a task, input
before a task, -32021, notifications/tasks on a listen stream. In memory, with raw JSON-RPC and
with mcptrio's own client; every message is checked against the 2026-07-28 schema (the
extension's types against mcptrio's transcription of the SEP)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcptrio import Context, Server
from mcptrio.client import Handlers
from mcptrio.protocol.errors import InternalError, InvalidRequest
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.tasks_extension import EXTENSION_ID
from mcptrio.runtime.transport import Outgoing
from mcptrio.server.context import Elicited
from mcptrio.server.tools import ToolError
from mcptrio.stores.task_store import MemoryTaskStore
from mcptrio.tasks import TaskSupervisor
from mcptrio.testing import ScriptedElicitation, Transcript, open_test_client
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair

from schema_validation import validate_message

REV = "2026-07-28"
DECLARES: dict[str, Any] = {"extensions": {EXTENSION_ID: {}}, "elicitation": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def make_server() -> Server:
    server = Server("tasks-ext", version="1.0")
    gate = trio.Event()

    @server.tool
    def plain(name: str) -> str:
        """Never a task."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def wait_for_gate(label: str = "x") -> str:
        """Waits until the test opens the gate."""
        await gate.wait()
        return f"done {label}"

    @server.tool(task="optional")
    async def sleeper(seconds: float) -> str:
        """Sleeps."""
        await trio.sleep(seconds)
        return "slept"

    @server.tool(task="required")
    async def broken_tool() -> str:
        """A tool error."""
        raise ToolError("no luck")

    @server.tool(task="required")
    async def crashing() -> str:
        """A JSON-RPC error."""
        raise InternalError("worker crashed")

    @server.tool(task="optional")
    async def confirm(ctx: Context, what: str) -> str:
        """One question."""
        answer: Elicited[Any] = await ctx.elicit(f"Delete {what}?", CONFIRM)
        return f"{answer.action} {json.dumps(answer.content)}"

    @server.tool(task="required", input_before_task=True)
    async def named(ctx: Context) -> str:
        """Asks in the request, then runs as a task."""
        answer: Elicited[Any] = await ctx.elicit("Name?", NAME, key="user_name")
        await ctx.begin_task()
        await trio.sleep(0.01)
        return f"Hi {(answer.content or {}).get('name')}"

    server.gate = gate  # type: ignore[attr-defined]
    return server


def meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    caps = DECLARES if capabilities is None else capabilities
    return {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: caps}


class Peer:
    """The client end, speaking raw JSON-RPC; checks every message against the schema."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end
        self.next_id = 0
        self.asked: dict[int, str] = {}
        self.notifications: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any], *, check: bool = True) -> None:
        message = {"jsonrpc": "2.0", **message}
        if check:  # off for a method the revision lacks, sent on purpose
            validate_message(message, REV, "client")
        await self.end.send([Outgoing(json.dumps(message).encode())])

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        capabilities: dict[str, Any] | None = None,
        *,
        check: bool = True,
    ) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        await self.send(
            {
                "id": rid,
                "method": method,
                "params": {**params, "_meta": {**params.get("_meta", {}), **meta(capabilities)}},
            },
            check=check,
        )
        while True:
            frame = await self.end.receive()
            assert isinstance(frame, bytes)
            message: dict[str, Any] = json.loads(frame)
            if "method" in message:
                validate_message(message, REV, "server")
                self.notifications.append(message)
                continue
            if message.get("id") == rid:
                result = message.get("result")
                hint = None if result is None else _RESULTS.get(method)
                if isinstance(result, dict) and result.get("resultType") == "input_required":
                    hint = "InputRequiredResult"
                validate_message(message, REV, hint)
                return message

    async def result(self, method: str, params: dict[str, Any], **kw: Any) -> dict[str, Any]:
        answer = await self.call(method, params, **kw)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        while True:
            task = await self.result("tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            await trio.sleep(0.01)


_RESULTS = {
    "tools/call": "CallToolResult",
    "tasks/get": "GetTaskResult",
    "tasks/update": "UpdateTaskResult",
    "tasks/cancel": "CancelTaskResult",
    "server/discover": "DiscoverResult",
}


@asynccontextmanager
async def connected(server: Server | None = None) -> AsyncIterator[Peer]:
    server = make_server() if server is None else server
    client_end, server_end = memory_transport_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_session, server_end)
        yield Peer(client_end)
        nursery.cancel_scope.cancel()


async def test_discover_declares_the_extension_and_no_core_tasks() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            result = await peer.result("server/discover", {})
    assert result["capabilities"]["extensions"] == {EXTENSION_ID: {}}
    assert "tasks" not in result["capabilities"]


async def test_a_declaring_call_gets_a_flat_task_and_tasks_get_inlines_the_result() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            created = await peer.result(
                "tools/call", {"name": "sleeper", "arguments": {"seconds": 0.05}}
            )
            assert created["resultType"] == "task"
            assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"} <= created.keys()
            assert not {"task", "result", "error", "inputRequests", "ttl", "pollInterval"} & (
                created.keys()
            )
            assert isinstance(created["ttlMs"], int) and isinstance(created["pollIntervalMs"], int)
            # Durable before the answer: readable at once.
            first = await peer.result("tasks/get", {"taskId": created["taskId"]})
            assert first["taskId"] == created["taskId"] and first["resultType"] == "complete"
            done = await peer.until(created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "slept"}]
    assert "io.modelcontextprotocol/related-task" not in (done["result"].get("_meta") or {})


async def test_a_call_without_the_extension_is_never_a_task_and_a_required_one_is_32021() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            sync = await peer.result(
                "tools/call", {"name": "sleeper", "arguments": {"seconds": 0}}, capabilities={}
            )
            assert sync["resultType"] == "complete" and "taskId" not in sync
            refused = await peer.call("tools/call", {"name": "broken_tool"}, capabilities={})
            # A legacy `task` param changes nothing either.
            legacy = await peer.result(
                "tools/call", {"name": "plain", "arguments": {"name": "a"}, "task": {"ttl": 5}}
            )
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}}
    assert legacy["resultType"] == "complete" and legacy["content"][0]["text"] == "Hello, a!"


async def test_tasks_methods_need_the_extension_and_a_known_task() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            for method, params in (
                ("tasks/get", {"taskId": "t"}),
                ("tasks/update", {"taskId": "t", "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "t"}),
            ):
                answer = await peer.call(method, params, capabilities={})
                assert answer["error"]["code"] == -32021, method
                answer = await peer.call(method, params)
                assert answer["error"]["code"] == -32602, method
            for removed in ("tasks/result", "tasks/list"):
                answer = await peer.call(removed, {"taskId": "t"}, check=False)
                assert answer["error"]["code"] == -32601, removed


async def test_a_tool_error_completes_and_a_json_rpc_error_fails() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            broken = await peer.result("tools/call", {"name": "broken_tool"})
            crashing = await peer.result("tools/call", {"name": "crashing"})
            done = await peer.until(broken["taskId"], "completed", "failed")
            failed = await peer.until(crashing["taskId"], "completed", "failed")
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"]["code"] == -32603 and "worker crashed" in failed["error"]["message"]


async def test_cancel_acks_empty_and_a_running_task_ends_cancelled_a_done_one_stays() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server) as peer:
            running = await peer.result("tools/call", {"name": "wait_for_gate"})
            ack = await peer.result("tasks/cancel", {"taskId": running["taskId"]})
            assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
            cancelled = await peer.until(running["taskId"], "cancelled", "completed")
            quick = await peer.result(
                "tools/call", {"name": "sleeper", "arguments": {"seconds": 0}}
            )
            await peer.until(quick["taskId"], "completed")
            again = await peer.result("tasks/cancel", {"taskId": quick["taskId"]})
            after = await peer.result("tasks/get", {"taskId": quick["taskId"]})
    assert cancelled["status"] == "cancelled"
    assert again["resultType"] == "complete" and after["status"] == "completed"


async def test_a_task_that_asks_shows_input_required_and_resumes_on_update() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            created = await peer.result(
                "tools/call", {"name": "confirm", "arguments": {"what": "f"}}
            )
            waiting = await peer.until(created["taskId"], "input_required")
            [(key, asked)] = waiting["inputRequests"].items()
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["message"] == "Delete f?"
            # An unknown key and an answer that does not fit are ignored.
            await peer.result(
                "tasks/update",
                {"taskId": created["taskId"], "inputResponses": {"nope": {"action": "accept"}}},
            )
            await peer.result(
                "tasks/update",
                {"taskId": created["taskId"], "inputResponses": {key: {"action": 12}}},
                check=False,
            )
            still = await peer.result("tasks/get", {"taskId": created["taskId"]})
            assert still["status"] == "input_required" and list(still["inputRequests"]) == [key]
            ack = await peer.result(
                "tasks/update",
                {
                    "taskId": created["taskId"],
                    "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
                },
            )
            assert set(ack) == {"resultType", "_meta"}
            done = await peer.until(created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == 'accept {"ok": true}'


async def test_two_asks_at_once_are_answered_one_at_a_time() -> None:
    server = Server("two", version="1.0")

    @server.tool(task="optional")
    async def pair(ctx: Context) -> str:
        """Two asks in parallel."""
        got: list[str] = []

        async def one(message: str) -> None:
            answer: Elicited[Any] = await ctx.elicit(message, NAME)
            got.append(f"{message}={(answer.content or {}).get('name')}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "A")
            nursery.start_soon(one, "B")
        return ",".join(sorted(got))

    with trio.fail_after(10):
        async with connected(server) as peer:
            created = await peer.result("tools/call", {"name": "pair"})
            task_id = created["taskId"]
            while True:
                waiting = await peer.until(task_id, "input_required")
                if len(waiting["inputRequests"]) == 2:
                    break
            first, second = waiting["inputRequests"]
            answer = {"action": "accept", "content": {"name": "x"}}
            await peer.result(
                "tasks/update", {"taskId": task_id, "inputResponses": {first: answer}}
            )
            partial = await peer.result("tasks/get", {"taskId": task_id})
            assert partial["status"] == "input_required"
            assert list(partial["inputRequests"]) == [second]
            # The answered key is never asked again, and answering it twice changes nothing.
            await peer.result(
                "tasks/update",
                {"taskId": task_id, "inputResponses": {first: answer, second: answer}},
            )
            done = await peer.until(task_id, "completed")
    assert done["result"]["content"][0]["text"] == "A=x,B=x"


async def test_input_before_task_runs_rounds_in_the_request_then_a_task_with_the_answers() -> None:
    with trio.fail_after(10):
        async with connected() as peer:
            first = await peer.result("tools/call", {"name": "named"})
            assert first["resultType"] == "input_required" and "taskId" not in first
            [key] = first["inputRequests"]
            second = await peer.result(
                "tools/call",
                {
                    "name": "named",
                    "inputResponses": {key: {"action": "accept", "content": {"name": "Ann"}}},
                    "requestState": first["requestState"],
                },
            )
            assert second["resultType"] == "task" and "requestState" not in second
            done = await peer.until(second["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Hi Ann"


async def test_a_listen_stream_gets_notifications_tasks_until_the_task_ends() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server) as peer:
            created = await peer.result("tools/call", {"name": "wait_for_gate"})
            task_id = created["taskId"]
            refused = await peer.call(
                "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, capabilities={}
            )
            assert refused["error"]["code"] == -32021
            await peer.send(
                {
                    "id": 99,
                    "method": "subscriptions/listen",
                    "params": {
                        "notifications": {"taskIds": [task_id, "unknown"]},
                        "_meta": meta(),
                    },
                }
            )
            seen: list[dict[str, Any]] = []
            while not seen or seen[-1]["params"]["status"] != "completed":
                frame = await peer.end.receive()
                assert isinstance(frame, bytes)
                message = json.loads(frame)
                validate_message(message, REV, "server")
                if message["method"] == "notifications/subscriptions/acknowledged":
                    assert message["params"]["notifications"]["taskIds"] == [task_id]
                elif message["method"] == "notifications/tasks":
                    seen.append(message)
                    # The stream opens with the task as it is; then it finishes.
                    server.gate.set()  # type: ignore[attr-defined]
            await peer.send({"method": "notifications/cancelled", "params": {"requestId": 99}})
    assert seen[0]["params"]["status"] == "working"
    assert seen[-1]["params"]["result"]["content"][0]["text"] == "done x"
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 99 for m in seen)


async def test_mcptrio_client_as_task_answers_input_with_its_handlers_in_the_2026_era() -> None:
    transcript = Transcript()
    handlers = Handlers(elicitation=ScriptedElicitation({"ok": True}))
    with trio.fail_after(10):
        async with open_test_client(
            make_server(), transcript=transcript, handlers=handlers
        ) as client:
            assert client.protocol_version == REV
            handle = await client.call_tool("confirm", {"what": "g"}, as_task=True)
            assert handle.task.status == "working" and handle.task.ttl is not None
            result = await handle.result()
            assert result.content[0].text == 'accept {"ok": true}'  # type: ignore[union-attr]
            broken = await client.call_tool("broken_tool", as_task=True)
            assert (await broken.result()).is_error is True
            crashing = await client.call_tool("crashing", as_task=True)
            with pytest.raises(InternalError):
                await crashing.result()
            slow = await client.call_tool("sleeper", {"seconds": 30}, as_task=True)
            task = await slow.cancel()
            assert task.status == "cancelled"
            with pytest.raises(InvalidRequest):
                await slow.result()
    methods = transcript.methods("client")
    assert {"tasks/get", "tasks/update", "tasks/cancel"} <= set(methods)
    # Only the calls made as tasks declared the extension.
    calls = transcript.requests("tools/call")
    assert all(
        EXTENSION_ID in c["params"]["_meta"][CLIENT_CAPABILITIES_KEY].get("extensions", {})
        for c in calls
    )


async def test_a_task_sends_no_progress_or_log_its_progress_message_is_its_status() -> None:
    server = Server("quiet", version="1.0")
    step = trio.Event()

    @server.tool(task="optional")
    async def reporting(ctx: Context) -> str:
        """Reports progress and logs."""
        await ctx.report_progress(1, 2, "half way")
        await ctx.info("a log line")
        await step.wait()
        return "done"

    with trio.fail_after(10):
        async with connected(server) as peer:
            created = await peer.result(
                "tools/call", {"name": "reporting", "_meta": {"progressToken": 5}}
            )
            while True:
                task = await peer.result("tasks/get", {"taskId": created["taskId"]})
                if task.get("statusMessage") == "half way":
                    break
                await trio.sleep(0.01)
            step.set()
            await peer.until(created["taskId"], "completed")
    methods = {m["method"] for m in peer.notifications}
    assert not methods & {"notifications/progress", "notifications/message"}


async def test_two_workers_on_one_store_serve_one_task_answers_included() -> None:
    store = MemoryTaskStore()
    first = make_server()
    first.tasks = TaskSupervisor(store)
    second = make_server()
    second.tasks = TaskSupervisor(store)
    with trio.fail_after(10):
        async with connected(first) as one, connected(second) as other:
            created = await one.result(
                "tools/call", {"name": "confirm", "arguments": {"what": "w"}}
            )
            task_id = created["taskId"]
            # The other worker reads the task, and takes its answer through the store.
            waiting = await other.until(task_id, "input_required")
            [key] = waiting["inputRequests"]
            answer = {"action": "accept", "content": {"ok": False}}
            await other.result("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
            done = await other.until(task_id, "completed")
    assert done["result"]["content"][0]["text"] == 'accept {"ok": false}'


async def test_an_ask_left_unanswered_past_its_timeout_fails_the_task(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = Server("patient", version="1.0")

    @server.tool(task="optional")
    async def impatient(ctx: Context) -> str:
        """Waits 5 s for an answer."""
        await ctx.elicit("Quick?", CONFIRM, timeout=5)
        return "answered"

    with trio.fail_after(60):
        async with connected(server) as peer:
            created = await peer.result("tools/call", {"name": "impatient"})
            waiting = await peer.until(created["taskId"], "input_required")
            assert len(waiting["inputRequests"]) == 1
            failed = await peer.until(created["taskId"], "failed", "completed")
    assert failed["status"] == "failed" and "within 5" in failed["error"]["message"]
