"""The call records keep what the first run of a marked call left, in memory and in Redis alike
(the contract :mod:`mcptrio.server.call_once` relies on)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing
from redis_servers import RedisServer

from mcptrio import open_stores
from mcptrio.stores.call_records import (
    ANSWERED,
    INTERRUPTED,
    LAPSED,
    RUNNING,
    CallRecords,
    MemoryCallRecords,
)


@asynccontextmanager
async def call_records(
    url: str | None, prefix: str, lease: float = 10.0
) -> AsyncIterator[CallRecords]:
    async with open_stores(url, prefix=prefix, call_lease=lease) as stores:
        assert stores.call_records is not None
        yield stores.call_records


async def test_the_first_claim_runs_and_the_others_see_it_running(
    backend: str | None, prefix: str
) -> None:
    with trio.fail_after(10):
        async with call_records(backend, prefix) as records:
            assert await records.claim("k") is None
            assert await records.claim("k") == RUNNING
            assert await records.claim("other") is None


async def test_a_wait_ends_with_the_record_the_run_settled(
    backend: str | None, prefix: str
) -> None:
    seen: list[bytes | None] = []
    with trio.fail_after(10):
        async with call_records(backend, prefix) as records:
            assert await records.claim("k") is None
            async with trio.open_nursery() as nursery:

                async def wait() -> None:
                    seen.append(await records.wait("k"))

                nursery.start_soon(wait)
                await trio.sleep(0.3)
                assert seen == []
                await records.settle("k", ANSWERED + b"{}")
            assert seen == [ANSWERED + b"{}"]
            assert await records.claim("k") == ANSWERED + b"{}"


async def test_a_released_key_is_claimed_again_and_a_waiter_learns_it_is_gone(
    backend: str | None, prefix: str
) -> None:
    gone: list[bytes | None] = []
    with trio.fail_after(10):
        async with call_records(backend, prefix) as records:
            assert await records.claim("k") is None
            async with trio.open_nursery() as nursery:

                async def wait() -> None:
                    gone.append(await records.wait("k"))

                nursery.start_soon(wait)
                await trio.sleep(0.3)
                await records.release("k")
            assert gone == [None]
            assert await records.claim("k") is None


async def test_a_running_record_whose_lease_ran_out_reads_lapsed(
    redis_server: RedisServer, prefix: str
) -> None:
    with trio.fail_after(10):
        async with call_records(redis_server.url, prefix, lease=0.3) as records:
            assert await records.claim("k") is None
            await trio.sleep(records.lease * 2)
            # Lapsed is never claimed over: the call is not run again.
            assert await records.claim("k") == LAPSED
            assert await records.wait("k") == LAPSED


async def test_a_renewed_lease_keeps_a_long_run_running(
    redis_server: RedisServer, prefix: str
) -> None:
    with trio.fail_after(10):
        async with call_records(redis_server.url, prefix, lease=0.3) as records:
            assert await records.claim("k") is None
            for _ in range(4):
                await trio.sleep(0.1)
                await records.renew("k")
            assert await records.claim("k") == RUNNING
            await records.settle("k", INTERRUPTED)
            await trio.sleep(0.4)
            assert await records.claim("k") == INTERRUPTED


async def test_memory_records_are_forgotten_after_their_retention_and_bounded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    records = MemoryCallRecords(retention=60, max_records=2)
    for key in ("a", "b", "c"):
        assert await records.claim(key) is None
        await records.settle(key, ANSWERED + key.encode())
    assert len(records) == 2
    assert await records.wait("a") is None
    assert await records.wait("c") == ANSWERED + b"c"
    await trio.sleep(61)
    assert await records.claim("c") is None


def test_memory_records_refuse_nonsense_bounds() -> None:
    with pytest.raises(ValueError, match="positive"):
        MemoryCallRecords(retention=0)
