"""The Redis session directory: liveness, and mailboxes whose messages arrive, batched."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import coredis
import pytest
import trio
from redis_servers import RedisServer

from mcptrio.stores.redis_session_directory import RedisSessionDirectory
from mcptrio.stores.session_directory import (
    HEARTBEAT_PERIOD,
    LIVENESS_TTL,
    instance_of,
    new_instance_name,
)


@asynccontextmanager
async def _directories(redis_url: str, count: int) -> AsyncIterator[list[RedisSessionDirectory]]:
    prefix = f"test{secrets.token_hex(4)}:"
    async with coredis.Redis.from_url(redis_url) as redis, trio.open_nursery() as nursery:
        directories = [RedisSessionDirectory(redis, prefix=prefix) for _ in range(count)]
        for directory in directories:
            await nursery.start(directory.run)
        yield directories
        nursery.cancel_scope.cancel()


async def test_many_concurrent_messages_all_arrive_in_few_pushes(redis_server: RedisServer) -> None:
    redis_url = redis_server.url
    with trio.fail_after(20):
        async with _directories(redis_url, 2) as (sender, receiver):
            lengths: list[int] = []

            async def send(n: int) -> None:
                lengths.append(await sender.send(receiver.instance, b"m%d" % n))

            async with trio.open_nursery() as nursery:
                for n in range(1000):
                    nursery.start_soon(send, n)
            received: list[bytes] = []
            while len(received) < 1000:
                received.extend(await receiver.receive())
    assert sorted(received) == sorted(b"m%d" % n for n in range(1000))
    assert max(lengths) <= 1000
    # Sent while a push was on its way, messages went together.
    assert sender.pushes < 100
    assert sender.pushed == 1000


async def test_one_senders_messages_arrive_in_its_order(redis_server: RedisServer) -> None:
    redis_url = redis_server.url
    with trio.fail_after(20):
        async with _directories(redis_url, 2) as (sender, receiver):
            for n in range(300):
                await sender.send(receiver.instance, b"%d" % n)
            received: list[bytes] = []
            while len(received) < 300:
                received.extend(await receiver.receive())
    assert received == [b"%d" % n for n in range(300)]


async def test_a_worker_is_alive_while_it_runs_and_gone_when_it_stops(
    redis_server: RedisServer,
) -> None:
    redis_url = redis_server.url
    prefix = f"test{secrets.token_hex(4)}:"
    with trio.fail_after(20):
        async with coredis.Redis.from_url(redis_url) as redis:
            watcher = RedisSessionDirectory(redis, prefix=prefix)
            worker = RedisSessionDirectory(redis, prefix=prefix)
            assert not await RedisSessionDirectory(redis, prefix=prefix).is_alive(worker.instance)
            async with trio.open_nursery() as nursery:
                await nursery.start(worker.run)
                assert await watcher.is_alive(worker.instance)
                nursery.cancel_scope.cancel()
            # Leaving deletes the key at once; a fresh answer (past the cache) says so.
            assert not await RedisSessionDirectory(redis, prefix=prefix).is_alive(worker.instance)


async def test_a_mailbox_written_after_its_worker_died_expires(redis_server: RedisServer) -> None:
    redis_url = redis_server.url
    prefix = f"test{secrets.token_hex(4)}:"
    with trio.fail_after(20):
        async with coredis.Redis.from_url(redis_url) as redis:
            sender = RedisSessionDirectory(redis, prefix=prefix)
            await sender.send("wgone_000000000000", b"late")
            ttl_ms = await redis.pttl(f"{prefix}mailbox:wgone_000000000000")
    assert 0 < ttl_ms <= LIVENESS_TTL * 12 * 1000


def test_instance_names_are_labelled_fresh_and_read_back_from_session_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPTRIO_WORKER_ID", "w1; DROP")
    first, second = new_instance_name(), new_instance_name()
    assert first.startswith("w1DROP_") and first != second
    assert instance_of(f"{first}.{secrets.token_hex(16)}") == first
    assert instance_of(secrets.token_hex(16)) is None
    assert instance_of(".abc") is None


async def test_a_worker_that_leaves_is_gone_for_good_while_it_still_reads_its_mailbox(
    redis_server: RedisServer,
) -> None:
    prefix = f"test{secrets.token_hex(4)}:"
    with trio.fail_after(20):
        async with coredis.Redis.from_url(redis_server.url) as redis:
            worker = RedisSessionDirectory(redis, prefix=prefix)
            sender = RedisSessionDirectory(redis, prefix=prefix)
            async with trio.open_nursery() as nursery:
                await nursery.start(worker.run)
                await worker.leave()
                assert not await sender.is_alive(worker.instance)
                # Its heartbeat does not bring it back...
                await trio.sleep(HEARTBEAT_PERIOD * 2.5)
                assert not await RedisSessionDirectory(redis, prefix=prefix).is_alive(
                    worker.instance
                )
                # ...and what was sent to it meanwhile still arrives (a stopping worker
                # declines it).
                await sender.send(worker.instance, b"late")
                assert await worker.receive() == [b"late"]
                nursery.cancel_scope.cancel()


async def test_a_message_sent_while_the_directory_stops_goes_out_directly(
    redis_server: RedisServer,
) -> None:
    # Stopping, the directory waits for a push under way; a message sent as that push ends (a
    # stopping worker declining a forwarded request) must not start a batch in the directory's
    # nursery, closed by then. Which of the two Trio runs first varies: ten rounds.
    pushed = 0

    async def slow_push(**kwargs: object) -> int:
        nonlocal pushed
        with trio.CancelScope(shield=True):
            await trio.sleep(0.02)
        pushed += 1
        if pushed % 2:
            outside.start_soon(directory.send, "two", b"second")
        return 1

    with trio.fail_after(20):
        async with coredis.Redis.from_url(redis_server.url) as redis:
            for _ in range(10):
                directory = RedisSessionDirectory(redis, prefix=f"test{secrets.token_hex(4)}:")
                directory._push = slow_push  # type: ignore[method-assign]
                async with trio.open_nursery() as outside, trio.open_nursery() as running:
                    await running.start(directory.run)
                    running.start_soon(directory.send, "one", b"first")
                    await trio.sleep(0.01)
                    running.cancel_scope.cancel()
    assert pushed == 20
