"""Tasks over every way of serving: the task nursery is opened by every serve_* method, and a
task that asks its client for input reaches it over stdio (a server process), HTTP (on the
tasks/result stream or the standalone one) and WebSocket as over memory."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from servers.task_server import make_server

import mcptrio
from mcptrio.client import Handlers, Revisions
from mcptrio.protocol.types import ElicitResult
from mcptrio.runtime.context import RequestContext

REV = Revisions(supported=("2025-11-25",))


async def elicit(ctx: RequestContext, request: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"n": "Ada"})


Serve = Callable[..., Awaitable[None]]


STDIO_SERVER = [sys.executable, str(Path(__file__).parents[1] / "servers" / "task_server.py")]


@pytest.mark.parametrize("way", ["stdio", "http-json", "http-sse", "websocket"])
async def test_a_task_that_asks_for_input_completes_over_each_transport(way: str) -> None:
    server = make_server("tasks-over-transports")
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            target: str | list[str]
            if way == "stdio":
                target = STDIO_SERVER  # the same tool, in a process of its own
            elif way == "websocket":
                target = await nursery.start(server.serve_websocket)
            else:
                base = await nursery.start(
                    lambda task_status: server.serve_http(
                        json_response=way == "http-json", task_status=task_status
                    )
                )
                target = base + "/mcp"
            async with mcptrio.open_client(
                target, revisions=REV, handlers=Handlers(elicitation=elicit)
            ) as client:
                handle = await client.call_tool("greet", as_task=True)
                result = await handle.result()
                assert result.content[0].text == "hello Ada"  # type: ignore[union-attr]
                assert (await handle.status()).status == "completed"
            nursery.cancel_scope.cancel()
