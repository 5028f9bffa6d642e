"""Embedding HTTP serving in a caller's nursery: the bound URL comes back from ``start``, and
one call serves several servers under different paths (the multiplexed case)."""

from __future__ import annotations

import trio

import mcptrio
from mcptrio.transports.http.serve import serve_http


def named_server(name: str) -> mcptrio.Server:
    server = mcptrio.Server(name)

    @server.tool()
    def whoami() -> str:
        return name

    return server


async def test_serve_http_in_the_callers_nursery_reports_the_url() -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, named_server("solo"), "127.0.0.1", 0)
            assert url.startswith("http://127.0.0.1:")
            async with mcptrio.open_client(f"{url}/mcp") as client:
                result = await client.call_tool("whoami", {})
            assert result.content[0].text == "solo"  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


async def test_several_servers_share_one_port_under_their_own_paths() -> None:
    servers = {"/weather": named_server("weather"), "/files": named_server("files")}
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, servers)
            for prefix, server in servers.items():
                for endpoint in ("/mcp", "/sse"):
                    async with mcptrio.open_client(f"{url}{prefix}{endpoint}") as client:
                        result = await client.call_tool("whoami", {})
                        assert client.server_info.name == server.info.name
                    assert result.content[0].text == server.info.name  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


async def test_server_serve_http_is_a_one_liner() -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(named_server("method").serve_http)
            async with mcptrio.open_client(f"{url}/mcp") as client:
                assert (await client.call_tool("whoami", {})).content[0].text == "method"  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()
