"""Long-lived POSTs held open by one client, each re-opened as soon as the server cuts it, with
the probe on other connections throughout (issue 38, item 3): stateless-era
``subscriptions/listen`` streams, and handshake-era ``tasks/result`` long polls of a task that
runs for ten minutes. Either kind used to hold its connection slot for as long as it stayed open,
so ``max_connections`` of them turned every other client away with 503."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from .attacks_http import Attack, HeldStreams, hold_stream, run_holders, under_attack
from .harness import (
    ServerChild,
    connect,
    http_request,
    mcp_headers,
    open_http_session,
    read_answer,
    rpc,
)

STATELESS_REVISION = "2026-07-28"
TASKS_REVISION = "2025-11-25"
#: Long polls per session: a session answers at most ``max_in_flight`` (256) requests at once.
POLLS_PER_SESSION = 200

#: The request a holder sends next, given how many it has sent.
NextRequest = Callable[[int], bytes]


def held_posts(count: int, prepare: Callable[[ServerChild], Awaitable[NextRequest]]) -> Attack:
    """``count`` connections, each POSTing what ``prepare``'s function gives and holding the
    answer's stream open until the server cuts it; then at once again."""

    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        host, port = child.host_port
        next_request = await prepare(child)
        counts = HeldStreams()
        sent = 0

        async def hold() -> None:
            nonlocal sent
            while not stop.is_set():
                sent += 1
                await hold_stream(host, port, next_request(sent), counts)

        await run_holders(count, hold, stop)
        return {"posts_held": counts.held, "posts_refused": counts.refused}

    return attack


async def _listen_requests(child: ServerChild) -> NextRequest:
    host, port = child.host_port
    headers = mcp_headers(revision=STATELESS_REVISION)
    headers["mcp-method"] = "subscriptions/listen"
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS_REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"_meta": meta, "notifications": {"toolsListChanged": True}}

    def listen(serial: int) -> bytes:
        body = rpc("subscriptions/listen", params, rid=serial)
        return http_request("POST", "/mcp", f"{host}:{port}", body=body, headers=headers)

    return listen


def _task_result_requests(count: int) -> Callable[[ServerChild], Awaitable[NextRequest]]:
    async def prepare(child: ServerChild) -> NextRequest:
        host, port = child.host_port
        netloc = f"{host}:{port}"
        polled: list[tuple[dict[str, str], str]] = []
        for _ in range(max(1, -(-count // POLLS_PER_SESSION))):
            sid = await open_http_session(host, port, revision=TASKS_REVISION)
            headers = mcp_headers(sid, TASKS_REVISION)
            params = {"name": "hold", "arguments": {"seconds": 600}, "task": {"ttl": 600_000}}
            stream = await connect(host, port)
            async with stream:
                body = rpc("tools/call", params)
                await stream.send_all(
                    http_request("POST", "/mcp", netloc, body=body, headers=headers)
                )
                answer = await read_answer(stream)
            polled.append((headers, json.loads(answer.body)["result"]["task"]["taskId"]))

        def poll(serial: int) -> bytes:
            # Each its own id: a session refuses an id it has in flight (400).
            headers, task_id = polled[serial % len(polled)]
            body = rpc("tasks/result", {"taskId": task_id}, rid=serial + 1)
            return http_request("POST", "/mcp", netloc, body=body, headers=headers)

        return poll

    return prepare


async def listen_streams_attack(short: bool) -> dict[str, Any]:
    """Stateless-era listen streams held open (1,000; 250 against 200 slots)."""
    if short:
        listens = held_posts(250, _listen_requests)
        return await under_attack("http-httptools", listens, 2.5, "max_connections=200")
    return await under_attack("http-httptools", held_posts(1000, _listen_requests), 20)


async def task_result_polls_attack(short: bool) -> dict[str, Any]:
    """Handshake-era ``tasks/result`` long polls held open (1,000; 250 against 200 slots)."""
    if short:
        polls = held_posts(250, _task_result_requests(250))
        return await under_attack("http-httptools", polls, 2.5, "max_connections=200")
    return await under_attack("http-httptools", held_posts(1000, _task_result_requests(1000)), 20)
