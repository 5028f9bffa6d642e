"""Two workers sharing one Redis run a marked call once between them: a re-issue that reaches
the other worker waits for the first run there, and learns that the outcome is unknown when the
worker running it died (its lease ran out)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing
from redis_servers import RedisServer

import mcptrio
from mcptrio import Client, Server, open_stores
from mcptrio.protocol.call_key import CALL_KEY
from mcptrio.protocol.errors import InternalError
from mcptrio.protocol.types import CallToolRequest, TextContent
from mcptrio.server.call_once import record_key


def worker(ledger: list[int], release: trio.Event, started: trio.Event | None = None) -> Server:
    server = Server("ledger")

    @server.tool()
    async def charge(amount: int) -> str:
        ledger.append(amount)
        if started is not None:
            started.set()
        await release.wait()
        return f"charged {amount}"

    return server


@asynccontextmanager
async def connected(url: str, prefix: str, server: Server, lease: float) -> AsyncIterator[Client]:
    async with open_stores(url, prefix=prefix, call_lease=lease) as stores:
        server.use_stores(stores)
        async with mcptrio.open_client(server) as client:
            yield client


def charge(key: str) -> CallToolRequest:
    return CallToolRequest(name="charge", arguments={"amount": 5}, meta={CALL_KEY: key})


async def test_a_reissue_on_another_worker_waits_for_the_first_run_and_gets_its_answer(
    redis_server: RedisServer, prefix: str
) -> None:
    ledger: list[int] = []
    release = trio.Event()
    started = trio.Event()
    answers: list[object] = []
    with trio.fail_after(15):
        async with (
            connected(redis_server.url, prefix, worker(ledger, release, started), 1.0) as here,
            connected(redis_server.url, prefix, worker(ledger, release), 1.0) as there,
        ):

            async def call(client: Client) -> None:
                result = await client.request(charge("k"))
                answers.append(result.content[0])

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, here)
                await started.wait()
                nursery.start_soon(call, there)
                # Longer than the lease: the first run's worker keeps it alive.
                await trio.sleep(1.5)
                assert answers == []
                release.set()
    assert answers == [TextContent(text="charged 5")] * 2
    assert ledger == [5]


async def test_a_reissue_after_the_first_runs_worker_died_learns_its_outcome_is_unknown(
    redis_server: RedisServer, prefix: str
) -> None:
    ledger: list[int] = []
    with trio.fail_after(15):
        async with (
            open_stores(redis_server.url, prefix=prefix, call_lease=0.5) as dead,
            connected(redis_server.url, prefix, worker(ledger, trio.Event()), 0.5) as there,
        ):
            # What a worker killed mid-call leaves: a claim, and a lease nobody renews.
            assert dead.call_records is not None
            assert await dead.call_records.claim(record_key("k", None)) is None
            with pytest.raises(InternalError, match="the worker running it stopped") as raised:
                await there.request(charge("k"))
    assert "outcome of tools/call 'charge' is unknown" in str(raised.value)
    assert ledger == []
