"""open_client's block: errors raised in it come out unchanged, for every kind of target."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.transports.http.legacy_sse_server import LegacySseEndpoint
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.websocket_server import serve_websocket

SERVER = str(Path(__file__).resolve().parent.parent / "examples" / "demo_server.py")


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
