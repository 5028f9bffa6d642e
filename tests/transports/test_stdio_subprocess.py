"""A real client and a real server process talking MCP over stdio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.protocol.types import TextContent

ROOT = Path(__file__).resolve().parents[2]
DEMO = [sys.executable, str(ROOT / "examples" / "demo_server.py")]
FRAGILE = [sys.executable, str(ROOT / "tests" / "servers" / "fragile_server.py")]


async def test_stdio_client_lists_and_calls_tools_of_a_real_server_process() -> None:
    progress: list[float] = []
    with trio.fail_after(20):
        async with mcptrio.open_client(DEMO) as client:
            assert client.server_info.name == "demo"
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["add", "shout", "countdown"]
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content == [TextContent(text="5")]
            result = await client.call_tool("shout", {"text": "hi", "times": 2})
            assert result.content == [TextContent(text="HI HI")]
            result = await client.call_tool(
                "countdown",
                {"start": 3, "pause": 0},
                on_progress=lambda p, t, m: progress.append(p),
            )
            assert result.content == [TextContent(text="liftoff")]
    assert progress == [1, 2, 3]


async def test_stdout_carries_only_protocol_messages_and_stderr_reaches_the_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(20), caplog.at_level(logging.INFO, logger="mcptrio.stdio.server_stderr"):
        async with mcptrio.open_client(FRAGILE) as client:
            for i in range(3):
                result = await client.call_tool("chatty", {"text": f"hello {i}"})
                assert result.content == [TextContent(text=f"hello {i}")]
            await client.ping()
    assert "a line for stderr" in caplog.text
    assert "this print must not reach the protocol stream" in caplog.text


async def test_server_dying_mid_call_fails_pending_calls_promptly() -> None:
    with trio.fail_after(20):
        async with mcptrio.open_client(FRAGILE) as client:
            with trio.fail_after(5):
                async with trio.open_nursery() as nursery:
                    failures: list[BaseException] = []

                    async def call_hang() -> None:
                        try:
                            await client.call_tool("hang")
                        except mcptrio.ConnectionClosed as exc:
                            failures.append(exc)

                    for _ in range(3):
                        nursery.start_soon(call_hang)
                    with pytest.raises(mcptrio.ConnectionClosed):
                        await client.call_tool("die")
            assert len(failures) == 3
            with pytest.raises(mcptrio.ConnectionClosed):
                await client.ping()


async def test_cancelled_call_over_stdio_leaves_the_server_usable() -> None:
    with trio.fail_after(20):
        async with mcptrio.open_client(FRAGILE) as client:
            with trio.move_on_after(0.1):
                await client.call_tool("hang")
            result = await client.call_tool("chatty", {"text": "still here"})
            assert result.content == [TextContent(text="still here")]
