"""Concurrent calls over one HTTP client are concurrent at the server, in both eras.

One ``open_client(url)`` and 32 tasks calling a tool that waits for all of them: every call
must be running in the server at the same moment. Nothing in the client may serialise them
(one connection per session, a per-session lock, a single writer), nor in the server's handling
of one handshake-era session, or the calls never all arrive and the tool's gate never opens.
This is the property ``python -m benchmarks.http_client``'s x32 cell relies on.
"""

from __future__ import annotations

import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Revisions
from mcptrio.protocol.types import TextContent

CALLERS = 32
ERAS = {
    "handshake": HANDSHAKE_ERA,
    "stateless": Revisions(protocol_version="2026-07-28", supported=("2026-07-28",)),
}


class Gate:
    """A server whose ``meet`` tool waits until ``expected`` calls of it run at once."""

    def __init__(self, expected: int) -> None:
        self.server = mcptrio.Server("gate")
        self.running = 0
        self.most_at_once = 0
        self.all_in = trio.Event()

        @self.server.tool
        async def meet(n: int) -> int:
            """Waits until every caller is in, then answers ``n``."""
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            if self.running == expected:
                self.all_in.set()
            try:
                await self.all_in.wait()
            finally:
                self.running -= 1
            return n


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_concurrent_calls_over_one_client_all_run_at_the_server_at_once(era: str) -> None:
    gate = Gate(CALLERS)
    answers: list[str] = []

    async def call(client: mcptrio.Client, n: int) -> None:
        result = await client.call_tool("meet", {"n": n})
        content = result.content[0]
        assert isinstance(content, TextContent)
        answers.append(content.text)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(gate.server.serve_http)
            async with mcptrio.open_client(f"{base}/mcp", revisions=ERAS[era]) as client:
                # Twice: the second round runs on the connections the first one left idle.
                for _ in range(2):
                    gate.all_in = trio.Event()
                    gate.most_at_once = 0
                    async with trio.open_nursery() as calls:
                        for n in range(CALLERS):
                            calls.start_soon(call, client, n)
                        with trio.move_on_after(10):
                            await gate.all_in.wait()
                        # Let the calls end either way, so that a failure is the assertion
                        # below and not the test's deadline.
                        gate.all_in.set()
                    assert gate.most_at_once == CALLERS
            nursery.cancel_scope.cancel()
    assert sorted(answers, key=int) == sorted([str(n) for n in range(CALLERS)] * 2, key=int)
