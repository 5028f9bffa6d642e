"""Stateless-era requests on a stream (stdio, WebSocket and in-memory share this path): no
handshake, per-request client capabilities and log level, input-required rounds, a listen
stream multiplexed with calls and ended by notifications/cancelled."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from mcptrio import Context, Server
from mcptrio.protocol.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
)
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair

from schema_validation import validate_message

REV = "2026-07-28"


def make_server() -> Server:
    server = Server("stream", version="1.0")

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs at two levels."""
        await ctx.debug("a debug line")
        await ctx.warning("a warning")
        return "done"

    @server.tool
    async def ask(ctx: Context) -> str:
        """Asks the user twice."""
        one = await ctx.elicit("One?", {"type": "object", "properties": {}})
        two = await ctx.elicit("Two?", {"type": "object", "properties": {}})
        return f"{one.action} {two.action}"

    return server


class Peer:
    """The client end, speaking raw JSON-RPC."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end
        self.received: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.end.send([Outgoing(json.dumps({"jsonrpc": "2.0", **message}).encode())])

    async def next(self) -> dict[str, Any]:
        frame = await self.end.receive()
        assert isinstance(frame, bytes)
        message: dict[str, Any] = json.loads(frame)
        self.received.append(message)
        return message

    async def answer_to(self, rid: int) -> dict[str, Any]:
        while True:
            message = await self.next()
            if message.get("id") == rid:
                return message


@asynccontextmanager
async def connected(server: Server) -> AsyncIterator[Peer]:
    client_end, server_end = memory_transport_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve_session, server_end)
        yield Peer(client_end)
        nursery.cancel_scope.cancel()


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: caps or {}, **extra}


async def test_log_messages_follow_the_requests_own_log_level() -> None:
    with trio.fail_after(5):
        async with connected(make_server()) as peer:
            call = {"name": "chatty", "arguments": {}}
            await peer.send({"id": 1, "method": "tools/call", "params": {"_meta": meta(), **call}})
            silent = await peer.answer_to(1)
            before = len(peer.received)
            with_level = {"_meta": meta(**{LOG_LEVEL_KEY: "info"}), **call}
            await peer.send({"id": 2, "method": "tools/call", "params": with_level})
            loud = await peer.answer_to(2)
    assert silent["result"]["content"][0]["text"] == "done"
    assert [m for m in peer.received[:before] if m.get("method")] == []
    logs = [m for m in peer.received[before:] if m.get("method") == "notifications/message"]
    assert [m["params"]["level"] for m in logs] == ["warning"]
    for message in logs:
        validate_message(message, REV, "server")
    validate_message(loud, REV, "CallToolResult")


async def test_input_required_rounds_run_over_a_stream() -> None:
    with trio.fail_after(5):
        async with connected(make_server()) as peer:
            params: dict[str, Any] = {
                "_meta": meta({"elicitation": {}}),
                "name": "ask",
                "arguments": {},
            }
            rid = 1
            while True:
                await peer.send({"id": rid, "method": "tools/call", "params": params})
                answer = await peer.answer_to(rid)
                result = answer["result"]
                if result["resultType"] == "complete":
                    break
                validate_message(answer, REV, "InputRequiredResult")
                (key,) = result["inputRequests"]
                params = {
                    **params,
                    "inputResponses": {key: {"action": "accept", "content": {}}},
                    "requestState": result["requestState"],
                }
                rid += 1
    assert rid == 3
    assert result["content"][0]["text"] == "accept accept"


async def test_a_listen_stream_is_multiplexed_and_ends_with_cancelled() -> None:
    server = make_server()
    with trio.fail_after(5):
        async with connected(server) as peer:
            listen = {"_meta": meta(), "notifications": {"toolsListChanged": True}}
            await peer.send({"id": "sub", "method": "subscriptions/listen", "params": listen})
            ack = await peer.next()
            server.add_tool(lambda: "x", name="extra")
            change = await peer.next()
            await peer.send({"method": "notifications/cancelled", "params": {"requestId": "sub"}})
            await trio.testing.wait_all_tasks_blocked()
            server.remove_tool("extra")
            await peer.send({"id": 5, "method": "tools/list", "params": {"_meta": meta()}})
            listed = await peer.next()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert change["method"] == "notifications/tools/list_changed"
    for message in (ack, change):
        assert message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub"
        validate_message(message, REV, "server")
    # Cancelled: the second change was not sent, and the next message is the list's answer.
    assert listed["id"] == 5
    assert server.subscriptions is not None and len(server.subscriptions) == 0  # type: ignore[arg-type]


async def test_a_filter_entry_the_server_does_not_offer_is_left_out_of_the_ack() -> None:
    with trio.fail_after(5):
        async with connected(make_server()) as peer:
            listen = {
                "_meta": meta(),
                "notifications": {"toolsListChanged": True, "promptsListChanged": True},
            }
            await peer.send({"id": 1, "method": "subscriptions/listen", "params": listen})
            ack = await peer.next()
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


async def test_cache_hints_come_from_the_server_and_from_each_resource() -> None:
    server = Server("cached", version="1.0", cache_ttl_ms=5_000)

    @server.tool
    def noop() -> str:
        """Nothing."""
        return ""

    server.add_resource("shared", uri="file:///shared", cache_ttl_ms=60_000, cache_scope="public")
    server.add_resource("own", uri="file:///own")
    with trio.fail_after(5):
        async with connected(server) as peer:
            await peer.send({"id": 1, "method": "server/discover", "params": {"_meta": meta()}})
            discover = await peer.answer_to(1)
            await peer.send({"id": 2, "method": "tools/list", "params": {"_meta": meta()}})
            tools = await peer.answer_to(2)
            reads = []
            for rid, uri in ((3, "file:///shared"), (4, "file:///own")):
                params = {"_meta": meta(), "uri": uri}
                await peer.send({"id": rid, "method": "resources/read", "params": params})
                reads.append(await peer.answer_to(rid))
    hints = [(m["result"]["ttlMs"], m["result"]["cacheScope"]) for m in (discover, tools, *reads)]
    assert hints == [(5_000, "private"), (5_000, "private"), (60_000, "public"), (5_000, "private")]
    for message, kind in zip(
        (discover, tools, *reads),
        ("DiscoverResult", "ListToolsResult", "ReadResourceResult", "ReadResourceResult"),
        strict=True,
    ):
        validate_message(message, REV, kind)
