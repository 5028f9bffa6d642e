"""A task store shared by two workers (two coredis clients, two store instances): what one
writes the other reads, and a tasks/cancel answered by one reaches the actor on the other."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio
from cancellation import Waiter
from task_records import working_record

from mcptrio.protocol.base import Result
from mcptrio.protocol.types import CallToolResult, TextContent
from mcptrio.stores.redis_calls import RedisClient
from mcptrio.stores.redis_task_store import RedisTaskStore, open_redis_task_store
from mcptrio.stores.task_store import TaskLimitReached, TaskRecord
from mcptrio.tasks import RunningTask, TaskSupervisor

OWNER = "principal:alice"


@pytest.fixture
async def worker_a(redis: RedisClient, prefix: str) -> AsyncIterator[RedisTaskStore]:
    # A poll interval longer than any test: only notifications can carry a change in time.
    async with open_redis_task_store(redis, prefix=prefix, poll_interval=60) as store:
        yield store


@pytest.fixture
async def worker_b(other_redis: RedisClient, prefix: str) -> AsyncIterator[RedisTaskStore]:
    async with open_redis_task_store(other_redis, prefix=prefix, poll_interval=60) as store:
        yield store


def record(task_id: str) -> TaskRecord:
    return working_record(task_id, OWNER)


async def test_a_task_made_on_one_worker_is_read_listed_updated_and_cancelled_on_another(
    worker_a: RedisTaskStore, worker_b: RedisTaskStore
) -> None:
    with trio.fail_after(5):
        created = await worker_a.create(record("t1"), max_unfinished_per_owner=1)
        assert await worker_b.get("t1") == created
        page = await worker_b.list(OWNER, None, 10)
        assert [r.task_id for r in page.records] == ["t1"]
        asking = await worker_b.transition("t1", "input_required", input_requests=b"{}")
        assert asking is not None and (await worker_a.get("t1")) == asking
        cancelled = await worker_b.transition("t1", "cancelled", status_message="by request")
        assert cancelled is not None
        late = await worker_a.transition("t1", "completed", result=b"{}")
    assert late is not None and late.status == "cancelled"


async def test_the_owner_limit_holds_across_workers(
    worker_a: RedisTaskStore, worker_b: RedisTaskStore
) -> None:
    with trio.fail_after(5):
        await worker_a.create(record("t1"), max_unfinished_per_owner=1)
        with pytest.raises(TaskLimitReached):
            await worker_b.create(record("t2"), max_unfinished_per_owner=1)


async def test_a_cancel_answered_on_another_worker_stops_the_actor_running_the_task(
    worker_a: RedisTaskStore, worker_b: RedisTaskStore
) -> None:
    waiter = Waiter()

    async def forever(running: RunningTask) -> Result:
        await waiter.wait_until_cancelled()

    here, there = TaskSupervisor(worker_a), TaskSupervisor(worker_b)
    with trio.fail_after(5):
        async with here.running(), there.running():
            task = await here.create(OWNER, "tools/call", forever)
            await waiter.entered.wait()
            after = await there.cancel(OWNER, task.task_id)
            assert after.status == "cancelled"
            await waiter.cancelled.wait()
            # The actor leaves the live tasks as its work's cancellation unwinds (no await).
            assert here.live_count == 0
            final = await worker_a.get(task.task_id)
    assert final is not None and final.status == "cancelled"
    assert final.status_message == "The task was cancelled by request."


async def test_a_result_waited_for_on_one_worker_comes_when_the_other_finishes_the_task(
    worker_a: RedisTaskStore, worker_b: RedisTaskStore
) -> None:
    go = trio.Event()

    async def answer(running: RunningTask) -> Result:
        await go.wait()
        return CallToolResult(content=[TextContent(text="done")])

    here, there = TaskSupervisor(worker_a), TaskSupervisor(worker_b)
    with trio.fail_after(5):
        async with here.running(), there.running():
            task = await here.create(OWNER, "tools/call", answer)
            async with trio.open_nursery() as nursery:
                results: list[TaskRecord] = []

                async def wait() -> None:
                    results.append(await there.wait_terminal(OWNER, task.task_id))

                nursery.start_soon(wait)
                await trio.sleep(0.1)
                go.set()
    assert results[0].status == "completed"
    assert results[0].result is not None and b"done" in results[0].result
