"""One URL chooses every shared store: ``open_stores`` and ``Server(stores=...)``. Two servers
on one Redis stand in for two workers: a requestState sealed by one opens on the other, and a
change published on one reaches a listen stream served by the other, over HTTP."""

from __future__ import annotations

import base64
from functools import partial

import pytest
import trio
from redis_servers import RedisServer

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import ResourceUpdatedNotification
from mcptrio.server.request_state import RequestStateKey, params_digest
from mcptrio.stores.bundle import open_stores
from mcptrio.stores.event_store import InMemoryEventStore
from mcptrio.stores.redis_event_store import RedisEventStore
from mcptrio.stores.redis_subscription_bus import RedisSubscriptionBus
from mcptrio.stores.redis_task_store import RedisTaskStore
from mcptrio.stores.request_state_key_ring import KeyRing
from mcptrio.stores.subscription_bus import LocalSubscriptionBus
from mcptrio.stores.task_store import MemoryTaskStore
from mcptrio.transports.http.endpoints.app import McpHttpApp

NOTE = "memo://today"
STATELESS_ONLY = Revisions(protocol_version="2026-07-28", supported=SUPPORTED)


def make_server(**options: object) -> mcptrio.Server:
    server = mcptrio.Server("memos", **options)  # type: ignore[arg-type]

    @server.resource(NOTE)
    def today() -> str:
        return "nothing yet"

    return server


async def test_without_a_url_the_stores_are_the_in_memory_ones() -> None:
    async with open_stores() as stores:
        assert isinstance(stores.event_store, InMemoryEventStore)
        assert isinstance(stores.task_store, MemoryTaskStore)
        assert isinstance(stores.subscription_bus, LocalSubscriptionBus)
        assert stores.redis is None


async def test_a_server_given_stores_keeps_everything_it_shares_there(
    redis_server: RedisServer, prefix: str
) -> None:
    with trio.fail_after(5):
        async with open_stores(redis_server.url, prefix=prefix) as stores:
            assert isinstance(stores.event_store, RedisEventStore)
            assert isinstance(stores.task_store, RedisTaskStore)
            assert isinstance(stores.subscription_bus, RedisSubscriptionBus)
            assert stores.redis is not None
            server = make_server(stores=stores)
            assert server.subscriptions is stores.subscription_bus
            assert server.tasks.store is stores.task_store
            assert McpHttpApp(server).event_store is stores.event_store
            # Given later, before serving: the same.
            later = make_server()
            later.use_stores(stores)
            assert later.subscriptions is stores.subscription_bus
            assert later.tasks.store is stores.task_store
            assert McpHttpApp(later).event_store is stores.event_store


async def test_a_request_state_sealed_on_one_worker_opens_on_another(
    redis_server: RedisServer, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPTRIO_REQUEST_STATE_KEY", raising=False)
    digest = params_digest("tools/call", "book", {"seat": "12A"})
    with trio.fail_after(5):
        async with (
            open_stores(redis_server.url, prefix=prefix) as one,
            open_stores(redis_server.url, prefix=prefix) as two,
        ):
            ring_one, ring_two = one.request_state_key, two.request_state_key
            assert isinstance(ring_one, KeyRing) and isinstance(ring_two, KeyRing)
            assert isinstance(ring_one.current, bytes) and len(ring_one.current) == 32
            assert ring_one.current == ring_two.current
            worker_a, worker_b = make_server(stores=one), make_server(stores=two)
            state = worker_a.request_state_key.seal("tools/call", digest, {"ok": True})
            opened = worker_b.request_state_key.open(state, "tools/call", digest)
            assert opened.answers == {"ok": True}
            # A key given in configuration wins over the shared one.
            given = base64.b64encode(b"k" * 32).decode()
            configured = make_server(stores=one, request_state_key=given)
            with pytest.raises(mcptrio.InvalidParams):
                configured.request_state_key.open(state, "tools/call", digest)
            monkeypatch.setenv("MCPTRIO_REQUEST_STATE_KEY", given)
            async with open_stores(redis_server.url, prefix=prefix) as from_env:
                assert from_env.request_state_key == given
                assert RequestStateKey(from_env.request_state_key).ttl > 0


async def test_a_change_on_one_worker_reaches_a_listen_stream_served_by_another(
    redis_server: RedisServer, prefix: str
) -> None:
    with trio.fail_after(10):
        async with (
            open_stores(redis_server.url, prefix=prefix) as one,
            open_stores(redis_server.url, prefix=prefix) as two,
            trio.open_nursery() as nursery,
        ):
            worker_a, worker_b = make_server(), make_server()
            await nursery.start(partial(worker_a.serve_http, stores=one))
            url_b = await nursery.start(partial(worker_b.serve_http, stores=two))
            async with (
                mcptrio.open_client(f"{url_b}/mcp", revisions=STATELESS_ONLY) as client,
                client.listen(uris=[NOTE]) as stream,
            ):
                assert stream.acknowledged.resource_subscriptions == [NOTE]
                worker_a.notify_resource_updated(NOTE)
                notification = await anext(stream)
            assert isinstance(notification, ResourceUpdatedNotification)
            assert notification.uri == NOTE
            nursery.cancel_scope.cancel()
