"""A call whose connection is cut after the server received it runs once: the client never
sends it again, and fails it with an error that says its outcome is unknown and names it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import pytest
import trio
from cutting_relay import CuttingRelay

import mcptrio
from mcptrio import Server
from mcptrio.client import Revisions
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.transports.http.engine.client_pool import OutcomeUnknown

HANDSHAKE = Revisions(protocol_version="2025-11-25", supported=SUPPORTED)
STATELESS = Revisions(protocol_version="2026-07-28", supported=SUPPORTED)


class Ledger:
    """A server whose ``charge`` tool records each call, and cuts the connection on the first."""

    def __init__(self) -> None:
        self.entries: list[int] = []
        self.relay: CuttingRelay | None = None
        self.server = Server("ledger")

        @self.server.tool()
        async def charge(amount: int) -> str:
            self.entries.append(amount)
            if len(self.entries) == 1 and self.relay is not None:
                self.relay.cut()
            return f"charged {amount}"

    @asynccontextmanager
    async def served(self) -> AsyncIterator[str]:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(self.server.serve_http, "127.0.0.1", 0)
            parts = urlsplit(url)
            assert parts.port is not None
            self.relay = CuttingRelay(parts.port)
            relay_port = await nursery.start(self.relay.serve)
            yield f"http://127.0.0.1:{relay_port}/mcp"
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("revisions", [HANDSHAKE, STATELESS], ids=["handshake", "stateless"])
async def test_a_call_cut_after_the_server_received_it_runs_once_and_its_outcome_is_unknown(
    revisions: Revisions, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = Ledger()
    with trio.fail_after(20):
        async with ledger.served() as url, mcptrio.open_client(url, revisions=revisions) as client:
            # A first exchange leaves a keep-alive connection for the call to reuse.
            assert (await client.list_tools()).tools
            with pytest.raises(OutcomeUnknown) as raised:
                await client.call_tool("charge", {"amount": 5})
            await trio.sleep(0.5)
            # The client and its server carry on.
            assert (await client.call_tool("charge", {"amount": 7})).content
    assert ledger.entries == [5, 7]
    message = str(raised.value)
    assert message.startswith("The outcome of tools/call 'charge' is unknown:")
    assert "not sent again" in message
    assert any(
        r.levelno == logging.WARNING and "tools/call 'charge'" in r.getMessage()
        for r in caplog.records
    )
