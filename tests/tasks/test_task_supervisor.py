"""The task supervisor on its own: many tasks, expiry, shutdown, cancellation from the store."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcptrio.protocol.base import Result
from mcptrio.protocol.types import CallToolResult, TextContent
from mcptrio.stores.task_store import MemoryTaskStore, TaskStore
from mcptrio.tasks import RunningTask, TaskLimits, TasksNotServing, TaskSupervisor


async def done(running: RunningTask) -> Result:
    await trio.lowlevel.checkpoint()
    return CallToolResult(content=[TextContent(text=running.task_id)])


async def test_ten_thousand_tasks_leave_no_task_and_no_record_beyond_their_ttl(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryTaskStore(max_tasks=10_000)
    supervisor = TaskSupervisor(
        store, TaskLimits(max_unfinished_per_owner=10_000, default_ttl_ms=60_000)
    )
    async with supervisor.running():
        for i in range(10_000):
            await supervisor.create(f"session:{i % 7}", "tools/call", done)
        await trio.testing.wait_all_tasks_blocked()
        assert supervisor.live_count == 0
        assert len(store) == 10_000
        page = await supervisor.list("session:0", None)
        assert all(record.status == "completed" for record in page.records)
        await trio.sleep(60.001)
        # Expired records are gone from every index the store keeps, not only from view.
        assert len(store) == 0
        assert store.bytes_held == 0
        assert not store._owners and not store._unfinished and not store._expiry
        assert not store._finished
        assert not store._changed
        assert not supervisor._live and not supervisor._listeners


async def test_the_sweeper_drops_expired_records_without_any_request(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryTaskStore()
    supervisor = TaskSupervisor(store, TaskLimits(default_ttl_ms=1_000, sweep_interval=5))
    async with supervisor.running():
        await supervisor.create("session:a", "tools/call", done)
        await trio.sleep(5.5)
        assert store._slots == {}


class SharedStore:
    """A store as another process would share it: no in-process change callbacks (only
    ``wait_for_change``), so the supervisor watches each task's record itself."""

    def __init__(self, inner: MemoryTaskStore) -> None:
        self.inner = inner
        self.create = inner.create
        self.get = inner.get
        self.transition = inner.transition
        self.wait_for_change = inner.wait_for_change
        self.list = inner.list
        self.delete = inner.delete
        self.purge_expired = inner.purge_expired


@pytest.mark.parametrize("observable", [True, False])
async def test_a_cancel_written_to_the_store_by_another_worker_reaches_the_actor(
    observable: bool,
) -> None:
    memory = MemoryTaskStore()
    store: TaskStore = memory if observable else SharedStore(memory)
    here = TaskSupervisor(store)
    stopped = trio.Event()

    async def forever(running: RunningTask) -> Result:
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    with trio.fail_after(5):
        async with here.running():
            record = await here.create("session:a", "tools/call", forever)
            await trio.testing.wait_all_tasks_blocked()
            # Another worker shares the store but not this process's cancel scopes.
            await memory.transition(record.task_id, "cancelled", status_message="elsewhere")
            await stopped.wait()
    final = await memory.get(record.task_id)
    assert final is not None and final.status == "cancelled"
    assert final.status_message == "elsewhere"


async def test_no_task_is_created_while_the_task_nursery_is_closed() -> None:
    supervisor = TaskSupervisor()
    try:
        await supervisor.create("session:a", "tools/call", done)
    except TasksNotServing as exc:
        assert "serve" in exc.message
    else:
        raise AssertionError("expected TasksNotServing")


async def test_the_block_s_own_error_leaves_the_task_nursery_unwrapped() -> None:
    supervisor = TaskSupervisor()
    try:
        async with supervisor.running():
            raise KeyError("mine")
    except KeyError as exc:
        assert exc.args == ("mine",)


async def test_ttls_are_bounded_by_the_limits() -> None:
    limits = TaskLimits(default_ttl_ms=1_000, max_ttl_ms=5_000)
    assert limits.ttl_for(None) == 1_000
    assert limits.ttl_for(60_000) == 5_000
    assert limits.ttl_for(-3) == 1_000 == limits.ttl_for(0)
    assert TaskLimits(max_ttl_ms=None).ttl_for(10**12) == 10**12


async def test_an_error_result_completes_the_task_when_the_caller_says_so() -> None:
    async def tool_error(running: RunningTask) -> Result:
        await trio.lowlevel.checkpoint()
        return CallToolResult(content=[TextContent(text="no")], is_error=True)

    supervisor = TaskSupervisor()
    with trio.fail_after(5):
        async with supervisor.running():
            failed = await supervisor.create("session:a", "tools/call", tool_error)
            completed = await supervisor.create(
                "session:a", "tools/call", tool_error, error_result_fails=False
            )
            assert (await supervisor.wait_terminal("session:a", failed.task_id)).status == "failed"
            done = await supervisor.wait_terminal("session:a", completed.task_id)
            assert done.status == "completed" and done.result is not None
