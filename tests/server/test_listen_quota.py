"""Listen streams are bounded per client, in number and in the bytes of the URIs they subscribe
to, not only per stream (issue 38, item 9); here over a stream transport (one peer)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from test_stateless_requests import connected as stream_session

from mcptrio import Server
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.runtime.transport import Outgoing
from mcptrio.server.listen_quota import DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT, ListenQuota
from mcptrio.transports.memory import MemoryTransport

from schema_validation import validate_message

REV = "2026-07-28"
META = {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {}}


def make_server(**options: Any) -> Server:
    server = Server("listened", version="1.0", **options)

    @server.resource("item://{n}")
    def item(n: str) -> str:
        return n

    return server


class Peer:
    def __init__(self, end: MemoryTransport) -> None:
        self.end = end

    async def listen(self, rid: int, **notifications: Any) -> dict[str, Any]:
        """Ask for a listen stream; its acknowledgement, or the error that refused it."""
        params = {"_meta": META, "notifications": notifications or {"toolsListChanged": True}}
        message = {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
        validate_message(message, REV, "client")
        await self.end.send([Outgoing(json.dumps(message).encode())])
        frame = await self.end.receive()
        assert isinstance(frame, bytes)
        answer: dict[str, Any] = json.loads(frame)
        return answer

    async def cancel(self, rid: int) -> None:
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        message["params"] = {"requestId": rid}  # type: ignore[assignment]
        await self.end.send([Outgoing(json.dumps(message).encode())])


@asynccontextmanager
async def connected(server: Server) -> AsyncIterator[Peer]:
    async with stream_session(server) as raw:
        yield Peer(raw.end)


def acknowledged(answer: dict[str, Any]) -> bool:
    return answer.get("method") == "notifications/subscriptions/acknowledged"


async def test_one_client_holds_at_most_the_default_number_of_listen_streams() -> None:
    server = make_server()
    count = DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT
    with trio.fail_after(10):
        async with connected(server) as peer:
            held = [await peer.listen(rid) for rid in range(count)]
            refused = await peer.listen(count)
    assert all(map(acknowledged, held))
    validate_message(refused, REV, "server")
    assert refused["id"] == count
    assert refused["error"]["code"] == -32600
    assert "max_streams_per_client" in refused["error"]["message"]
    assert refused["error"]["data"] == {"maxListenStreamsPerClient": count}


async def test_a_stream_that_ends_gives_its_place_back() -> None:
    server = make_server(listen_quota=ListenQuota(max_streams_per_client=1))
    with trio.fail_after(10):
        async with connected(server) as peer:
            first = await peer.listen(1)
            refused = await peer.listen(2)
            await peer.cancel(1)
            await trio.testing.wait_all_tasks_blocked()
            again = await peer.listen(3)
            held = server.listen_quota.held("bearer")
    assert acknowledged(first) and acknowledged(again)
    assert refused["error"]["code"] == -32600
    assert held == (1, 0)
    assert server.listen_quota.held("bearer") == (0, 0)


async def test_the_uris_a_clients_listen_streams_subscribe_to_are_bounded_in_bytes() -> None:
    server = make_server(listen_quota=ListenQuota(max_bytes_per_client=1000))
    uris = [f"item://{n}-{'x' * 291}" for n in range(3)]  # 300 bytes each
    with trio.fail_after(10):
        async with connected(server) as peer:
            first = await peer.listen(1, resourceSubscriptions=uris)
            refused = await peer.listen(2, resourceSubscriptions=uris[:1])
            held = server.listen_quota.held("bearer")
    assert acknowledged(first)
    assert refused["error"]["code"] == -32600
    assert "max_bytes_per_client=1000" in refused["error"]["message"]
    assert refused["error"]["data"] == {"maxListenBytesPerClient": 1000}
    assert held == (1, 900)


@pytest.mark.parametrize("options", [{"max_streams_per_client": 0}, {"max_bytes_per_client": -1}])
def test_a_quota_that_allows_nothing_is_refused(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="ListenQuota"):
        ListenQuota(**options)
