"""open_client's block, and the client transports' blocks: errors raised in them come out
unchanged, for every kind of target, and closing a transport does not cancel the block using it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.runtime.nurseries import open_unwrapping_nursery
from mcptrio.runtime.transport import Transport
from mcptrio.transports.http.client.legacy_sse import open_legacy_sse_client_transport
from mcptrio.transports.http.client.streamable import open_streamable_http_client_transport
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.endpoints.legacy_sse import LegacySseEndpoint
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.stdio import open_stdio_client_transport
from mcptrio.transports.websocket import open_websocket_client_transport
from mcptrio.transports.websocket_server import serve_websocket

SERVER = str(Path(__file__).resolve().parents[2] / "examples" / "demo_server.py")


class Boom(Exception):
    pass


@pytest.mark.parametrize(
    "target", ["in-memory", "stdio", "streamable-http", "legacy-sse", "websocket"]
)
async def test_an_error_raised_in_the_client_block_propagates(target: str) -> None:
    server = mcptrio.Server("x")
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            where: mcptrio.Server | list[str] | str
            if target == "in-memory":
                where = server
            elif target == "stdio":
                where = [sys.executable, SERVER]
            elif target == "websocket":
                where = await nursery.start(serve_websocket, server)
            else:
                url = await nursery.start(serve_http, server)
                where = f"{url}/mcp" if target == "streamable-http" else f"{url}/sse"
            with pytest.raises(Boom):
                async with mcptrio.open_client(where) as client:
                    await client.ping()
                    raise Boom
            nursery.cancel_scope.cancel()


async def test_a_failing_legacy_post_is_reported_not_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A server announcing an endpoint that does not exist: initialize's POST gets 404.
    monkeypatch.setattr(
        LegacySseEndpoint, "endpoint_uri", lambda self, path, sid: f"/nowhere?session_id={sid}"
    )
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, mcptrio.Server("x"))
            with pytest.raises(mcptrio.McpError, match="404"):
                async with mcptrio.open_client(f"{url}/sse"):
                    pass
            nursery.cancel_scope.cancel()


async def test_legacy_sse_endpoint_is_announced_under_the_mount_point() -> None:
    server = mcptrio.Server("x")
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, {"/mounted": server})
            # The legacy endpoint is announced under the mount point, and works.
            async with mcptrio.open_client(f"{url}/mounted/sse") as client:
                await client.ping()
            nursery.cancel_scope.cancel()


TRANSPORTS = ["streamable-http", "legacy-sse", "http", "websocket", "stdio"]


@asynccontextmanager
async def open_transport(kind: str) -> AsyncIterator[Transport]:
    """A served ``mcptrio.Server`` and a client transport of ``kind`` opened to it directly."""
    server = mcptrio.Server("x")
    # Unwrapping, so that what leaves the block is seen as it left, not in a group.
    async with open_unwrapping_nursery() as nursery:
        opened: AbstractAsyncContextManager[Transport]
        if kind == "stdio":
            opened = open_stdio_client_transport([sys.executable, SERVER])
        elif kind == "websocket":
            opened = open_websocket_client_transport(await nursery.start(serve_websocket, server))
        else:
            url = await nursery.start(serve_http, server)
            if kind == "streamable-http":
                opened = open_streamable_http_client_transport(f"{url}/mcp")
            elif kind == "legacy-sse":
                opened = open_legacy_sse_client_transport(f"{url}/sse")
            else:
                opened = open_http_client_transport(f"{url}/mcp")
        async with opened as transport:
            yield transport
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_error_raised_in_a_transport_block_propagates(kind: str) -> None:
    boom = Boom()
    with trio.fail_after(20), pytest.raises(Boom) as raised:
        async with open_transport(kind):
            raise boom
    assert raised.value is boom


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_error_raised_in_open_client_over_a_transport_propagates(kind: str) -> None:
    boom = Boom()
    with trio.fail_after(20), pytest.raises(Boom) as raised:
        async with open_transport(kind) as transport, mcptrio.open_client(transport) as client:
            await client.ping()
            raise boom
    assert raised.value is boom


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_closing_a_transport_does_not_cancel_the_block_using_it(kind: str) -> None:
    # open_client(transport) closes the transport on its way out, from inside the transport's
    # block: the rest of that block runs on, through checkpoints, and its error comes out.
    boom = Boom()
    checkpoints_passed = 0
    with trio.fail_after(20), pytest.raises(Boom) as raised:
        async with open_transport(kind) as transport:
            async with mcptrio.open_client(transport) as client:
                await client.ping()
            await trio.lowlevel.checkpoint()
            checkpoints_passed += 1
            await transport.aclose()
            await trio.lowlevel.checkpoint()
            checkpoints_passed += 1
            raise boom
    assert raised.value is boom
    assert checkpoints_passed == 2
