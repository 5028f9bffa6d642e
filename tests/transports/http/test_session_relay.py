"""Handshake-era sessions behind a load balancer without stickiness: every request reaches the
session's owner, whichever worker it lands on; a dead owner's sessions are 404."""

from __future__ import annotations

from typing import Any

import trio

import mcptrio
from mcptrio.client import ClientIdentity, Handlers, Revisions
from mcptrio.protocol.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitResult,
    TextContent,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.engine.client_pool import HttpClientPool

from http_client_for_tests import open_test_connection
from redis_for_relay import redis_url
from relay_workers import open_workers

HANDSHAKE = Revisions(supported=("2025-11-25",))
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def relay_server() -> mcptrio.Server:
    server = mcptrio.Server("relay-test")

    @server.tool()
    async def step(ctx: Context, n: int) -> str:
        await ctx.report_progress(1, 2, f"half of {n}")
        return f"done {n}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA)
        assert isinstance(answer.data, dict)
        return f"hello {answer.data['name']}"

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        await trio.sleep_forever()
        return "never"

    return server


async def answer_elicitation(ctx: RequestContext, request: Any) -> Any:
    assert isinstance(request, ElicitRequest)
    return ElicitResult(action="accept", content={"name": "Ada"})


def fresh_connections() -> HttpClientPool:
    """A pool that keeps no connection between requests: each lands where the balancer says."""
    return HttpClientPool(max_idle=0)


async def test_calls_on_fresh_connections_reach_the_owner_with_progress_and_elicitation(
    redis_url: str,
) -> None:
    with trio.fail_after(60):
        async with (
            open_workers(relay_server(), redis_url) as workers,
            open_http_client_transport(f"{workers.url}/mcp", pool=fresh_connections()) as transport,
            mcptrio.open_client(
                transport,
                revisions=HANDSHAKE,
                identity=ClientIdentity(
                    capabilities=ClientCapabilities(elicitation=ElicitationCapability())
                ),
                handlers=Handlers(fallback=answer_elicitation),
            ) as client,
        ):
            for n in range(200):
                progress: list[str | None] = []

                async def on_progress(done: float, total: float | None, message: str | None) -> None:
                    progress.append(message)

                result = await client.call_tool("step", {"n": n}, on_progress=on_progress)
                assert result.content == [TextContent(text=f"done {n}")]
                # In order on the stream: the progress came before the answer.
                assert progress == [f"half of {n}"]
            asked = await client.call_tool("ask", {})
            assert asked.content == [TextContent(text="hello Ada")]
            forwarded = workers.forwarded()
            served = [w.app.relay.served for w in workers.workers if w.app.relay is not None]
    # About half of 200 calls (each two requests: the call, then nothing; plus the GET stream
    # and the elicitation's answer) landed on the worker that does not own the session.
    assert 80 <= forwarded <= 130
    assert sorted(served)[0] == 0 and sorted(served)[1] == forwarded


async def test_a_session_of_a_stopped_worker_is_not_found_elsewhere(redis_url: str) -> None:
    with trio.fail_after(30):
        async with open_workers(relay_server(), redis_url) as workers:
            first, second = workers.workers
            async with open_test_connection(f"http://127.0.0.1:{first.port}") as conn:
                response = await conn.request(
                    "POST",
                    "/mcp",
                    headers=[
                        ("content-type", "application/json"),
                        ("accept", "application/json, text/event-stream"),
                    ],
                    body=_initialize(),
                )
                assert response.status == 200
                session_id = response.header("mcp-session-id")
            assert session_id is not None
            first.stop()
            await trio.sleep(0.1)
            async with open_test_connection(f"http://127.0.0.1:{second.port}") as conn:
                response = await conn.request("POST", "/mcp", headers=_session_headers(session_id), body=_ping())
            assert response.status == 404
            assert second.app.relay is not None and second.app.relay.forwarded == 1


def _initialize() -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    )


def _ping() -> bytes:
    return b'{"jsonrpc":"2.0","id":2,"method":"ping"}'


def _session_headers(session_id: bytes) -> list[tuple[str | bytes, str | bytes]]:
    return [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-session-id", session_id),
        ("mcp-protocol-version", "2025-11-25"),
    ]
