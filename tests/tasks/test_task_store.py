"""The in-memory task store: limits, transitions, expiry, pagination, wake-ups."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcptrio.stores.task_store import (
    InvalidTaskCursor,
    MemoryTaskStore,
    TaskLimitReached,
    TaskRecord,
    TaskStoreFull,
    now_iso,
)


def record(task_id: str, owner: str = "session:a", ttl_ms: int | None = 10_000) -> TaskRecord:
    now = now_iso()
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        method="tools/call",
        status="working",
        created_at=now,
        last_updated_at=now,
        ttl_ms=ttl_ms,
    )


async def test_records_are_plain_values_that_round_trip_through_json() -> None:
    import msgspec

    store = MemoryTaskStore()
    created = await store.create(record("t1"))
    done = await store.transition("t1", "completed", result=b'{"content":[]}')
    assert done is not None
    again = msgspec.json.decode(msgspec.json.encode(done), type=TaskRecord)
    assert again == done
    assert created.version == 1 and done.version == 2


async def test_a_terminal_record_never_changes_status_again() -> None:
    store = MemoryTaskStore()
    await store.create(record("t1"))
    await store.transition("t1", "cancelled", status_message="stop")
    after = await store.transition("t1", "completed", result=b"{}")
    assert after is not None
    assert after.status == "cancelled" and after.result is None


async def test_an_owner_past_its_unfinished_limit_is_refused_until_one_finishes() -> None:
    store = MemoryTaskStore()
    await store.create(record("t1"), max_unfinished_per_owner=2)
    await store.create(record("t2"), max_unfinished_per_owner=2)
    with pytest.raises(TaskLimitReached):
        await store.create(record("t3"), max_unfinished_per_owner=2)
    # Another owner is not affected.
    await store.create(record("o1", owner="session:b"), max_unfinished_per_owner=2)
    await store.transition("t1", "completed", result=b"{}")
    await store.create(record("t3"), max_unfinished_per_owner=2)


async def test_a_full_store_evicts_finished_records_first_and_refuses_when_none_are_left() -> None:
    store = MemoryTaskStore(max_tasks=2)
    await store.create(record("t1"))
    await store.transition("t1", "completed", result=b"{}")
    await store.create(record("t2"))
    await store.create(record("t3"))  # evicts t1, the finished one
    assert await store.get("t1") is None
    with pytest.raises(TaskStoreFull):
        await store.create(record("t4"))


async def test_an_outcome_bigger_than_the_byte_bound_is_refused() -> None:
    store = MemoryTaskStore(max_bytes=100)
    await store.create(record("t1"))
    with pytest.raises(TaskStoreFull):
        await store.transition("t1", "completed", result=b"x" * 101)
    await store.transition("t1", "completed", result=b"x" * 100)
    assert store.bytes_held == 100


async def test_records_expire_after_their_ttl(autojump_clock: trio.testing.MockClock) -> None:
    store = MemoryTaskStore()
    await store.create(record("t1", ttl_ms=1_000))
    await store.create(record("t2", ttl_ms=None))
    await trio.sleep(0.999)
    assert await store.get("t1") is not None
    await trio.sleep(0.002)
    assert await store.get("t1") is None
    assert await store.get("t2") is not None
    assert len(store) == 1


async def test_listing_pages_an_owners_tasks_oldest_first() -> None:
    store = MemoryTaskStore()
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


async def test_a_waiter_wakes_on_each_change_and_when_the_record_goes() -> None:
    store = MemoryTaskStore()
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
            await trio.testing.wait_all_tasks_blocked()
            await store.transition("t1", "input_required")
            await trio.testing.wait_all_tasks_blocked()
            await store.transition("t1", "completed", result=b"{}")
            await trio.testing.wait_all_tasks_blocked()
            await store.delete("t1")
    assert seen == ["input_required", "completed", None]


async def test_input_requests_and_responses_are_kept_until_the_next_transition() -> None:
    store = MemoryTaskStore()
    await store.create(record("t1"))
    asking = await store.transition("t1", "input_required", input_requests=b'{"a":{}}')
    assert asking is not None and asking.input_requests == b'{"a":{}}'
    answered = await store.transition(
        "t1", "input_required", input_requests=b'{"a":{}}', input_responses=b'{"a":1}'
    )
    assert answered is not None and answered.input_responses == b'{"a":1}'
    assert store.bytes_held == len(b'{"a":{}}') + len(b'{"a":1}')
    working = await store.transition("t1", "working")
    assert working is not None and working.input_requests is None
    assert store.bytes_held == 0


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
