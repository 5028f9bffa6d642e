"""The 2026-07-28 tasks extension over Streamable HTTP: ``Mcp-Name`` carries the task id of
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (SEP-2663, checked like the other
``Mcp-Name`` values: missing or different is 400 with -32020), a task outlives the POST that
created it, and mcptrio's client drives a task, input included, over HTTP. Every body is checked
against the 2026-07-28 schema (the extension's types against mcptrio's transcription of the
SEP)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from http_client_for_tests import TestResponse, open_test_connection

from mcptrio import Context, Server, open_client
from mcptrio.client import Handlers
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.tasks_extension import EXTENSION_ID
from mcptrio.server.context import Elicited
from mcptrio.testing import ScriptedElicitation

from schema_validation import validate_message

REV = "2026-07-28"
ACCEPT = ("accept", "application/json, text/event-stream")
JSON = ("content-type", "application/json")
DECLARES: dict[str, Any] = {"extensions": {EXTENSION_ID: {}}, "elicitation": {}}


def make_server() -> Server:
    server = Server("tasks-http", version="1.0")

    @server.tool(task="optional")
    async def slow(seconds: float) -> str:
        """Sleeps, then answers."""
        await trio.sleep(seconds)
        return "slept"

    @server.tool(task="optional")
    async def confirm(ctx: Context, what: str) -> str:
        """Asks before answering."""
        answer: Elicited[Any] = await ctx.elicit(
            f"Delete {what}?",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        )
        return f"{answer.action} {what}"

    return server


@asynccontextmanager
async def serving() -> AsyncIterator[str]:
    server = make_server()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        yield url
        nursery.cancel_scope.cancel()


def body(method: str, params: dict[str, Any], capabilities: dict[str, Any] | None = None) -> bytes:
    caps = DECLARES if capabilities is None else capabilities
    meta = {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: caps}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    validate_message(message, REV, "client")
    return json.dumps(message).encode()


async def post(url: str, method: str, data: bytes, name: str | None) -> TestResponse:
    head = [ACCEPT, JSON, ("mcp-protocol-version", REV), ("mcp-method", method)]
    if name is not None:
        head.append(("mcp-name", name))
    async with open_test_connection(url) as conn:
        return await conn.request("POST", "/mcp", headers=head, body=data)


async def test_mcp_name_carries_the_task_id_and_is_checked_against_the_body() -> None:
    with trio.fail_after(10):
        async with serving() as url:
            created = await post(
                url,
                "tools/call",
                body("tools/call", {"name": "slow", "arguments": {"seconds": 0.2}}),
                "slow",
            )
            validate_message(created.json(), REV, "CallToolResult")
            task_id = created.json()["result"]["taskId"]
            get = body("tasks/get", {"taskId": task_id})
            matched = await post(url, "tasks/get", get, task_id)
            wrong = await post(url, "tasks/get", get, "another-task")
            missing = await post(url, "tasks/get", get, None)
            undeclared = await post(
                url, "tasks/get", body("tasks/get", {"taskId": task_id}, {}), task_id
            )
            # The POST that created the task is over; the task goes on and finishes.
            while True:
                polled = await post(url, "tasks/get", get, task_id)
                if polled.json()["result"]["status"] == "completed":
                    break
                await trio.sleep(0.05)
            cancel = body("tasks/cancel", {"taskId": task_id})
            cancelled = await post(url, "tasks/cancel", cancel, task_id)
    assert matched.status == 200
    validate_message(matched.json(), REV, "GetTaskResult")
    assert matched.json()["result"]["taskId"] == task_id
    for refused in (wrong, missing):
        assert refused.status == 400 and refused.json()["error"]["code"] == -32020
    assert undeclared.status == 400 and undeclared.json()["error"]["code"] == -32021
    validate_message(polled.json(), REV, "GetTaskResult")
    assert polled.json()["result"]["result"]["content"][0]["text"] == "slept"
    validate_message(cancelled.json(), REV, "CancelTaskResult")


async def test_mcptrio_client_runs_a_task_with_input_over_http() -> None:
    handlers = Handlers(elicitation=ScriptedElicitation({"ok": True}))
    with trio.fail_after(15):
        async with serving() as url, open_client(f"{url}/mcp", handlers=handlers) as client:
            assert client.protocol_version == REV
            handle = await client.call_tool("confirm", {"what": "logs"}, as_task=True)
            assert handle.task_id and handle.task.status == "working"
            result = await handle.result()
            status = await handle.status()
    assert result.content[0].text == "accept logs"  # type: ignore[union-attr]
    assert status.status == "completed"
