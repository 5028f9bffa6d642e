"""The workers' ``requestState`` key never splits: after Redis loses it (restart without
persistence, FLUSHALL) and workers restart in any order, every worker seals with the one key
Redis holds, and a state sealed under a retired key still opens everywhere for the grace period.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from redis_servers import RedisServer

import mcptrio
from mcptrio.server.request_state import RequestStateKey, params_digest
from mcptrio.stores import redis_request_state_key
from mcptrio.stores.bundle import Stores, open_stores
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.request_state_key_ring import KeyRing

DIGEST = params_digest("tools/call", "book", {"seat": "12A"})
INTERVAL = 0.05


@pytest.fixture(autouse=True)
def _quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPTRIO_REQUEST_STATE_KEY", raising=False)
    monkeypatch.setattr(redis_request_state_key, "DEFAULT_KEY_CHECK_INTERVAL", INTERVAL)


class Worker:
    """One worker's stores, in a task of its own, which the test stops and starts again."""

    def __init__(self, nursery: trio.Nursery, url: str, prefix: str) -> None:
        self.nursery, self.url, self.prefix = nursery, url, prefix
        self.stores: Stores | None = None
        self._scope: trio.CancelScope | None = None
        self._stopped = trio.Event()

    async def start(self) -> None:
        self._stopped = trio.Event()
        await self.nursery.start(self._run)

    async def _run(self, *, task_status: trio.TaskStatus[None]) -> None:
        try:
            with trio.CancelScope() as self._scope:
                # No check here waits on a call failing fast; a subscribe just after Redis
                # restarts took over 0.5 s on a busy machine.
                async with open_stores(self.url, prefix=self.prefix, timeout=2.0) as stores:
                    self.stores = stores
                    task_status.started()
                    await trio.sleep_forever()
        finally:
            self.stores = None
            self._stopped.set()

    async def stop(self) -> None:
        assert self._scope is not None
        self._scope.cancel()
        await self._stopped.wait()

    @property
    def key(self) -> RequestStateKey:
        assert self.stores is not None
        return RequestStateKey(self.stores.request_state_key)

    @property
    def ring(self) -> KeyRing:
        assert self.stores is not None and isinstance(self.stores.request_state_key, KeyRing)
        return self.stores.request_state_key

    @property
    def current(self) -> bytes:
        return self.ring.current


@asynccontextmanager
async def workers(url: str, prefix: str, count: int) -> AsyncIterator[list[Worker]]:
    async with trio.open_nursery() as nursery:
        started = [Worker(nursery, url, prefix) for _ in range(count)]
        for worker in started:
            await worker.start()
        yield started
        nursery.cancel_scope.cancel()


async def converged(running: list[Worker]) -> None:
    """Waits until every worker seals with the one key Redis holds and accepts the same retired
    ones (a few check intervals; more on a loaded machine)."""
    worker = running[0]
    async with open_redis(worker.url) as redis:
        with trio.fail_after(10):
            name = f"{worker.prefix}request-state-key"
            while not _agree(running) or await redis.get(name) != worker.current:  # noqa: ASYNC110 (polls what the workers read from Redis)
                await trio.sleep(INTERVAL / 2)


def _agree(running: list[Worker]) -> bool:
    currents = {worker.current for worker in running}
    accepted = {tuple(sorted(worker.ring.accepted())) for worker in running}
    return len(currents) == 1 and len(accepted) == 1


def seals_and_opens_everywhere(running: list[Worker]) -> None:
    for sealer, opener in itertools.product(running, repeat=2):
        state = sealer.key.seal("tools/call", DIGEST, {"ok": True})
        assert opener.key.open(state, "tools/call", DIGEST).answers == {"ok": True}


@pytest.mark.parametrize(
    "order",
    list(itertools.permutations(["redis", "a", "b"])),
    ids=lambda order: "-".join(order),
)
async def test_workers_converge_on_one_key_whatever_restarts_first(
    own_redis_server: RedisServer, prefix: str, order: tuple[str, ...]
) -> None:
    with trio.fail_after(30):
        async with workers(own_redis_server.url, prefix, 3) as (a, b, steady):
            before = steady.key.seal("tools/call", DIGEST, {"sealed": "before"})
            for step in order:
                if step == "redis":
                    # Killed and started again empty: the key is gone from Redis.
                    await trio.to_thread.run_sync(own_redis_server.restart)
                else:
                    worker = a if step == "a" else b
                    await worker.stop()
                    await worker.start()
            running = [a, b, steady]
            await converged(running)
            seals_and_opens_everywhere(running)
            async with open_redis(own_redis_server.url) as redis:
                assert await redis.get(f"{prefix}request-state-key") == steady.current
            # Sealed under the key in use before Redis forgot it: still opens on every worker.
            for worker in running:
                opened = worker.key.open(before, "tools/call", DIGEST)
                assert opened.answers == {"sealed": "before"}


async def test_a_flushed_redis_refilled_by_another_worker_leaves_one_key(
    own_redis_server: RedisServer, prefix: str
) -> None:
    with trio.fail_after(20):
        async with workers(own_redis_server.url, prefix, 2) as running:
            old = running[0].key.seal("tools/call", DIGEST, {"sealed": "before"})
            async with open_redis(own_redis_server.url) as redis:
                await redis.flushall()
                # A worker elsewhere offered its own key before these offered theirs again:
                # what Redis holds now is everyone's key.
                elsewhere = b"e" * 32
                await redis.set(f"{prefix}request-state-key", elsewhere)
                async with workers(own_redis_server.url, prefix, 1) as (late,):
                    assert late.current == elsewhere
                    await converged([*running, late])
                    assert running[0].current == elsewhere
                    seals_and_opens_everywhere([*running, late])
                    assert await redis.get(f"{prefix}request-state-key") == elsewhere
                    # The key the running workers used is retired: it still opens, everywhere.
                    assert late.key.open(old, "tools/call", DIGEST).answers == {"sealed": "before"}


async def test_a_retired_key_stops_opening_states_after_its_grace() -> None:
    now = [0.0]
    ring = KeyRing(b"a" * 32, grace=10.0, clock=lambda: now[0])
    sealed_with_old = RequestStateKey(ring).seal("tools/call", DIGEST, {"ok": True})
    assert ring.adopt(b"b" * 32)
    key = RequestStateKey(ring)
    assert key.open(sealed_with_old, "tools/call", DIGEST).answers == {"ok": True}
    now[0] = 10.5
    with pytest.raises(mcptrio.InvalidParams, match="integrity"):
        key.open(sealed_with_old, "tools/call", DIGEST)
    # What is sealed now uses the adopted key only.
    fresh = key.seal("tools/call", DIGEST, {"ok": 2})
    assert RequestStateKey(b"b" * 32).open(fresh, "tools/call", DIGEST).answers == {"ok": 2}
