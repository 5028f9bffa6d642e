"""Every task store keeps the same contract: atomic transitions, limits per owner, bounds with
eviction of finished records, expiry, pages, wake-ups. Run against memory and Redis; then what
the in-memory store alone adds (JSON round trip, eviction under a long run)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import pytest
import trio
import trio.testing
from task_records import working_record

from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_task_store import RedisTaskStore
from mcptrio.stores.task_store import (
    InvalidTaskCursor,
    MemoryTaskStore,
    TaskLimitReached,
    TaskRecord,
    TaskStore,
    TaskStoreFull,
)

MakeStore = Callable[..., TaskStore]


@pytest.fixture
async def make_store(backend: str | None, prefix: str) -> AsyncIterator[MakeStore]:
    if backend is None:
        yield lambda **options: MemoryTaskStore(**options)
        return
    async with open_redis(backend) as redis, trio.open_nursery() as nursery:
        stores: list[RedisTaskStore] = []

        def make(**options: Any) -> TaskStore:
            store = RedisTaskStore(redis, prefix=prefix, **options)
            stores.append(store)
            nursery.start_soon(store.run)
            return store

        yield make
        nursery.cancel_scope.cancel()


def record(task_id: str, owner: str = "session:a", ttl_ms: int | None = 10_000) -> TaskRecord:
    return working_record(task_id, owner, ttl_ms, poll_interval_ms=500)


async def test_a_record_reads_back_as_written_and_counts_its_writes(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        created = await store.create(record("t1"))
        assert await store.get("t1") == created
        done = await store.transition("t1", "completed", status_message="ok", result=b'{"a":1}')
        assert done is not None
        assert await store.get("t1") == done
    assert (created.version, done.version) == (1, 2)
    assert (done.status, done.status_message, done.result) == ("completed", "ok", b'{"a":1}')
    assert done.created_at == created.created_at and done.poll_interval_ms == 500
    assert await store.get("nope") is None


async def test_a_terminal_record_never_changes_status_again(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.create(record("t1"))
        await store.transition("t1", "cancelled", status_message="stop")
        after = await store.transition("t1", "completed", result=b"{}")
    assert after is not None
    assert (after.status, after.result, after.version) == ("cancelled", None, 2)


async def test_an_owner_past_its_unfinished_limit_is_refused_until_one_finishes(
    make_store: MakeStore,
) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.create(record("t1"), max_unfinished_per_owner=2)
        await store.create(record("t2"), max_unfinished_per_owner=2)
        with pytest.raises(TaskLimitReached):
            await store.create(record("t3"), max_unfinished_per_owner=2)
        await store.create(record("o1", owner="session:b"), max_unfinished_per_owner=2)
        await store.transition("t1", "completed", result=b"{}")
        await store.create(record("t3"), max_unfinished_per_owner=2)


async def test_a_full_store_evicts_finished_records_first_and_refuses_when_none_are_left(
    make_store: MakeStore,
) -> None:
    store = make_store(max_tasks=2)
    with trio.fail_after(5):
        await store.create(record("t1"))
        await store.transition("t1", "completed", result=b"{}")
        await store.create(record("t2"))
        await store.create(record("t3"))
        assert await store.get("t1") is None
        with pytest.raises(TaskStoreFull):
            await store.create(record("t4"))


async def test_an_outcome_bigger_than_the_byte_bound_is_refused(make_store: MakeStore) -> None:
    store = make_store(max_bytes=100)
    with trio.fail_after(5):
        await store.create(record("t1"))
        with pytest.raises(TaskStoreFull):
            await store.transition("t1", "completed", result=b"x" * 101)
        done = await store.transition("t1", "completed", result=b"x" * 100)
    assert done is not None and done.result == b"x" * 100


async def test_finished_records_are_evicted_nearest_expiry_first(make_store: MakeStore) -> None:
    store = make_store(max_tasks=10)
    with trio.fail_after(10):
        for i in range(30):
            await store.create(record(f"t{i}", ttl_ms=None if i == 0 else 10_000 + i * 10))
            await store.transition(f"t{i}", "completed", result=b"{}")
        assert await store.get("t0") is not None
        assert await store.get("t20") is None and await store.get("t21") is not None


async def test_records_expire_after_their_ttl(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.create(record("t1", ttl_ms=200))
        await store.create(record("t2", ttl_ms=None))
        assert await store.get("t1") is not None
        await trio.sleep(0.3)
        assert await store.get("t1") is None
        assert await store.get("t2") is not None
        assert await store.transition("t1", "completed") is None
        await store.purge_expired()
        page = await store.list("session:a", None, 10)
    assert [r.task_id for r in page.records] == ["t2"]


async def test_listing_pages_an_owners_tasks_oldest_first(make_store: MakeStore) -> None:
    store = make_store()
    with trio.fail_after(5):
        for i in range(5):
            await store.create(record(f"t{i}"))
        await store.create(record("other", owner="session:b"))
        first = await store.list("session:a", None, 2)
        assert [r.task_id for r in first.records] == ["t0", "t1"]
        assert first.next_cursor is not None
        second = await store.list("session:a", first.next_cursor, 2)
        third = await store.list("session:a", second.next_cursor, 2)
        assert [r.task_id for r in second.records + third.records] == ["t2", "t3", "t4"]
        assert third.next_cursor is None
        with pytest.raises(InvalidTaskCursor):
            await store.list("session:b", first.next_cursor, 2)
        with pytest.raises(InvalidTaskCursor):
            await store.list("session:a", "not a cursor!", 2)


async def test_a_waiter_wakes_on_each_change_and_when_the_record_goes(
    make_store: MakeStore,
) -> None:
    # A long poll interval: only the change notifications can wake the waiter in time.
    store = make_store(
        **({} if isinstance(make_store(), MemoryTaskStore) else {"poll_interval": 60})
    )
    created = await store.create(record("t1"))
    seen: list[str | None] = []

    async def wait() -> None:
        version = created.version
        while True:
            current = await store.wait_for_change("t1", version)
            seen.append(None if current is None else current.status)
            if current is None:
                return
            version = current.version

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait)
            for status in ("input_required", "completed", None):
                await trio.sleep(0.05)
                if status is None:
                    await store.delete("t1")
                else:
                    await store.transition("t1", status, result=b"{}")  # type: ignore[arg-type]
    assert seen == ["input_required", "completed", None]


async def test_input_requests_and_responses_are_kept_until_the_next_transition(
    make_store: MakeStore,
) -> None:
    store = make_store()
    with trio.fail_after(5):
        await store.create(record("t1"))
        asking = await store.transition("t1", "input_required", input_requests=b'{"a":{}}')
        assert asking is not None and asking.input_requests == b'{"a":{}}'
        answered = await store.transition(
            "t1", "input_required", input_requests=b'{"a":{}}', input_responses=b'{"a":1}'
        )
        assert answered is not None and answered.input_responses == b'{"a":1}'
        working = await store.transition("t1", "working")
    assert working is not None and working.input_requests is None


# ---------------------------------------------------------------- the in-memory store alone


async def test_records_are_plain_values_that_round_trip_through_json() -> None:
    store = MemoryTaskStore()
    created = await store.create(record("t1"))
    done = await store.transition("t1", "completed", result=b'{"content":[]}')
    assert done is not None
    again = msgspec.json.decode(msgspec.json.encode(done), type=TaskRecord)
    assert again == done
    assert created.version == 1 and done.version == 2


async def test_a_full_store_keeps_taking_tasks_by_evicting_the_finished_nearest_expiry() -> None:
    store = MemoryTaskStore(max_tasks=100)
    for i in range(300):
        await store.create(record(f"t{i}", ttl_ms=None if i == 0 else 10_000 + i))
        await store.transition(f"t{i}", "completed", result=b"{}")
    assert len(store) == 100
    # The unlimited one goes last; the others went nearest expiry first.
    assert await store.get("t0") is not None
    assert await store.get("t200") is None and await store.get("t201") is not None
    assert len(store._finished) <= 2 * 100 + 64
