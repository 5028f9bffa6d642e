"""In memory, many concurrent ``tools/call`` over one client cost about one task step each and
start no task: the reader on each side takes every frame waiting in one step, a tool that never
waits is answered in the server reader's step, and the client's reader hands each answer
straight to its caller. A per-message hop, or a task per request, shows up here as a step (or a
task) more per call.
"""

from __future__ import annotations

import trio

import mcptrio
from mcptrio.protocol.types import TextContent

#: Concurrent callers, and calls each makes while counted (after its warm-up call).
CALLERS = 100
CALLS = 20
#: The caller's own step is one a call; the two readers' batched steps add a few hundredths.
MAX_STEPS_PER_CALL = 1.25


class _Counter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.steps = 0
        self.spawned = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


def adder() -> mcptrio.Server:
    server = mcptrio.Server("steps")

    @server.tool(structured_output=False)
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_concurrent_calls_in_memory_take_about_one_task_step_each_and_start_no_task() -> None:
    counter = _Counter()
    warmed = trio.Event()
    ready = 0
    answers: list[str] = []

    async def caller(client: mcptrio.Client) -> None:
        nonlocal ready
        await client.call_tool("add", {"a": 1, "b": 2})
        ready += 1
        if ready == CALLERS:
            trio.lowlevel.add_instrument(counter)
            warmed.set()
        await warmed.wait()
        for _ in range(CALLS):
            result = await client.call_tool("add", {"a": 1, "b": 2})
            block = result.content[0]
            assert isinstance(block, TextContent)
            answers.append(block.text)

    with trio.fail_after(10):
        async with mcptrio.open_client(adder()) as client:
            async with trio.open_nursery() as nursery:
                for _ in range(CALLERS):
                    nursery.start_soon(caller, client)
            trio.lowlevel.remove_instrument(counter)
    calls = CALLERS * CALLS
    assert answers == ["3"] * calls
    assert counter.spawned == 0
    assert counter.steps / calls <= MAX_STEPS_PER_CALL, counter.steps / calls
