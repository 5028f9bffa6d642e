"""The TypeScript SDK v2 client (``@modelcontextprotocol/client`` 2.4.0) against mcptrio in the
stateless era, probing (``auto``) or pinned to 2026-07-28, over stdio and Streamable HTTP.

``interop/ts/stateless_client.mjs`` makes the calls (tools, structured output, a resource, a
prompt, input-required elicitation and sampling answered by its request handlers) and reports
what it saw, including the era it settled on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from client.real_servers import require_interop
from test_sdk_client_stateless import everything_over_http

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "interop" / "node_modules" / ".bin" / "node"
PEER = ROOT / "interop" / "ts" / "stateless_client.mjs"
EVERYTHING = ROOT / "examples" / "everything_server.py"
CLIENT_PACKAGE = ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "client"

require_interop(CLIENT_PACKAGE)


async def run_peer(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = await trio.run_process(
        [str(NODE), str(PEER), *args], capture_stdout=True, capture_stderr=True, env=env
    )
    seen: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen


def check(seen: dict[str, Any]) -> None:
    assert seen["protocolVersion"] == "2026-07-28"
    assert seen["era"] == "modern"
    assert seen["serverName"] == "mcptrio-everything"
    assert "test_input_required_result_sampling" in seen["tools"]
    assert seen["structured"] == {"count": 3, "mean": 2, "stdev": pytest.approx(0.8164965)}
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["promptMessages"] == 1
    assert seen["elicitation"] == "Hello, Alice!"
    assert seen["sampling"] == "The model said: Paris"


@pytest.mark.parametrize("mode", ["auto", "pin"])
async def test_the_typescript_client_speaks_the_stateless_era_over_stdio(mode: str) -> None:
    with trio.fail_after(60):
        check(await run_peer(mode, "stdio", sys.executable, str(EVERYTHING)))


@pytest.mark.parametrize("mode", ["auto", "pin"])
async def test_the_typescript_client_speaks_the_stateless_era_over_http(mode: str) -> None:
    with trio.fail_after(60):
        async with everything_over_http() as url:
            check(await run_peer(mode, url))
