"""Listen streams of stateless-era clients without an authenticator, over HTTP: each client
address has its own quota, so one client's streams are bounded and another address still gets
its own (issue 38, item 9)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import trio
from http_client_for_tests import StreamingResponse, TestConnection, open_test_connection

from mcptrio import Server
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.server.listen_quota import ListenQuota

REV = "2026-07-28"
FLOODER, NEWCOMER = "127.0.0.1", "127.0.0.2"
HEAD = [
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", REV),
    ("mcp-method", "subscriptions/listen"),
]


@asynccontextmanager
async def serving(server: Server) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        yield url
        nursery.cancel_scope.cancel()


def body(rid: int) -> bytes:
    params = {
        "_meta": {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {}},
        "notifications": {"toolsListChanged": True},
    }
    message = {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
    return json.dumps(message).encode()


async def first_event(conn: TestConnection, rid: int, stack: AsyncExitStack) -> bytes:
    """Open a listen stream on ``conn`` (kept open by ``stack``); what it sends first."""
    events: StreamingResponse = await stack.enter_async_context(
        conn.stream("POST", "/mcp", headers=HEAD, body=body(rid))
    )
    first = await events.next_chunk()
    assert first is not None
    return first


async def test_an_address_at_its_listen_quota_is_refused_and_another_address_is_not() -> None:
    server = Server("listened", version="1.0", listen_quota=ListenQuota(max_streams_per_client=2))
    server.add_tool(lambda: "x", name="noop")
    with trio.fail_after(20):
        async with serving(server) as url, AsyncExitStack() as stack:
            held = []
            for rid in range(3):
                conn = await stack.enter_async_context(
                    open_test_connection(url, local_address=FLOODER)
                )
                held.append(await first_event(conn, rid, stack))
            newcomer = await stack.enter_async_context(
                open_test_connection(url, local_address=NEWCOMER)
            )
            other = await first_event(newcomer, 9, stack)
    assert all(b"acknowledged" in event for event in held[:2])
    assert b'"code":-32600' in held[2].replace(b" ", b"")
    assert b"acknowledged" in other
