"""Every event store keeps the same contract: ids per stream, replay after an id, what an
eviction cost, forgetting a session. Run against the in-memory store and the Redis one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import trio

from mcptrio.stores.event_store import EventStore, InMemoryEventStore, UnknownEventId
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_event_store import RedisEventStore

MakeStore = Callable[..., EventStore]


@pytest.fixture
async def make_store(backend: str | None, prefix: str) -> AsyncIterator[MakeStore]:
    if backend is None:
        yield lambda **options: InMemoryEventStore(**options)
        return
    async with open_redis(backend) as redis:
        yield lambda **options: RedisEventStore(redis, prefix=prefix, **options)


async def count(store: EventStore, session_id: str) -> int:
    held: Any = store.event_count(session_id)  # type: ignore[attr-defined]
    return int(await held if not isinstance(held, int) else held)


async def test_ids_count_from_one_within_each_stream(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        ids = [await store.store("s", stream, b"m") for stream in ("1", "2", "1", "1", "2")]
    assert ids == ["1-1", "2-1", "1-2", "1-3", "2-2"]


async def test_a_replay_gives_the_rest_of_that_stream_only(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        for i in range(4):
            await store.store("s", "1", f"a{i}".encode())
            await store.store("s", "2", f"b{i}".encode())
        replay = await store.replay_after("s", "1-2")
        assert replay.stream_id == "1"
        assert replay.events == [("1-3", b"a2"), ("1-4", b"a3")]
        assert replay.missed == 0
        assert (await store.replay_after("s", "2-4")).events == []


async def test_unknown_ids_are_refused(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.store("s", "1", b"x")
        for bad in ("1-2", "9-1", "nonsense", "1-x"):
            with pytest.raises(UnknownEventId):
                await store.replay_after("s", bad)
        with pytest.raises(UnknownEventId):
            await store.replay_after("other-session", "1-1")


async def test_a_session_keeps_its_newest_events_and_a_replay_says_what_it_missed(
    make_store: MakeStore,
) -> None:
    store = make_store(max_events_per_session=3)
    with trio.fail_after(5):
        for i in range(3):
            await store.store("s", "1", f"a{i}".encode())
        await store.store("s", "2", b"b0")
        await store.store("s", "2", b"b1")
        assert await count(store, "s") == 3
        replay = await store.replay_after("s", "1-1")
        assert replay.events == [("1-3", b"a2")]
        assert replay.missed == 1
        await store.store("s", "2", b"b2")
        # Stream 1 is wholly evicted: its ids are still known, and what was missed is said.
        gone = await store.replay_after("s", "1-1")
        assert (gone.events, gone.missed) == ([], 2)
        assert await store.store("s", "1", b"a3") == "1-4"


async def test_a_forgotten_session_replays_nothing(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.store("s", "1", b"x")
        await store.store("t", "1", b"y")
        await store.forget_session("s")
        with pytest.raises(UnknownEventId):
            await store.replay_after("s", "1-1")
        assert await count(store, "s") == 0
        assert await count(store, "t") == 1
