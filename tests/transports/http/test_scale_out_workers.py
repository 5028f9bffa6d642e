"""Two workers sharing only Redis (``open_scale_out``, as ``mcptrio run --workers 2 --redis``
gives each worker process): a 2026-07-28 task made through one worker is read and cancelled
through the other, and the cancel reaches the actor running it (every body checked against the
2026-07-28 schema); a handshake-era session subscribed to a resource on one worker hears of an
update made on the other, and of a list change. (A 2026-07-28 listen stream hearing another
worker's change is ``tests/stores/test_open_stores.py``.)"""

from __future__ import annotations

import json
from typing import Any

import trio
from cancellation import Waiter
from http_client_for_tests import TestResponse, open_test_connection
from relay_workers import open_workers

import mcptrio
from mcptrio import Context, Server
from mcptrio.client import NotificationCallbacks, Revisions
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.tasks_extension import EXTENSION_ID

from schema_validation import validate_message

REV = "2026-07-28"
DECLARES: dict[str, Any] = {"extensions": {EXTENSION_ID: {}}}


def _body(method: str, params: dict[str, Any]) -> bytes:
    meta = {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: DECLARES}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    validate_message(message, REV, "client")
    return json.dumps(message).encode()


async def _post(port: int, method: str, params: dict[str, Any], name: str) -> TestResponse:
    head = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", REV),
        ("mcp-method", method),
        ("mcp-name", name),
    ]
    async with open_test_connection(f"http://127.0.0.1:{port}") as conn:
        return await conn.request("POST", "/mcp", headers=head, body=_body(method, params))


async def test_a_task_made_through_one_worker_is_polled_and_cancelled_through_the_other(
    redis_url: str,
) -> None:
    waiter = Waiter()
    ran_on: list[str] = []

    def make_server() -> Server:
        server = Server("scale-out-tasks")

        @server.tool(task="optional")
        async def hold(ctx: Context) -> str:
            """Runs until cancelled."""
            ran_on.append("ran")
            await waiter.wait_until_cancelled()

        return server

    with trio.fail_after(30):
        async with open_workers(make_server, redis_url) as workers:
            first, second = workers.workers
            created = await _post(
                first.port, "tools/call", {"name": "hold", "arguments": {}}, "hold"
            )
            task_id = created.json()["result"]["taskId"]
            await waiter.entered.wait()
            polled = await _post(second.port, "tasks/get", {"taskId": task_id}, task_id)
            cancelled = await _post(second.port, "tasks/cancel", {"taskId": task_id}, task_id)
            # The cancel, answered by the second worker, stops the actor on the first.
            await waiter.cancelled.wait()
            after = await _post(first.port, "tasks/get", {"taskId": task_id}, task_id)
            again = await _post(second.port, "tasks/get", {"taskId": task_id}, task_id)
    validate_message(created.json(), REV, "CallToolResult")
    assert created.json()["result"]["status"] == "working"
    validate_message(polled.json(), REV, "GetTaskResult")
    assert polled.json()["result"]["status"] == "working"
    validate_message(cancelled.json(), REV, "CancelTaskResult")
    for answer in (after, again):
        validate_message(answer.json(), REV, "GetTaskResult")
        assert answer.json()["result"]["status"] == "cancelled"
    assert len(ran_on) == 1


async def test_a_handshake_session_on_one_worker_hears_of_changes_made_on_the_other(
    redis_url: str,
) -> None:
    def make_server() -> Server:
        server = Server("scale-out-subscriptions")

        @server.resource("note://a")
        def note() -> str:
            return "a"

        return server

    updated: list[str] = []
    changed: list[str] = []
    callbacks = NotificationCallbacks(
        on_resource_updated=updated.append, on_list_changed=changed.append
    )
    with trio.fail_after(20):
        async with open_workers(make_server, redis_url) as workers:
            first, second = workers.workers
            async with mcptrio.open_client(
                first.url, revisions=Revisions(supported=("2025-11-25",)), notifications=callbacks
            ) as client:
                async with client.subscribe("note://a") as updates:
                    second.server.notify_resource_updated("note://a")
                    assert await updates.__anext__() == "note://a"
                second.server.add_resource(lambda: "b", uri="note://b")
                while not changed:  # noqa: ASYNC110 (the callback is the event)
                    await trio.sleep(0.01)
    assert updated == ["note://a"]
    assert changed == ["resources"]
