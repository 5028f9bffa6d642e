"""Tasks of stateless-era clients without an authenticator, over HTTP: each client address is
an owner of its own, so one client cannot take every other client's task slots or see their
tasks, and a full task store is a capacity error, not an internal one (issue 38, item 7)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio
from http_client_for_tests import TestResponse, open_test_connection

from mcptrio import Server
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.tasks_extension import EXTENSION_ID
from mcptrio.stores.task_store import MemoryTaskStore
from mcptrio.tasks import TaskLimits, TaskSupervisor
from mcptrio.transports.http.endpoints.security import HttpSecurity

from schema_validation import validate_message

REV = "2026-07-28"
#: Two clients on loopback: the server sees a connection from 127.0.0.2 as another address.
FLOODER, NEWCOMER = "127.0.0.1", "127.0.0.2"


@asynccontextmanager
async def serving(
    tasks: TaskSupervisor, security: HttpSecurity | None = None
) -> AsyncIterator[str]:
    server = Server("anonymous-tasks", version="1.0", tasks=tasks)

    @server.tool(task="optional")
    async def forever() -> str:
        """Runs until cancelled."""
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(server.serve_http, "127.0.0.1", 0, security=security))
        yield url
        nursery.cancel_scope.cancel()


async def call(
    url: str, client: str, method: str, params: dict[str, Any], forwarded_for: str | None = None
) -> TestResponse:
    meta = {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {"extensions": {EXTENSION_ID: {}}}}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    validate_message(message, REV, "client")
    name = params.get("name", params.get("taskId"))
    head = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", REV),
        ("mcp-method", method),
        ("mcp-name", name),
    ]
    if forwarded_for is not None:
        head.append(("x-forwarded-for", forwarded_for))
    async with open_test_connection(url, local_address=client) as conn:
        return await conn.request("POST", "/mcp", headers=head, body=json.dumps(message).encode())


async def start_task(url: str, client: str) -> dict[str, Any]:
    response = await call(url, client, "tools/call", {"name": "forever", "arguments": {}})
    answer: dict[str, Any] = response.json()
    return answer


async def test_one_anonymous_client_cannot_take_another_clients_task_slots() -> None:
    tasks = TaskSupervisor(limits=TaskLimits(max_unfinished_per_owner=4))
    with trio.fail_after(20):
        async with serving(tasks) as url:
            flood = [await start_task(url, FLOODER) for _ in range(5)]
            newcomer = await start_task(url, NEWCOMER)
    assert [answer["result"]["resultType"] for answer in flood[:4]] == ["task"] * 4
    assert flood[4]["error"]["code"] == -32600
    assert newcomer["result"]["resultType"] == "task", newcomer


async def test_an_anonymous_clients_task_is_not_another_address_s() -> None:
    tasks = TaskSupervisor()
    with trio.fail_after(20):
        async with serving(tasks) as url:
            task_id = (await start_task(url, FLOODER))["result"]["taskId"]
            own = await call(url, FLOODER, "tasks/get", {"taskId": task_id})
            other = await call(url, NEWCOMER, "tasks/get", {"taskId": task_id})
    assert own.json()["result"]["status"] == "working"
    assert other.json()["error"]["code"] == -32602


async def test_a_full_task_store_is_a_capacity_error_not_an_internal_error() -> None:
    tasks = TaskSupervisor(MemoryTaskStore(max_tasks=2))
    with trio.fail_after(20):
        async with serving(tasks) as url:
            started = [await start_task(url, client) for client in (FLOODER, NEWCOMER)]
            refused = await start_task(url, FLOODER)
    assert [answer["result"]["resultType"] for answer in started] == ["task"] * 2
    error = refused["error"]
    assert error["code"] == -32600
    assert "full" in error["message"]
    assert error["data"] == {"taskStoreFull": True}


async def test_clients_behind_a_trusted_proxy_are_owners_of_their_own() -> None:
    # One proxy (127.0.0.1) forwards for two clients: with the proxy trusted, each is itself.
    tasks = TaskSupervisor()
    security = HttpSecurity(trusted_proxies=["127.0.0.1"])
    forever = {"name": "forever", "arguments": {}}
    with trio.fail_after(20):
        async with serving(tasks, security) as url:
            started = await call(url, FLOODER, "tools/call", forever, "198.51.100.1")
            task_id = started.json()["result"]["taskId"]
            get = {"taskId": task_id}
            own = await call(url, FLOODER, "tasks/get", get, "198.51.100.1")
            other = await call(url, FLOODER, "tasks/get", get, "198.51.100.2")
            # From a peer that is no trusted proxy, the header is not believed.
            forged = await call(url, NEWCOMER, "tasks/get", get, "198.51.100.1")
    assert own.json()["result"]["status"] == "working"
    assert other.json()["error"]["code"] == -32602
    assert forged.json()["error"]["code"] == -32602
