"""The official Python SDK client (``mcp``) against mcptrio: Streamable HTTP and legacy SSE.

The SDK runs on anyio, which runs on trio, so its client shares the test's event loop.
"""

from __future__ import annotations

import pytest
import trio
from test_streamable_http import serve, wait_until

import mcptrio
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.app import McpHttpApp

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client


def interop_server() -> mcptrio.Server:
    server = mcptrio.Server("interop")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def count_to(n: int, ctx: Context) -> str:
        """Report progress up to ``n``."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
        return f"counted to {n}"

    return server


async def exercise(session: ClientSession) -> None:
    await session.initialize()
    tools = await session.list_tools()
    assert sorted(t.name for t in tools.tools) == ["add", "count_to"]
    result = await session.call_tool("add", {"a": 20, "b": 22})
    assert not result.is_error
    assert result.structured_content == {"result": 42}
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    counted = await session.call_tool("count_to", {"n": 3}, progress_callback=on_progress)
    assert counted.content[0].text == "counted to 3"  # type: ignore[union-attr]
    assert progress == [1, 2, 3]


@pytest.mark.parametrize("json_response", [True, False])
async def test_the_sdk_client_works_over_streamable_http(
    front_end: str, json_response: bool
) -> None:
    app = McpHttpApp(interop_server(), json_response=json_response)
    with trio.fail_after(20):
        async with serve(front_end, app) as url:
            async with (
                streamable_http_client(url + "/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await exercise(session)
                assert app.session_count == 1
            # The SDK deletes its session on the way out.
            await wait_until(lambda: app.session_count == 0)


async def test_the_sdk_client_works_over_legacy_sse(front_end: str) -> None:
    with trio.fail_after(20):
        async with (
            serve(front_end, McpHttpApp(interop_server())) as url,
            sse_client(url + "/sse") as (read, write),
            ClientSession(read, write) as session,
        ):
            await exercise(session)


async def test_the_sdk_client_works_with_a_stateless_server(front_end: str) -> None:
    with trio.fail_after(20):
        async with (
            serve(front_end, McpHttpApp(interop_server(), stateless=True)) as url,
            streamable_http_client(url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"result": 3}
