"""examples/protected_server.py runs as its docstring says, and a user can log in to it: the
official SDK's OAuth client, through the example's login form, calls its tools (and steps up
for the one that needs ``admin``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from oauth_servers import IO_LIMIT, HeadlessBrowser, MemoryStorage, oauth_provider

pytest.importorskip("mcp")

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]


async def read_urls(stream: trio.abc.ReceiveStream) -> tuple[str, str]:
    seen = b""
    while seen.count(b"\n") < 2:
        chunk = await stream.receive_some()
        assert chunk, f"the example ended early: {seen!r}"
        seen += chunk
    first, second = seen.decode().splitlines()[:2]
    assert first.startswith("authorization server at http://127.0.0.1:")
    assert second.startswith("protected MCP server at http://127.0.0.1:")
    return first.rsplit(" ", 1)[1], second.rsplit(" ", 1)[1]


async def test_a_user_logs_in_to_the_example_and_calls_its_tools() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "examples/protected_server.py", "--port", "0", "--auth-port", "0"]
    with trio.fail_after(IO_LIMIT):
        process = await trio.lowlevel.open_process(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE
        )
        try:
            assert process.stdout is not None
            issuer, url = await read_urls(process.stdout)
            browser = HeadlessBrowser(login=("ann", "secret"))
            auth = oauth_provider(url, browser, MemoryStorage())
            async with (
                httpx2.AsyncClient(auth=auth) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                me = await session.call_tool("whoami", {})
                assert me.content[0].text == "ann (scopes: mcp offline_access)"  # type: ignore[union-attr]
                rotated = await session.call_tool("rotate_keys", {})
                assert rotated.content[0].text == "keys rotated"  # type: ignore[union-attr]
            assert len(browser.authorization_urls) == 2
            assert all(u.startswith(issuer + "/authorize?") for u in browser.authorization_urls)
        finally:
            process.kill()
            await process.wait()
