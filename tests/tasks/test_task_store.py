"""The in-memory task store beyond the contract every store keeps (run against memory and Redis
in tests/stores/test_task_store_contract.py): records round-trip through JSON, and a full store
keeps taking tasks."""

from __future__ import annotations

from mcptrio.stores.task_store import (
    MemoryTaskStore,
    TaskRecord,
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
