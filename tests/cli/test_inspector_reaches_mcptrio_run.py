"""The MCP Inspector CLI (a real, independent client) reaches a server started with
``mcptrio run``, over stdio and over Streamable HTTP.

The Inspector comes from ``interop/`` (``npm ci --prefix interop``, which ``.ci/run`` does);
without it the tests skip, unless ``MCPTRIO_REQUIRE_INTEROP=1`` makes its absence a failure.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import trio
from cli_runner import EVERYTHING, ROOT, mcptrio_env, served
from client.real_servers import require_interop

INSPECTOR = ROOT / "interop" / "node_modules" / ".bin" / "mcp-inspector"

require_interop(INSPECTOR)


async def inspect(*args: str) -> Any:
    with trio.fail_after(120):
        done = await trio.run_process(
            [str(INSPECTOR), "--cli", *args],
            cwd=ROOT,
            env=mcptrio_env(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
    return json.loads(done.stdout)


async def test_the_inspector_runs_mcptrio_run_over_stdio() -> None:
    command = [sys.executable, "-m", "mcptrio", "run", str(EVERYTHING)]
    tools = await inspect(*command, "--method", "tools/list")
    assert "test_simple_text" in [tool["name"] for tool in tools["tools"]]
    called = await inspect(*command, "--method", "tools/call", "--tool-name", "test_simple_text")
    assert called["content"][0]["text"] == "This is a simple text response for testing."


async def test_the_inspector_reaches_mcptrio_run_over_http() -> None:
    with trio.fail_after(180):
        async with served(EVERYTHING, "--transport", "http", "--port", "0") as url:
            tools = await inspect(url, "--transport", "http", "--method", "tools/list")
            assert "test_simple_text" in [tool["name"] for tool in tools["tools"]]
            read = await inspect(
                url,
                "--transport",
                "http",
                "--method",
                "resources/read",
                "--uri",
                "test://static-text",
            )
            assert read["contents"][0]["text"] == "This is the content of the static text resource."
