"""The built-in server's lazy deadlines of waits on clients (engine/wait_timer.py)."""

from __future__ import annotations

import contextlib
import math

import pytest
import trio
import trio.testing
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection
from test_builtin_server_limits import BUILTIN, open_echo_connection
from test_front_ends import EchoApp

from mcptrio.transports.http.engine.wait_timer import WaitTimer


class Waiter:
    """A connection as the timer sees it, counting its expiries."""

    def __init__(self) -> None:
        self.wait_deadline = math.inf
        self.timer_at = math.inf
        self.expired = 0

    def wait_expired(self) -> None:
        self.expired += 1


def test_a_wait_past_its_deadline_expires_and_one_that_ended_does_not() -> None:
    timer = WaitTimer()
    late, answered = Waiter(), Waiter()
    timer.waiting(late, 1.0)
    timer.waiting(answered, 1.0)
    answered.wait_deadline = math.inf  # its bytes came
    timer.expire(1.0)
    assert (late.expired, answered.expired) == (1, 0)
    assert len(timer) == 0


def test_an_entry_moves_to_the_deadline_of_a_later_wait_instead_of_a_new_one_per_wait() -> None:
    timer = WaitTimer()
    waiter = Waiter()
    for start in range(100):
        timer.waiting(waiter, start * 0.01 + 5.0)
        waiter.wait_deadline = math.inf
    timer.waiting(waiter, 6.0)
    assert len(timer) == 1
    timer.expire(5.0)
    assert waiter.expired == 0
    assert len(timer) == 1
    assert waiter.timer_at == 6.0
    timer.expire(6.0)
    assert waiter.expired == 1


def test_an_earlier_deadline_than_the_entry_gets_its_own_entry() -> None:
    timer = WaitTimer()
    waiter = Waiter()
    timer.waiting(waiter, 10.0)
    waiter.wait_deadline = math.inf
    timer.waiting(waiter, 2.0)
    timer.expire(2.0)
    assert waiter.expired == 1
    timer.expire(10.0)
    assert waiter.expired == 1
    assert len(timer) == 0


def test_dead_entries_never_outnumber_the_live_ones_by_much() -> None:
    timer = WaitTimer()
    live = [Waiter() for _ in range(10)]
    for waiter in live:
        timer.waiting(waiter, 100.0)
    # A client forcing an earlier deadline on every wait leaves an entry behind each time, and
    # connections that end leave theirs.
    busy = Waiter()
    for step in range(10_000):
        timer.waiting(busy, 1_000.0 - step * 0.01)
        busy.wait_deadline = math.inf
        gone = Waiter()
        timer.waiting(gone, 50.0)
        timer.ended(gone)
    assert len(timer) <= 2 * (len(live) + 1) + 64 + 1
    timer.expire(1_000.0)
    assert sum(waiter.expired for waiter in live) == 10
    assert busy.expired == 0


async def test_the_timer_task_expires_waits_as_they_come_due(
    autojump_clock: trio.testing.MockClock,
) -> None:
    timer = WaitTimer()
    first, second = Waiter(), Waiter()
    async with trio.open_nursery() as nursery:
        await nursery.start(timer.run)
        timer.waiting(first, trio.current_time() + 10)
        # An earlier deadline wakes the sleeping timer sooner.
        timer.waiting(second, trio.current_time() + 1)
        await trio.sleep(1.5)
        assert (first.expired, second.expired) == (0, 1)
        await trio.sleep(9)
        assert first.expired == 1
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("front_end", BUILTIN)
async def test_a_connection_busy_for_longer_than_its_keep_alive_timeout_stays_open(
    front_end: str,
) -> None:
    # Each gap is shorter than the timeout, their sum far longer: the deadline of the first
    # wait must move with every later one, not fire.
    with trio.fail_after(10):
        async with open_echo_connection(front_end, keep_alive_timeout=0.4) as (_, conn):
            for _ in range(8):
                response = await conn.request("POST", "/", body=b"x")
                assert response.status == 200
                await trio.sleep(0.2)
            response = await conn.request("POST", "/", body=b"y")
            assert response.status == 200


@pytest.mark.parametrize("front_end", BUILTIN)
async def test_a_later_head_sent_slowly_is_cut_off_after_the_header_timeout(
    front_end: str,
) -> None:
    with trio.fail_after(5):
        async with (
            open_front_end(front_end, EchoApp(), header_timeout=0.5, keep_alive_timeout=0.3) as url,
            open_test_connection(url) as conn,
        ):
            response = await conn.request("POST", "/", body=b"x")
            assert response.status == 200
            started = trio.current_time()
            await conn.send_raw(b"GET / HTTP/1.1\r\nhost: x\r\n")

            async def trickle() -> None:
                # For three times the timeout: each piece must not buy the head more time.
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    for _ in range(15):
                        await trio.sleep(0.1)
                        await conn.send_raw(b"x-slow: 1\r\n")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(trickle)
                status = await conn.raw_status()
                elapsed = trio.current_time() - started
                nursery.cancel_scope.cancel()
    assert status == 408
    assert 0.5 <= elapsed < 1.2
