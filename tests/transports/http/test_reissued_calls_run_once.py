"""The 2026-07-28 client re-issues a request whose response stream broke (the spec says it
MUST); the re-issue carries the call's key, and a server with stores answers it with the first
run's answer instead of running the tool again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import trio
from cutting_relay import CuttingRelay

import mcptrio
from mcptrio import Context, Server, open_stores
from mcptrio.client import Revisions
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import TextContent

STATELESS = Revisions(protocol_version="2026-07-28", supported=SUPPORTED)


class Ledger:
    """A tool that reports progress (its answer becomes an SSE stream), records the charge,
    and has the connection cut under it the first time, after which it finishes."""

    def __init__(self) -> None:
        self.entries: list[int] = []
        self.relay: CuttingRelay | None = None
        self.server = Server("ledger")

        @self.server.tool()
        async def charge(amount: int, ctx: Context) -> str:
            await ctx.report_progress(1, 2)
            await trio.sleep(0.1)
            self.entries.append(amount)
            if len(self.entries) == 1 and self.relay is not None:
                self.relay.cut()
            return f"charged {amount}"

    @asynccontextmanager
    async def served(self, *, stores: bool) -> AsyncIterator[str]:
        async with open_stores() as bundle, trio.open_nursery() as nursery:
            if stores:
                self.server.use_stores(bundle)
            url = await nursery.start(self.server.serve_http, "127.0.0.1", 0)
            port = urlsplit(url).port
            assert port is not None
            self.relay = CuttingRelay(port)
            relay_port = await nursery.start(self.relay.serve)
            yield f"http://127.0.0.1:{relay_port}/mcp"
            nursery.cancel_scope.cancel()


async def _charge(url: str) -> list[object]:
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async with mcptrio.open_client(url, revisions=STATELESS) as client:
        result = await client.call_tool("charge", {"amount": 5}, on_progress=on_progress)
    assert progress
    return list(result.content)


async def test_a_reissue_after_a_broken_stream_gets_the_first_runs_answer() -> None:
    ledger = Ledger()
    with trio.fail_after(20):
        async with ledger.served(stores=True) as url:
            content = await _charge(url)
    assert content == [TextContent(text="charged 5")]
    assert ledger.entries == [5]


async def test_without_stores_the_reissue_runs_the_tool_again() -> None:
    # What a client without the key, or a server without stores, gets: the spec's re-issue.
    ledger = Ledger()
    with trio.fail_after(20):
        async with ledger.served(stores=False) as url:
            content = await _charge(url)
    assert content == [TextContent(text="charged 5")]
    assert ledger.entries == [5, 5]
