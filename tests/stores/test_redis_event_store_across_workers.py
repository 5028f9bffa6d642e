"""One session's SSE events in Redis, written and read by two workers (two clients, two store
instances): ids stay unique and ordered, a stream resumes from either, and a session's events
go once its TTL has passed since its last event."""

from __future__ import annotations

import pytest
import trio

from mcptrio.stores.event_store import UnknownEventId, parse_event_id
from mcptrio.stores.redis_calls import RedisClient
from mcptrio.stores.redis_event_store import RedisEventStore


async def test_two_workers_storing_on_one_stream_get_unique_ordered_ids(
    redis: RedisClient, other_redis: RedisClient, prefix: str
) -> None:
    one = RedisEventStore(redis, prefix=prefix)
    two = RedisEventStore(other_redis, prefix=prefix)
    ids: list[str] = []

    async def store(store: RedisEventStore, name: str) -> None:
        for i in range(50):
            ids.append(await store.store("s", "7", f"{name}{i}".encode()))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store, one, "a")
            nursery.start_soon(store, two, "b")
        replay = await two.replay_after("s", "7-0")
    assert sorted(parse_event_id(i)[1] for i in ids) == list(range(1, 101))
    assert [event_id for event_id, _ in replay.events] == [f"7-{n}" for n in range(1, 101)]
    # Each worker's own messages stay in the order it stored them.
    from_a = [m for _, m in replay.events if m.startswith(b"a")]
    assert from_a == [f"a{i}".encode() for i in range(50)]


async def test_a_stream_stored_on_one_worker_resumes_on_another(
    redis: RedisClient, other_redis: RedisClient, prefix: str
) -> None:
    owner = RedisEventStore(redis, prefix=prefix)
    other = RedisEventStore(other_redis, prefix=prefix)
    with trio.fail_after(5):
        first = await owner.store("s", "1", b"hello")
        await owner.store("s", "1", b"world")
        replay = await other.replay_after("s", first)
    assert replay.events == [("1-2", b"world")]


async def test_a_session_s_events_expire_after_its_ttl(redis: RedisClient, prefix: str) -> None:
    store = RedisEventStore(redis, prefix=prefix, ttl=0.3)
    with trio.fail_after(5):
        await store.store("s", "1", b"a")
        await trio.sleep(0.2)
        await store.store("s", "1", b"b")  # activity pushes the expiry back
        await trio.sleep(0.2)
        assert len((await store.replay_after("s", "1-0")).events) == 2
        await trio.sleep(0.4)
        with pytest.raises(UnknownEventId):
            await store.replay_after("s", "1-0")
        assert await store.event_count("s") == 0
