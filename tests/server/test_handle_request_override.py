"""A server's sessions call its dispatch directly (one coroutine fewer per request), unless a
subclass overrides ``Server.handle_request``: then every request goes through the override,
answered at once or in an actor.
"""

from __future__ import annotations

from typing import Any

import trio

import mcptrio
from mcptrio.protocol.base import Request, Result
from mcptrio.runtime.context import RequestContext


class CountingServer(mcptrio.Server):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.methods: list[str] = []

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        self.methods.append(request.METHOD)
        return await super().handle_request(rctx, request)


async def test_an_overridden_handle_request_sees_requests_answered_at_once_too() -> None:
    server = CountingServer("counting")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def add_later(a: int, b: int) -> int:
        await trio.lowlevel.checkpoint()
        return a + b

    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content
            assert (await client.call_tool("add_later", {"a": 1, "b": 2})).structured_content
    assert server.methods.count("tools/call") == 2
