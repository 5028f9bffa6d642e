"""schedule_point: the schedule half of a checkpoint, with Trio's trap yielded directly and with
Trio's own function (the fallback for a Trio that moved its traps)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio

from mcptrio.runtime import scheduling
from mcptrio.runtime.scheduling import schedule_point


@pytest.fixture(params=["own trap", "trio's function"])
def trap_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "trio's function":
        monkeypatch.setattr(scheduling, "_SCHEDULE_POINT", None)
    yield request.param


async def test_every_ready_task_runs_a_step_in_the_turn_a_schedule_point_gives(
    trap_mode: str,
) -> None:
    steps: list[str] = []

    async def other(name: str) -> None:
        while True:
            steps.append(name)
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other, "a")
        nursery.start_soon(other, "b")
        for _ in range(10):
            await schedule_point()
        # Each turn runs every ready task once, in an order Trio picks per batch.
        assert 9 <= steps.count("a") <= 10 and 9 <= steps.count("b") <= 10
        nursery.cancel_scope.cancel()


async def test_a_schedule_point_is_not_a_cancel_point(trap_mode: str) -> None:
    with trio.CancelScope() as scope:
        scope.cancel()
        await schedule_point()
        reached = True
        await trio.lowlevel.checkpoint()
    assert reached and scope.cancelled_caught
