"""The Redis subscription bus: a change published on one worker reaches the listen streams of
all; a slow listener gets changes coalesced; an overflowing outbox becomes one resync."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio
import trio.testing

from mcptrio.stores.redis_calls import RedisClient
from mcptrio.stores.redis_subscription_bus import (
    RedisSubscriptionBus,
    open_redis_subscription_bus,
)
from mcptrio.stores.subscription_bus import Change, Listener, TooManyListeners


@pytest.fixture
async def bus_a(redis: RedisClient, prefix: str) -> AsyncIterator[RedisSubscriptionBus]:
    async with open_redis_subscription_bus(redis, prefix=prefix) as bus:
        yield bus


@pytest.fixture
async def bus_b(other_redis: RedisClient, prefix: str) -> AsyncIterator[RedisSubscriptionBus]:
    async with open_redis_subscription_bus(other_redis, prefix=prefix) as bus:
        yield bus


async def next_changes(listener: Listener, count: int) -> list[Change]:
    got: list[Change] = []
    async for change in listener.changes():
        got.append(change)
        if len(got) == count:
            break
    return got


async def test_a_change_published_on_one_worker_reaches_listeners_on_every_worker(
    bus_a: RedisSubscriptionBus, bus_b: RedisSubscriptionBus
) -> None:
    here = bus_a.subscribe(["tools"], ["file:///a"])
    there = bus_b.subscribe(["tools"], ["file:///a"])
    with trio.fail_after(5):
        bus_a.publish(("list_changed", "tools"))
        bus_a.publish(("list_changed", "prompts"))  # asked for by no one
        bus_a.publish(("updated", "file:///a"))
        assert await next_changes(there, 2) == [("list_changed", "tools"), ("updated", "file:///a")]
        # The publisher's own listeners hear it at once, and once (not again from Redis).
        assert await next_changes(here, 2) == [("list_changed", "tools"), ("updated", "file:///a")]
        bus_b.publish(("updated", "file:///a"))
        assert await next_changes(here, 1) == [("updated", "file:///a")]
        await trio.sleep(0.1)
    here.close()
    assert [change async for change in here.changes()] == []


async def test_a_slow_listener_gets_changes_coalesced_and_the_publisher_never_waits(
    bus_a: RedisSubscriptionBus, bus_b: RedisSubscriptionBus
) -> None:
    slow = bus_b.subscribe(["tools", "resources"], [f"file:///{i}" for i in range(10)])
    last = bus_b.subscribe(["resources"], [])
    with trio.fail_after(5):
        for round_ in range(200):
            for i in range(10):
                bus_a.publish(("updated", f"file:///{i}"))
            bus_a.publish(("list_changed", "tools"))
            if round_ % 50 == 0:
                await trio.sleep(0.01)
        bus_a.publish(("list_changed", "resources"))
        # Changes arrive in order: once the last one is here, all are, and ``slow`` read none.
        assert await next_changes(last, 1) == [("list_changed", "resources")]
        slow.close()
        got = [change async for change in slow.changes()]
    # 2,201 changes published; 12 distinct ones pending, each once.
    assert len(got) == len(set(got)) == 12


async def test_an_overflowing_outbox_becomes_one_resync_on_every_worker(
    redis: RedisClient, other_redis: RedisClient, prefix: str
) -> None:
    async with (
        open_redis_subscription_bus(redis, prefix=prefix, max_pending=4) as bus_a,
        open_redis_subscription_bus(other_redis, prefix=prefix) as bus_b,
    ):
        listener = bus_b.subscribe(["tools", "prompts"], ["file:///a"])
        with trio.fail_after(5):
            # Published with no checkpoint between: the outbox holds them all before sending.
            for i in range(10):
                bus_a.publish(("updated", f"file:///other/{i}"))
            assert bus_a.overflows >= 1
            got = await next_changes(listener, 3)
    assert sorted(got) == [
        ("list_changed", "prompts"),
        ("list_changed", "tools"),
        ("updated", "file:///a"),
    ]
    assert bus_b.resyncs == 1


def test_listeners_are_bounded_per_worker() -> None:
    bus = RedisSubscriptionBus(None, max_listeners=1, max_uris_per_listener=2)  # type: ignore[arg-type]
    bus.subscribe([], ["a", "b"])
    with pytest.raises(TooManyListeners):
        bus.subscribe([], [])
    with pytest.raises(ValueError, match="at most 2"):
        RedisSubscriptionBus(None, max_uris_per_listener=2).subscribe([], "abc")  # type: ignore[arg-type]
