"""The official Python SDK's ``Client`` (mcp 2.3.0) against mcptrio in the stateless era.

The SDK probes with ``server/discover`` (``mode="auto"``) or is pinned to 2026-07-28; either way
it must end up speaking 2026-07-28 with mcptrio, over stdio and Streamable HTTP, for tools,
structured output, a resource, a prompt, completion, an input-required elicitation and
sampling, a listen stream and cancellation. The SDK client runs in its own process (it is
asyncio); ``peers/sdk_stateless_client.py`` does the calls and reports what it saw.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from programs import ROOT, import_program

PEER = str(Path(__file__).parent / "peers" / "sdk_stateless_client.py")
EVERYTHING = ROOT / "examples" / "everything_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@asynccontextmanager
async def everything_over_http() -> AsyncIterator[str]:
    """examples/everything_server.py served over Streamable HTTP; yields its MCP URL."""
    server = import_program("everything_server", EVERYTHING).build_server()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        yield f"{url}/mcp"
        nursery.cancel_scope.cancel()


async def run_peer(*args: str) -> dict[str, Any]:
    result = await trio.run_process(
        [sys.executable, PEER, *args], capture_stdout=True, capture_stderr=True, env=ENV
    )
    seen: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen


def check(seen: dict[str, Any]) -> None:
    assert seen["protocol_version"] == "2026-07-28"
    assert "test_input_required_result_elicitation" in seen["tools"]
    assert seen["structured"] == {"count": 3, "mean": 2.0, "stdev": pytest.approx(0.8164965)}
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["prompt_messages"] == 1
    assert seen["completion"]
    assert seen["elicitation"] == "Hello, Alice!"
    assert seen["sampling"] == "The model said: Paris"
    assert seen["listen_event"] == "ToolsListChanged"
    assert seen["cancelled"] is True
    assert seen["after_cancel"] == "This is a simple text response for testing."


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_the_sdk_client_speaks_the_stateless_era_over_stdio(mode: str) -> None:
    with trio.fail_after(60):
        seen = await run_peer(mode, "stdio", sys.executable, str(EVERYTHING))
    check(seen)
    if mode == "auto":
        # server/discover answered: the SDK knows the server by the identity it announced.
        assert seen["server_name"] == "mcptrio-everything"


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_the_sdk_client_speaks_the_stateless_era_over_http(mode: str) -> None:
    with trio.fail_after(60):
        async with everything_over_http() as url:
            check(await run_peer(mode, url))
