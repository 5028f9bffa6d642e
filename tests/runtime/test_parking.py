"""ParkingSpot: the runtime's one hand-off primitive, on Trio's public wait_task_rescheduled."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from mcptrio.runtime.parking import ParkingSpot


class _Recording(ParkingSpot):
    __slots__ = ("withdrawn",)

    def __init__(self) -> None:
        super().__init__()
        self.withdrawn = 0

    def cancelled(self) -> None:
        self.withdrawn += 1


async def test_wake_resumes_the_parked_task_once() -> None:
    spot = ParkingSpot()
    resumed: list[object] = []

    async def waiter() -> None:
        resumed.append(await spot.park())

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            assert spot.occupied
            assert spot.wake() is True
            assert not spot.occupied
            assert spot.wake() is False
    assert resumed == [None]


async def test_a_second_task_parking_on_a_taken_spot_is_refused() -> None:
    spot = ParkingSpot()

    async def waiter() -> None:
        await spot.park()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(trio.BusyResourceError):
                await spot.park()
            spot.wake()


async def test_cancelling_a_parked_task_frees_the_spot_and_withdraws_it() -> None:
    spot = _Recording()
    outcomes: list[str] = []

    async def waiter() -> None:
        try:
            await spot.park()
        except trio.Cancelled:
            outcomes.append("cancelled")
            raise
        outcomes.append("woken")

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
            # The abort ran at once: the spot is free and the hook has run.
            assert not spot.occupied
            assert spot.withdrawn == 1
            assert spot.wake() is False
    assert outcomes == ["cancelled"]


async def test_a_woken_task_runs_although_cancelled_before_its_turn() -> None:
    spot = ParkingSpot()
    seen: list[str] = []

    async def waiter() -> None:
        await spot.park()
        seen.append("woken")
        await trio.lowlevel.checkpoint()
        seen.append("past the checkpoint")

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            spot.wake()
            nursery.cancel_scope.cancel()
    assert seen == ["woken"]


async def test_a_spot_is_parked_on_again_after_each_wake() -> None:
    ping, pong = ParkingSpot(), ParkingSpot()
    rounds = 0

    async def other() -> None:
        nonlocal rounds
        for _ in range(100):
            await ping.park()
            rounds += 1
            pong.wake()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(other)
            for _ in range(100):
                await trio.testing.wait_all_tasks_blocked()
                ping.wake()
                await pong.park()
    assert rounds == 100
