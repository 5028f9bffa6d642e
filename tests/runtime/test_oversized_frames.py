"""A frame over the receiver's size limit is dropped unread, but how it began says whose it was:
the call it answered fails at once, and a request is refused with its id, so neither side waits
for an answer that will never come (in both eras, in memory and over stdio)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.errors import INVALID_REQUEST, McpError, TransportError
from mcptrio.protocol.types import TextContent
from mcptrio.runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from mcptrio.transports.memory import memory_transport_pair
from mcptrio.transports.stdio import StdioTransport

LIMIT = 4096
BIG = "x" * (2 * LIMIT)
ERAS = [pytest.param(HANDSHAKE_ERA, id="handshake-era"), pytest.param(None, id="stateless-era")]


def make_server() -> mcptrio.Server:
    server = mcptrio.Server("oversized")

    @server.tool()
    def big() -> str:
        return BIG

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def memory_pair(client_limit: int, server_limit: int) -> tuple[Transport, Transport]:
    # Not carrying results: a carried result is the application's own value, never limited.
    client_end, server_end = memory_transport_pair()
    client_end.max_frame_size = client_limit
    server_end.max_frame_size = server_limit
    return client_end, server_end


def stdio_pair(client_limit: int, server_limit: int) -> tuple[Transport, Transport]:
    client_stream, server_stream = trio.testing.memory_stream_pair()
    return (
        StdioTransport(client_stream, client_stream, max_frame_size=client_limit),
        StdioTransport(server_stream, server_stream, max_frame_size=server_limit),
    )


PAIRS = [pytest.param(memory_pair, id="memory"), pytest.param(stdio_pair, id="stdio")]
MakePair = Callable[[int, int], tuple[Transport, Transport]]


@asynccontextmanager
async def connected(
    make_pair: MakePair, client_limit: int, server_limit: int, revisions: Revisions | None
) -> AsyncIterator[mcptrio.Client]:
    client_end, server_end = make_pair(client_limit, server_limit)
    options: dict[str, Any] = {} if revisions is None else {"revisions": revisions}
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server().serve_session, server_end)
        # No request timeout: a call left waiting fails the test at its deadline.
        async with mcptrio.open_client(client_end, **options) as client:
            yield client
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("revisions", ERAS)
@pytest.mark.parametrize("make_pair", PAIRS)
async def test_a_call_whose_answer_is_over_the_limit_fails_at_once(
    make_pair: MakePair, revisions: Revisions | None
) -> None:
    with trio.fail_after(10):
        async with connected(make_pair, LIMIT, DEFAULT_MAX_FRAME_SIZE, revisions) as client:
            with pytest.raises(TransportError, match=f"exceeds the size limit of {LIMIT} bytes"):
                await client.call_tool("big")
            # Nothing else was lost: the session goes on.
            assert (await client.call_tool("echo", {"text": "after"})).content == [
                TextContent(text="after")
            ]


@pytest.mark.parametrize("revisions", ERAS)
@pytest.mark.parametrize("make_pair", PAIRS)
async def test_a_request_over_the_peers_limit_is_refused_with_its_id(
    make_pair: MakePair, revisions: Revisions | None
) -> None:
    with trio.fail_after(10):
        async with connected(make_pair, DEFAULT_MAX_FRAME_SIZE, LIMIT, revisions) as client:
            with pytest.raises(McpError, match=f"size limit of {LIMIT} bytes") as refused:
                await client.call_tool("echo", {"text": BIG})
            assert refused.value.code == INVALID_REQUEST
            assert (await client.call_tool("echo", {"text": "after"})).content == [
                TextContent(text="after")
            ]
