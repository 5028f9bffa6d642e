"""Handshake-era sessions behind a load balancer without stickiness: every request reaches the
session's owner, whichever worker it lands on; with strict sessions, a dead owner's sessions are
404 (by default another worker adopts them: ``test_session_adoption.py``)."""

from __future__ import annotations

import json
import random
from functools import partial
from typing import Any

import trio
from cancellation import Waiter
from http_client_for_tests import open_test_connection
from redis_servers import RedisServer
from relay_workers import open_workers

import mcptrio
from mcptrio.client import ClientIdentity, Handlers, Revisions
from mcptrio.protocol.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitResult,
    LoggingMessageNotification,
    TextContent,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.engine.client_pool import HttpClientPool

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
            open_workers(relay_server, redis_url) as workers,
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

                async def on_progress(
                    done: float,
                    total: float | None,
                    message: str | None,
                    progress: list[str | None] = progress,
                ) -> None:
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


async def test_with_strict_sessions_a_session_of_a_stopped_worker_is_not_found_elsewhere(
    redis_url: str,
) -> None:
    with trio.fail_after(30):
        async with open_workers(relay_server, redis_url, adopt_sessions=False) as workers:
            first, second = workers.workers
            async with open_test_connection(f"http://127.0.0.1:{first.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=_json_headers(), body=_initialize()
                )
                assert response.status == 200
                session_id = response.header("mcp-session-id")
            assert session_id is not None
            first.stop()
            await trio.sleep(0.1)
            async with open_test_connection(f"http://127.0.0.1:{second.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=_session_headers(session_id), body=_ping()
                )
            assert response.status == 404
            assert second.app.relay is not None and second.app.relay.forwarded == 1


async def test_a_browser_request_forwarded_to_the_owner_allows_its_origin_once(
    redis_url: str,
) -> None:
    # Both workers see the Origin: only one of them may add the CORS headers, or the browser
    # refuses an answer that allows the origin twice.
    page = [("origin", "http://localhost:5173")]
    with trio.fail_after(30):
        async with open_workers(relay_server, redis_url) as workers:
            first, second = workers.workers
            async with open_test_connection(f"http://127.0.0.1:{first.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=[*_json_headers(), *page], body=_initialize()
                )
                session_id = response.header("mcp-session-id")
            assert session_id is not None
            async with open_test_connection(f"http://127.0.0.1:{second.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=[*_session_headers(session_id), *page], body=_ping()
                )
            assert second.app.relay is not None and second.app.relay.forwarded == 1
    assert response.status == 200
    allowed = [value for name, value in response.headers if name == b"access-control-allow-origin"]
    assert allowed == [b"http://localhost:5173"]


async def test_a_stateless_request_is_served_where_it_lands_whatever_session_id_it_carries(
    redis_url: str,
) -> None:
    with trio.fail_after(30):
        async with open_workers(relay_server, redis_url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first.port)
            first.stop()
            headers = [
                *_json_headers(),
                ("mcp-session-id", session_id),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "step"),
            ]
            async with open_test_connection(f"http://127.0.0.1:{second.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=headers, body=_stateless_call("step", {"n": 1})
                )
    assert response.status == 200, response
    assert response.json()["result"]["content"][0]["text"] == "done 1"
    assert second.app.relay is not None and second.app.relay.forwarded == 0


def _stateless_call(name: str, arguments: dict[str, Any]) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    ).encode()


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


def flooding_server() -> mcptrio.Server:
    server = mcptrio.Server("relay-flood")

    @server.tool()
    async def flood(ctx: Context, count: int) -> int:
        # Not related to this call: every one goes to the session's standalone (GET) stream.
        for n in range(count):
            await ctx.session.notify(LoggingMessageNotification(level="info", data=n))
        return count

    return server


def _sse_events(buffer: bytearray) -> list[tuple[bytes | None, bytes]]:
    """Take the complete events out of ``buffer``: (id, data) of each with data."""
    events = []
    while (end := buffer.find(b"\n\n")) >= 0:
        block = bytes(buffer[:end])
        del buffer[: end + 2]
        event_id, data = None, b""
        for line in block.split(b"\n"):
            if line.startswith(b"id:"):
                event_id = line[3:].strip()
            elif line.startswith(b"data:"):
                data += line[5:].strip()
        if data:
            events.append((event_id, data))
    return events


async def test_a_get_stream_cut_at_random_resumes_on_the_other_worker_losing_nothing(
    redis_url: str,
) -> None:
    total = 10_000
    rng = random.Random(20261129)
    with trio.fail_after(120):
        # The workers share the Redis event store: a stream resumes on whichever worker the
        # GET reaches, from the events its owner stored there.
        async with open_workers(
            flooding_server,
            redis_url,
            unrelated_buffer=2 * total,
            stores_options={"max_events_per_session": 2 * total},
        ) as workers:
            ports = [w.port for w in workers.workers]
            owner = f"http://127.0.0.1:{ports[0]}"
            async with open_test_connection(owner) as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=_json_headers(), body=_initialize()
                )
                session_id = response.header("mcp-session-id")
                assert session_id is not None
                await conn.request(
                    "POST", "/mcp", headers=_session_headers(session_id), body=_initialized()
                )
                flooded = await conn.request(
                    "POST",
                    "/mcp",
                    headers=_session_headers(session_id),
                    body=_call("flood", {"count": total}),
                )
                assert flooded.status == 200, flooded
            received: list[int] = []
            last_event_id: bytes | None = None
            resumptions = 0
            while len(received) < total:
                # Alternate workers; the first GET already lands on the one that is not the owner.
                port = ports[(resumptions + 1) % 2]
                cut_after = rng.randrange(1, 2500)
                headers = [*_session_headers(session_id), ("accept", "text/event-stream")]
                headers = [h for h in headers if h[0] not in ("content-type",)]
                if last_event_id is not None:
                    headers.append(("last-event-id", last_event_id))
                async with (
                    open_test_connection(f"http://127.0.0.1:{port}", timeout=20) as conn,
                    conn.stream("GET", "/mcp", headers=headers) as stream,
                ):
                    assert stream.status == 200
                    buffer = bytearray()
                    taken = 0
                    while taken < cut_after and len(received) < total:
                        chunk = await stream.next_chunk()
                        assert chunk is not None
                        buffer += chunk
                        for event_id, data in _sse_events(buffer):
                            # An event after the cut point is not counted: the cut lost it
                            # on this connection, and the resumption must bring it again.
                            if taken >= cut_after:
                                break
                            received.append(json.loads(data)["params"]["data"])
                            last_event_id = event_id
                            taken += 1
                resumptions += 1
    assert received == list(range(total)), "events lost or duplicated"
    assert resumptions >= 5
    assert workers.forwarded() >= resumptions // 2


async def test_a_client_leaving_a_forwarded_call_frees_its_worker_and_a_cancel_elsewhere_stops_it(
    redis_url: str,
) -> None:
    waiter = Waiter()

    def make_server() -> mcptrio.Server:
        server = mcptrio.Server("relay-cancel")

        @server.tool()
        async def wait_forever(ctx: Context) -> str:
            await waiter.wait_until_cancelled()

        return server

    with trio.fail_after(30):
        async with open_workers(make_server, redis_url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first.port)
            async with (
                open_test_connection(f"http://127.0.0.1:{second.port}") as conn,
                trio.open_nursery() as nursery,
            ):
                nursery.start_soon(
                    partial(
                        conn.request,
                        "POST",
                        "/mcp",
                        headers=_session_headers(session_id),
                        body=_call("wait_forever", {}),
                    )
                )
                await waiter.entered.wait()
                assert first.app.relay is not None and first.app.relay.serving == 1
                nursery.cancel_scope.cancel()
            # The client's connection is closed: the forwarder lets the exchange go and tells
            # the owner. In the handshake era disconnection is not cancellation: the call runs on.
            assert second.app.relay is not None
            while second.app.relay.forwarding:  # noqa: ASYNC110 (a counter; no event to wait on)
                await trio.sleep(0.01)
            await trio.sleep(0.2)
            assert not waiter.cancelled.is_set()
            # An explicit cancel, sent through the other worker, stops it.
            async with open_test_connection(f"http://127.0.0.1:{second.port}") as conn:
                response = await conn.request(
                    "POST", "/mcp", headers=_session_headers(session_id), body=_cancelled(7)
                )
            assert response.status == 202
            await waiter.cancelled.wait()
            while first.app.relay.serving:  # noqa: ASYNC110 (a counter; no event to wait on)
                await trio.sleep(0.01)
            assert second.app.relay.forwarded == 2


async def test_redis_unreachable_answers_503_without_hanging(
    own_redis_server: RedisServer,
) -> None:
    with trio.fail_after(60):
        async with open_workers(relay_server, own_redis_server.url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first.port)
            await trio.to_thread.run_sync(own_redis_server.stop)
            async with open_test_connection(f"http://127.0.0.1:{second.port}", timeout=30) as conn:
                started = trio.current_time()
                response = await conn.request(
                    "POST", "/mcp", headers=_session_headers(session_id), body=_ping()
                )
                waited = trio.current_time() - started
            # The owner's own clients are not affected: it answers them itself.
            pong = await _ping_on(first.port, session_id)
    assert response.status == 503
    assert response.header("retry-after") == b"1"
    assert waited < 15
    assert pong == 200


async def _open_session(port: int) -> bytes:
    async with open_test_connection(f"http://127.0.0.1:{port}") as conn:
        response = await conn.request("POST", "/mcp", headers=_json_headers(), body=_initialize())
        session_id = response.header("mcp-session-id")
        assert session_id is not None
        await conn.request(
            "POST", "/mcp", headers=_session_headers(session_id), body=_initialized()
        )
    return session_id


async def _ping_on(port: int, session_id: bytes) -> int:
    async with open_test_connection(f"http://127.0.0.1:{port}") as conn:
        response = await conn.request(
            "POST", "/mcp", headers=_session_headers(session_id), body=_ping()
        )
    return response.status


def _json_headers() -> list[tuple[str | bytes, str | bytes]]:
    return [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def _initialized() -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def _cancelled(request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "left"},
        }
    ).encode()


def _call(name: str, arguments: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    ).encode()
