"""When the connection of a slow JSON answer starts being watched for its client leaving."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from mcptrio.transports.http.endpoints.departure_watch import DepartureWatch


class Responder:
    """Records when the watch asks it to watch its connection."""

    def __init__(self) -> None:
        self.watched_at: float | None = None

    def watch_for_departure(self) -> None:
        self.watched_at = trio.current_time()


def arm(watch: DepartureWatch, responder: Responder) -> None:
    loose: Any = watch
    loose.arm(responder)


async def test_a_post_unanswered_after_two_delays_is_watched_and_an_answered_one_never(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = DepartureWatch(1.0)
    slow, fast = Responder(), Responder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        start = trio.current_time()
        arm(watch, slow)
        arm(watch, fast)
        await trio.sleep(1.5)
        watch.disarm(fast)  # type: ignore[arg-type]
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    # Armed just before the first tick: aged by it, watched at the second.
    assert slow.watched_at == start + 2.0
    assert fast.watched_at is None


async def test_an_idle_watch_is_woken_by_the_next_post(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watch = DepartureWatch(1.0)
    responder = Responder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        await trio.sleep(10.25)
        armed_at = trio.current_time()
        arm(watch, responder)
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    assert responder.watched_at == armed_at + 2.0
