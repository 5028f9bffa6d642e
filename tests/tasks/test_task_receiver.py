"""What a task asks its requestor is related to a tasks/result request waiting for it, but only
one on the same session (another session of the same principal relates to nothing here)."""

from __future__ import annotations

import trio
import trio.testing

import mcptrio
from mcptrio.protocol.base import Result
from mcptrio.protocol.types import CallToolResult, GetTaskPayloadRequest
from mcptrio.runtime.context import RequestContext
from mcptrio.tasks import RunningTask, TaskReceiver, TaskSupervisor
from mcptrio.transports.memory import memory_transport_pair


async def test_the_result_stream_is_the_waiting_request_of_the_same_session_only() -> None:
    server = mcptrio.Server("s")
    here = server.session(memory_transport_pair()[1])
    there = server.session(memory_transport_pair()[1])
    supervisor = TaskSupervisor()
    receiver = TaskReceiver(supervisor)
    release = trio.Event()

    async def work(running: RunningTask) -> Result:
        await release.wait()
        return CallToolResult(content=[])

    with trio.fail_after(5):
        async with supervisor.running():
            record = await supervisor.create("principal:ada", "tools/call", work)
            request = GetTaskPayloadRequest(task_id=record.task_id)
            waiting = RequestContext(here, 7, request, trio.CancelScope())
            async with trio.open_nursery() as nursery:
                nursery.start_soon(receiver.result, waiting, "principal:ada", request)
                await trio.testing.wait_all_tasks_blocked()
                assert receiver.result_stream(record.task_id, here) == 7
                assert receiver.result_stream(record.task_id, there) is None
                release.set()
            assert receiver.result_stream(record.task_id, here) is None
