"""The subscription bus: listeners get what they asked for, coalesced, and never block anyone."""

from __future__ import annotations

import pytest
import trio

from mcptrio.server.subscription_bus import Change, LocalSubscriptionBus, TooManyListeners


async def drain(changes: list[Change], listener: object) -> None:
    async for change in listener.changes():  # type: ignore[attr-defined]
        changes.append(change)


async def test_a_listener_gets_only_what_it_asked_for() -> None:
    bus = LocalSubscriptionBus()
    listener = bus.subscribe(["tools"], ["file:///a"])
    got: list[Change] = []
    with trio.fail_after(1):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, got, listener)
            for change in (
                ("list_changed", "prompts"),
                ("list_changed", "tools"),
                ("updated", "file:///b"),
                ("updated", "file:///a"),
            ):
                bus.publish(change)  # type: ignore[arg-type]
                await trio.testing.wait_all_tasks_blocked()
            bus.unsubscribe(listener)
    assert got == [("list_changed", "tools"), ("updated", "file:///a")]


async def test_a_slow_listener_gets_changes_coalesced_not_queued() -> None:
    bus = LocalSubscriptionBus()
    listener = bus.subscribe(["tools", "prompts"], ["file:///a"])
    for _ in range(10_000):
        bus.publish(("list_changed", "tools"))
        bus.publish(("updated", "file:///a"))
    bus.publish(("list_changed", "prompts"))
    got: list[Change] = []
    bus.unsubscribe(listener)
    with trio.fail_after(1):
        await drain(got, listener)
    assert got == [("list_changed", "tools"), ("updated", "file:///a"), ("list_changed", "prompts")]


def test_listeners_and_their_subscriptions_are_capped() -> None:
    bus = LocalSubscriptionBus(max_listeners=2, max_uris_per_listener=3)
    bus.subscribe([], [])
    bus.subscribe([], ["a", "b", "c"])
    with pytest.raises(TooManyListeners):
        bus.subscribe([], [])
    other = LocalSubscriptionBus(max_uris_per_listener=3)
    with pytest.raises(ValueError, match="at most 3"):
        other.subscribe([], ["a", "b", "c", "d"])
