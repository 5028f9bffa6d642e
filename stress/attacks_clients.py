"""Attacks of one client on what every client shares (issue 38, items 7 to 9): the task slots of
anonymous clients, the memory of large resource reads, and listen streams. Each runs with the
well-behaved client (:func:`~stress.harness.probe_http`) on other connections throughout."""

from __future__ import annotations

import json
from typing import Any

import trio
import wsproto.events as ws_events

from .attacks_http import under_attack
from .harness import (
    PROBE_ADDRESS,
    HttpAnswer,
    ServerChild,
    connect,
    http_request,
    open_websocket,
    read_answer,
    websocket_texts,
)

STATELESS = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
LARGE_SKILL_URI = "skill://large/data.txt"


def stateless_body(method: str, params: dict[str, Any], rid: int, extension: str) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {extension: {}}},
    }
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}
    return json.dumps(message).encode()


async def stateless_request(
    child: ServerChild, method: str, name: str, body: bytes, local: str | None = None
) -> HttpAnswer:
    """One stateless-era POST on a connection of its own, from ``local`` if given."""
    host, port = child.host_port
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": STATELESS,
        "mcp-method": method,
        "mcp-name": name,
    }
    request = http_request("POST", "/mcp", f"{host}:{port}", body=body, headers=headers)
    stream = await connect(host, port, local)
    async with stream:
        await stream.send_all(request)
        return await read_answer(stream)


async def stateless_post(
    child: ServerChild, method: str, name: str, body: bytes, local: str | None = None
) -> dict[str, Any]:
    """:func:`stateless_request`'s JSON-RPC answer (``{}`` when the answer was not JSON, e.g.
    a 503)."""
    answer = await stateless_request(child, method, name, body, local)
    if answer.status != 200:
        return {}
    text = answer.body
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        text = text.split(b"data: ", 1)[-1]
    found: dict[str, Any] = json.loads(text)
    return found


# -- item 7: one anonymous client floods tasks; another address still gets one -------------------


async def start_task(child: ServerChild, rid: int, local: str | None = None) -> str:
    """``tools/call`` of ``forever`` as a task; ``task``, an error code, or ``none``."""
    body = stateless_body("tools/call", {"name": "forever", "arguments": {}}, rid, TASKS_EXTENSION)
    answer = await stateless_post(child, "tools/call", "forever", body, local)
    if "error" in answer:
        return str(answer["error"]["code"])
    return str(answer.get("result", {}).get("resultType", "none"))


def task_flood(count: int) -> Any:
    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        outcomes: dict[str, int] = {}
        for rid in range(count):
            outcome = await start_task(child, rid)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        newcomer = await start_task(child, count, PROBE_ADDRESS)
        await stop.wait()
        return {"flood": outcomes, "newcomer": newcomer, "holds": newcomer == "task"}

    return attack


async def anonymous_tasks_attack(short: bool) -> dict[str, Any]:
    """One anonymous client starts tasks until refused (200; 100); a newcomer from another
    address still gets one."""
    return await under_attack(
        "http-httptools", task_flood(100 if short else 200), 3 if short else 20
    )


# -- item 8: concurrent reads of a large skill file ---------------------------------------------


def large_reads(readers: int) -> Any:
    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        done = refused = 0
        body = stateless_body("resources/read", {"uri": LARGE_SKILL_URI}, 1, SKILLS_EXTENSION)

        async def read_again() -> None:
            nonlocal done, refused
            while not stop.is_set():
                try:
                    read = await stateless_request(child, "resources/read", LARGE_SKILL_URI, body)
                    answer = read.body
                except (OSError, trio.BrokenResourceError):
                    answer = b""
                # Not decoded: a reader that keeps up is the attack (decoding 15 MiB per answer
                # would slow this process down, and the attack with it).
                if b'"result"' in answer[:200]:
                    done += 1
                else:
                    refused += 1
                    await trio.sleep(0.1)

        async with trio.open_nursery() as nursery:
            for _ in range(readers):
                nursery.start_soon(read_again)
            await stop.wait()
            nursery.cancel_scope.cancel()
        return {"reads_answered": done, "reads_refused": refused, "holds": done > 0}

    return attack


async def large_reads_attack(short: bool) -> dict[str, Any]:
    """16 clients read a 15 MiB skill file over and over, at once (24 in the full run)."""
    attack = large_reads(16 if short else 24)
    return await under_attack(
        "http-httptools", attack, 4 if short else 20, options=["--skill-mib", "15"]
    )


# -- item 9: one client's listen streams over 40 WebSocket connections ---------------------------


def listen_flood(connections: int, per_connection: int) -> Any:
    """Each connection asks for listen streams subscribed to 1,000 long URIs each, and reads
    what comes back (acknowledgements and refusals)."""

    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        acknowledged = refused = 0

        async def flood(number: int) -> None:
            nonlocal acknowledged, refused
            stream, ws = await open_websocket(*child.host_port)
            async with stream:

                async def read() -> None:
                    nonlocal acknowledged, refused
                    async for message in websocket_texts(stream, ws):
                        acknowledged += "acknowledged" in message
                        refused += '"error"' in message

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(read)
                    for rid in range(per_connection):
                        uris = [f"item://{number}-{rid}-{n}-{'u' * 150}" for n in range(1000)]
                        params = {"notifications": {"resourceSubscriptions": uris}}
                        body = stateless_body("subscriptions/listen", params, rid, TASKS_EXTENSION)
                        await stream.send_all(ws.send(ws_events.TextMessage(body.decode())))
                    await stop.wait()
                    nursery.cancel_scope.cancel()

        async with trio.open_nursery() as nursery:
            for number in range(connections):
                nursery.start_soon(flood, number)
            await stop.wait()
            nursery.cancel_scope.cancel()
        return {
            "listens_acknowledged": acknowledged,
            "listens_refused": refused,
            "holds": refused > 0,
        }

    return attack


async def listen_flood_attack(short: bool) -> dict[str, Any]:
    """One client asks for listen streams of 1,000 long URIs each over 40 WebSocket
    connections (256 each; 16 each in the short run)."""
    attack = listen_flood(40, 16 if short else 256)
    return await under_attack("http-httptools", attack, 4 if short else 20)
