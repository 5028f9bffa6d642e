"""Session records on Redis and Valkey: written and read back, claimed by one worker only,
never overwritten or deleted by a worker that lost the session, gone after their TTL."""

from __future__ import annotations

import trio

from mcptrio.stores.redis_calls import RedisClient
from mcptrio.stores.redis_session_records import RedisSessionRecords
from mcptrio.stores.session_records import SessionRecord

RECORD = SessionRecord(b'{"revision":"2025-11-25"}', "w0_a", "alice", "https://auth.example")


async def test_a_saved_record_reads_back_as_it_was_written(redis: RedisClient, prefix: str) -> None:
    records = RedisSessionRecords(redis, prefix=prefix)
    with trio.fail_after(5):
        assert await records.save("w0_a.1", RECORD, 60) is True
        assert await records.load("w0_a.1") == RECORD
        assert await records.load("w0_a.2") is None
        anonymous = SessionRecord(b"{}", "w0_a")
        await records.save("w0_a.3", anonymous, 60)
        assert await records.load("w0_a.3") == anonymous


async def test_of_many_workers_claiming_a_session_at_once_exactly_one_gets_it(
    redis: RedisClient, other_redis: RedisClient, prefix: str
) -> None:
    mine = RedisSessionRecords(redis, prefix=prefix)
    theirs = RedisSessionRecords(other_redis, prefix=prefix)
    won: list[str] = []
    with trio.fail_after(5):
        await mine.save("w0_a.1", RECORD, 60)

        async def claim(records: RedisSessionRecords, name: str) -> None:
            if await records.claim("w0_a.1", "w0_a", name, 60):
                won.append(name)

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(claim, mine if n % 2 else theirs, f"w{n}_b")
        record = await mine.load("w0_a.1")
    assert len(won) == 1
    assert record is not None and record.owner == won[0]
    assert record.state == RECORD.state and record.subject == "alice"


async def test_a_worker_that_lost_a_session_neither_overwrites_nor_deletes_its_record(
    redis: RedisClient, prefix: str
) -> None:
    records = RedisSessionRecords(redis, prefix=prefix)
    with trio.fail_after(5):
        await records.save("w0_a.1", RECORD, 60)
        assert await records.claim("w0_a.1", "w0_a", "w1_b", 60)
        assert await records.save("w0_a.1", RECORD, 60) is False
        await records.forget("w0_a.1", "w0_a")
        kept = await records.load("w0_a.1")
        assert kept is not None and kept.owner == "w1_b"
        # Nor can it claim it back: it is not the owner it names.
        assert not await records.claim("w0_a.1", "w0_a", "w0_a", 60)
        await records.forget("w0_a.1", "w1_b")
        assert await records.load("w0_a.1") is None
        # A record never written cannot be claimed.
        assert not await records.claim("w9_z.1", "w9_z", "w1_b", 60)
        assert await records.load("w9_z.1") is None


async def test_a_record_expires_unless_refreshed(redis: RedisClient, prefix: str) -> None:
    records = RedisSessionRecords(redis, prefix=prefix)
    with trio.fail_after(5):
        await records.save("w0_a.1", RECORD, 0.3)
        await records.save("w0_a.2", RECORD, 0.3)
        await trio.sleep(0.2)
        await records.refresh(["w0_a.1"], 5)
        await trio.sleep(0.3)
        assert await records.load("w0_a.1") == RECORD
        assert await records.load("w0_a.2") is None
