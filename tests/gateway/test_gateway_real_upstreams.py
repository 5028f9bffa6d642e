"""The gateway in front of real servers, used by real clients.

Upstreams: ``@modelcontextprotocol/server-everything`` over stdio (namespace ``everything``) and
an official-SDK server over stdio (tests/servers/sdk_gateway_upstream.py, namespace ``sdk``).
Clients, over Streamable HTTP: the official Python SDK's ``Client`` (a subprocess,
peers/sdk_gateway_client.py), the MCP Inspector CLI, and mcptrio's own client.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from client.real_servers import (
    EVERYTHING_SERVER,
    LOCALHOST_ONLY,
    NODE_BIN,
    ROOT,
    node,
    node_env,
    require_interop,
    require_module,
)
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import NotificationCallbacks, stdio
from mcptrio.gateway import Backoff, Gateway, Upstream
from mcptrio.protocol.types import TextContent

require_interop(EVERYTHING_SERVER, LOCALHOST_ONLY)
require_module("mcp")

SDK_UPSTREAM = ROOT / "tests" / "servers" / "sdk_gateway_upstream.py"
SDK_CLIENT = Path(__file__).parent / "peers" / "sdk_gateway_client.py"
INSPECTOR = NODE_BIN / "mcp-inspector"


@asynccontextmanager
async def serving_gateway(marks: Path) -> AsyncIterator[tuple[Gateway, str]]:
    """A gateway over both upstreams, served over Streamable HTTP; yields it and its URL."""
    gateway = Gateway(
        upstreams=[
            Upstream(
                name="everything",
                target=stdio([node(), EVERYTHING_SERVER, "stdio"], env=node_env()),
            ),
            Upstream(
                name="sdk",
                target=stdio(
                    [sys.executable, SDK_UPSTREAM], env={**os.environ, "MARKS": str(marks)}
                ),
            ),
        ],
        reconnect=Backoff(initial=0.2, maximum=1.0),
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(gateway.serve_upstreams)
        assert {name: c.state for name, c in gateway.upstreams.items()} == {
            "everything": "up",
            "sdk": "up",
        }
        base = await nursery.start(gateway.serve_http)
        yield gateway, f"{base}/mcp"
        nursery.cancel_scope.cancel()


async def sdk_client(mode: str, url: str) -> dict[str, Any]:
    done = await trio.run_process(
        [sys.executable, str(SDK_CLIENT), mode, url],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def marks_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def wait_for(predicate: Any, timeout: float = 10) -> None:
    with trio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110
            await trio.sleep(0.02)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_sdk_client_uses_both_upstreams_through_the_gateway(
    mode: str, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    with trio.fail_after(60):
        async with serving_gateway(marks) as (_gateway, url):
            seen = await sdk_client(mode, url)
            await wait_for(lambda: "cancelled slow" in marks_of(marks))
    assert {"everything_echo", "everything_get-sum", "sdk_add", "sdk_slow"} <= set(seen["tools"])
    assert seen["echo"] == "Echo: through"
    assert seen["add"] == "42"
    assert seen["progress"] == [1, 2, 3]
    assert seen["read"] == "buy milk"
    assert seen["prompt"] == "What's weather in Lyon?"
    assert seen["slow"] != "finished"
    # A stateless-era client ("auto") is asked in an input-required result, and its answer goes
    # to the handshake-era upstream's waiting request (a parked call, mcptrio/gateway/parked.py).
    assert seen["protocol_version"] == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert "Ada Lovelace" in seen["elicitation"]


def inspect(url: str, *args: str) -> Any:
    import subprocess

    completed = subprocess.run(
        [str(INSPECTOR), "--cli", url, "--transport", "http", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=node_env(),
    )
    assert completed.returncode == 0, completed.stderr + completed.stdout
    return json.loads(completed.stdout)


@pytest.mark.skipif(not INSPECTOR.exists(), reason="the MCP Inspector is not installed")
async def test_the_inspector_cli_uses_both_upstreams_through_the_gateway(tmp_path: Path) -> None:
    with trio.fail_after(120):
        async with serving_gateway(tmp_path / "marks") as (_gateway, url):

            async def run(*args: str) -> Any:
                return await trio.to_thread.run_sync(lambda: inspect(url, *args))

            tools = {t["name"] for t in (await run("--method", "tools/list"))["tools"]}
            assert {"everything_echo", "sdk_add"} <= tools
            echo = await run(
                "--method",
                "tools/call",
                "--tool-name",
                "everything_echo",
                "--tool-arg",
                "message=hi",
            )
            assert echo["content"][0]["text"] == "Echo: hi"
            added = await run(
                "--method", "tools/call", "--tool-name", "sdk_add", "--tool-arg", "a=1", "b=2"
            )
            assert added["content"][0]["text"] == "3"
            read = await run("--method", "resources/read", "--uri", "notes://today")
            assert read["contents"][0]["text"] == "buy milk"
            prompt = await run(
                "--method",
                "prompts/get",
                "--prompt-name",
                "sdk_summarize",
                "--prompt-args",
                "text=x",
            )
            assert prompt["messages"][0]["content"]["text"] == "Summarize: x"


async def test_killing_an_upstream_isolates_it_until_it_is_back(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    changes: list[str] = []
    with trio.fail_after(60):
        async with (
            serving_gateway(marks) as (gateway, url),
            mcptrio.open_client(
                url,
                revisions=HANDSHAKE_ERA,
                notifications=NotificationCallbacks(on_list_changed=changes.append),
            ) as client,
        ):
            assert (await client.call_tool("sdk_add", {"a": 1, "b": 1})).content[0].text == "2"
            (pid,) = [int(line.split()[1]) for line in marks_of(marks) if line.startswith("pid")]
            os.kill(pid, signal.SIGKILL)
            killed = trio.current_time()
            # Within a second: a clear tool error for its tools, the others carry on.
            while True:
                result = await client.call_tool("sdk_add", {"a": 1, "b": 1})
                if result.is_error:
                    break
                await trio.sleep(0.02)
            assert trio.current_time() - killed < 1.0
            (block,) = result.content
            assert isinstance(block, TextContent)
            assert "upstream server 'sdk' is unavailable" in block.text
            echo = await client.call_tool("everything_echo", {"message": "still here"})
            assert echo.content[0].text == "Echo: still here"
            await wait_for(lambda: changes.count("tools") >= 1)
            # Restarted by the gateway (with backoff): its tools come back. The restart is a
            # process start and an import of the SDK, which a loaded machine takes seconds for.
            await wait_for(lambda: gateway.upstreams["sdk"].connections == 2, timeout=30)
            await wait_for(lambda: changes.count("tools") >= 2)
            names = {t.name async for t in client.iter_tools()}
            assert "sdk_add" in names
            assert (await client.call_tool("sdk_add", {"a": 2, "b": 2})).content[0].text == "4"
