"""OnDemandNursery: a dormant session's nursery, open in a task of its host only while tasks run
in it (see mcptrio/runtime/on_demand_nursery.py)."""

from __future__ import annotations

import contextvars

import pytest
import trio
import trio.testing

from mcptrio.runtime.on_demand_nursery import LINGER, OnDemandNursery

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


class Ended:
    def __init__(self) -> None:
        self.times = 0

    async def __call__(self) -> None:
        self.times += 1


async def test_a_task_started_while_dormant_wakes_it_in_the_callers_context(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[str] = []

    async def note() -> None:
        seen.append(marker.get())

    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, Ended())
        assert not tasks.awake
        marker.set("first caller")
        tasks.start_soon(note)
        marker.set("second caller")
        tasks.start_soon(note)
        assert tasks.awake
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(seen) == ["first caller", "second caller"]
        host.cancel_scope.cancel()


async def test_it_goes_dormant_once_empty_and_opens_a_new_nursery_for_the_next_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    nurseries: list[trio.Nursery | None] = []

    async def where() -> None:
        nurseries.append(trio.lowlevel.current_task().parent_nursery)
        await trio.sleep(LINGER * 3)

    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, Ended())
        tasks.start_soon(where)
        await trio.sleep(LINGER * 2)
        assert tasks.awake  # its task runs on
        await trio.sleep(LINGER * 10)
        assert not tasks.awake
        assert len(host.child_tasks) == 0
        tasks.start_soon(where)
        await trio.testing.wait_all_tasks_blocked()
        assert tasks.awake
        assert nurseries[0] is not nurseries[1]
        host.cancel_scope.cancel()


async def test_a_task_started_as_it_lets_go_runs_in_a_nursery_that_stays_open(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The invariant the hand-over relies on: the host task lets go of its nursery in the step
    # that finds it empty, so a task started while that nursery closes wakes one of its own.
    ran = trio.Event()

    async def later() -> None:
        await trio.lowlevel.checkpoint()
        ran.set()

    class StartAsItLetsGo(trio.abc.Instrument):
        started = False

        def after_task_step(self, task: trio.lowlevel.Task) -> None:
            letting_go = tasks.awake and tasks._nursery is None and not tasks._opening
            if letting_go and not self.started:
                self.started = True
                tasks.start_soon(later)

    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, Ended())
        instrument = StartAsItLetsGo()
        trio.lowlevel.add_instrument(instrument)
        try:
            tasks.start_soon(trio.sleep, 0)
            with trio.fail_after(LINGER * 10):
                await ran.wait()
        finally:
            trio.lowlevel.remove_instrument(instrument)
        assert instrument.started
        host.cancel_scope.cancel()


async def test_cancel_while_dormant_ends_it_once_in_a_task_of_the_host(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ended = Ended()
    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, ended)
        tasks.cancel()
        tasks.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert ended.times == 1
        assert not tasks.awake
        with pytest.raises(RuntimeError):
            tasks.start_soon(trio.sleep, 1)


async def test_cancel_while_awake_cancels_its_tasks_then_ends_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ended = Ended()
    cancelled = trio.Event()

    async def forever() -> None:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, ended)
        tasks.start_soon(forever)
        await trio.testing.wait_all_tasks_blocked()
        tasks.cancel()
        await cancelled.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert ended.times == 1
        assert not tasks.awake


async def test_a_failing_task_ends_it_and_its_error_reaches_the_host() -> None:
    ended = Ended()

    async def fail() -> None:
        raise KeyError("boom")

    with pytest.RaisesGroup(pytest.RaisesGroup(KeyError, flatten_subgroups=True)):
        async with trio.open_nursery() as host:
            tasks = OnDemandNursery(host, ended)
            tasks.start_soon(fail)
    assert ended.times == 1


async def test_the_host_stopping_ends_an_awake_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ended = Ended()
    async with trio.open_nursery() as host:
        tasks = OnDemandNursery(host, ended)
        tasks.start_soon(trio.sleep_forever)
        await trio.testing.wait_all_tasks_blocked()
        host.cancel_scope.cancel()
    assert ended.times == 1
