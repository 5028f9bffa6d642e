"""What the Redis stores do when Redis goes away, hangs, or comes back: a clear
:class:`StoreUnavailable` within the deadline, never a hang, and service again afterwards
without a new client or store."""

from __future__ import annotations

import re
from functools import partial

import pytest
import trio
from redis_servers import RedisServer
from task_records import working_record

import mcptrio
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.stores.bundle import open_stores
from mcptrio.stores.errors import StoreUnavailable
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_event_store import RedisEventStore
from mcptrio.stores.redis_request_state_key import (
    keep_request_state_key,
    shared_request_state_key,
)
from mcptrio.stores.redis_subscription_bus import open_redis_subscription_bus
from mcptrio.stores.redis_task_store import RedisTaskStore
from mcptrio.stores.request_state_key_ring import KeyRing
from mcptrio.stores.task_store import TaskRecord


def record(task_id: str) -> TaskRecord:
    return working_record(task_id)


async def test_redis_down_fails_every_call_quickly_and_a_restart_brings_it_back(
    own_redis_server: RedisServer,
) -> None:
    async with open_redis(own_redis_server.url, timeout=1) as redis:
        events = RedisEventStore(redis, timeout=1)
        tasks = RedisTaskStore(redis, timeout=1)
        with trio.fail_after(5):
            assert await events.store("s", "1", b"x") == "1-1"
        own_redis_server.stop()
        with trio.fail_after(5):
            with pytest.raises(StoreUnavailable, match="store an SSE event"):
                await events.store("s", "1", b"y")
            with pytest.raises(StoreUnavailable, match="create a task"):
                await tasks.create(record("t1"))
            with pytest.raises(StoreUnavailable):
                await tasks.get("t1")
        own_redis_server.start()
        with trio.fail_after(5):
            # No persistence: the restarted Redis is empty, and in use again at once.
            assert await events.store("s", "1", b"z") == "1-1"
            assert (await tasks.create(record("t1"))).version == 1
            assert await tasks.get("t1") is not None


async def test_a_redis_that_does_not_answer_fails_the_call_at_its_deadline(
    own_redis_server: RedisServer,
) -> None:
    async with (
        open_redis(own_redis_server.url) as redis,
        open_redis(own_redis_server.url) as admin,
    ):
        events = RedisEventStore(redis, timeout=0.3)
        with trio.fail_after(5):
            await events.store("s", "1", b"x")
            await admin.client_pause(2000)
            start = trio.current_time()
            with pytest.raises(StoreUnavailable, match=r"did not answer within 0.3s"):
                await events.store("s", "1", b"y")
            assert trio.current_time() - start < 1.5
            await admin.client_unpause()
            replay = await events.replay_after("s", "1-0")
    # The call that timed out may or may not have landed; nothing else is lost.
    assert replay.events[0] == ("1-1", b"x")


async def test_a_bus_resyncs_its_listeners_after_redis_restarts_and_carries_changes_again(
    own_redis_server: RedisServer,
) -> None:
    url = own_redis_server.url
    async with (
        open_redis(url) as redis_a,
        open_redis(url) as redis_b,
        open_redis_subscription_bus(redis_a) as bus_a,
        open_redis_subscription_bus(redis_b) as bus_b,
    ):
        listener = bus_b.subscribe(["tools"], ["file:///a"])
        with trio.fail_after(10):
            own_redis_server.restart()
            # While Redis was away, changes may have been lost: the listener is told to look
            # again at everything it asked for.
            got = set()
            async for change in listener.changes():
                got.add(change)
                if len(got) == 2:
                    break
            assert got == {("list_changed", "tools"), ("updated", "file:///a")}
            assert bus_b.resyncs >= 1
            # And changes cross between workers again.
            while True:
                bus_a.publish(("updated", "file:///a"))
                with trio.move_on_after(0.2):
                    async for change in listener.changes():
                        assert change == ("updated", "file:///a")
                        break
                    break


async def test_a_bus_publisher_never_blocks_while_redis_is_away(
    own_redis_server: RedisServer,
) -> None:
    async with (
        open_redis(own_redis_server.url, timeout=0.5) as redis,
        open_redis_subscription_bus(redis, timeout=0.5) as bus,
    ):
        local = bus.subscribe(["tools"], [])
        own_redis_server.stop()
        with trio.fail_after(5):
            for i in range(5000):
                bus.publish(("updated", f"file:///{i}"))
            bus.publish(("list_changed", "tools"))
            # This process's listeners still hear this process's changes.
            async for change in local.changes():
                assert change == ("list_changed", "tools")
                break
        assert bus.overflows >= 1
        own_redis_server.start()


async def test_opening_the_stores_without_redis_fails_clearly_and_quickly() -> None:
    with trio.fail_after(5):
        with pytest.raises(StoreUnavailable, match=re.escape("connect to redis://127.0.0.1:1")):
            async with open_stores("redis://127.0.0.1:1/0", timeout=1):
                raise AssertionError("unreachable")


async def test_an_http_worker_answers_quickly_while_redis_is_down_and_serves_again_after(
    own_redis_server: RedisServer,
) -> None:
    server = mcptrio.Server("adder")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    with trio.fail_after(20):
        async with (
            # A stopped server refuses at once: the timeout is for a healthy one on a busy
            # machine (0.5 s was once too short for the first SSE event's write).
            open_stores(own_redis_server.url, timeout=1.5) as stores,
            trio.open_nursery() as nursery,
        ):
            # SSE responses: every message goes through the event store first.
            serve = partial(server.serve_http, stores=stores, json_response=False)
            url = await nursery.start(serve)
            async with mcptrio.open_client(f"{url}/mcp", revisions=HANDSHAKE_ERA) as client:
                assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content
                own_redis_server.stop()
                with trio.fail_after(3), pytest.raises(mcptrio.TransportError):
                    await client.call_tool("add", {"a": 1, "b": 2})
                own_redis_server.start()
                again = await client.call_tool("add", {"a": 2, "b": 2})
            assert again.structured_content == {"result": 4}
            nursery.cancel_scope.cancel()


async def test_the_shared_request_state_key_is_put_back_after_redis_forgets_it(
    own_redis_server: RedisServer,
) -> None:
    async with open_redis(own_redis_server.url) as redis, trio.open_nursery() as nursery:
        with trio.fail_after(10):
            key = await shared_request_state_key(redis)
            ring = KeyRing(key)
            nursery.start_soon(partial(keep_request_state_key, redis, ring, interval=0.05))
            own_redis_server.restart()
            # Offered again every 50 ms: back well within half a second.
            await trio.sleep(0.5)
            assert await redis.get("mcptrio:request-state-key") == key
            # A worker starting now gets the key the running workers use.
            assert await shared_request_state_key(redis) == key
        nursery.cancel_scope.cancel()


async def test_leaving_the_stores_while_redis_is_down_neither_hangs_nor_raises(
    own_redis_server: RedisServer,
) -> None:
    with trio.fail_after(10):
        async with open_stores(own_redis_server.url, timeout=0.5) as stores:
            stores.subscription_bus.publish(("updated", "file:///a"))
            own_redis_server.stop()
            stores.subscription_bus.publish(("updated", "file:///b"))
            await trio.sleep(0.3)
