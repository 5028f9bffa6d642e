"""A Redis (or Valkey) that hangs (SIGSTOP) or loses its data mid-run (FLUSHALL, a restart
without persistence): the stores fail at their deadline while it hangs, and serve again when it
answers; a session keeps being served, and the ``requestState`` key is back in Redis."""

from __future__ import annotations

from functools import partial

import pytest
import trio
from redis_servers import RedisServer

import mcptrio
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.stores import redis_request_state_key
from mcptrio.stores.bundle import open_stores
from mcptrio.stores.errors import StoreUnavailable
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_event_store import RedisEventStore
from mcptrio.stores.request_state_key_ring import KeyRing


def adder() -> mcptrio.Server:
    server = mcptrio.Server("adder")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_a_frozen_redis_fails_calls_at_their_deadline_and_serves_again_once_thawed(
    own_redis_server: RedisServer,
) -> None:
    async with open_redis(own_redis_server.url, timeout=0.3) as redis:
        events = RedisEventStore(redis, timeout=0.3)
        with trio.fail_after(10):
            assert await events.store("s", "1", b"x") == "1-1"
            own_redis_server.freeze()
            try:
                start = trio.current_time()
                with pytest.raises(StoreUnavailable, match="store an SSE event"):
                    await events.store("s", "1", b"y")
                assert trio.current_time() - start < 1.5
            finally:
                own_redis_server.thaw()
            # The client replaces the connection it gave up on: no new client is needed.
            replay = await events.replay_after("s", "1-0")
            assert replay.events[0] == ("1-1", b"x")


@pytest.mark.parametrize("loss", ["flushall", "restart"])
async def test_a_session_is_served_through_a_hang_and_a_data_loss_and_the_key_comes_back(
    own_redis_server: RedisServer, loss: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPTRIO_REQUEST_STATE_KEY", raising=False)
    monkeypatch.setattr(redis_request_state_key, "DEFAULT_KEY_CHECK_INTERVAL", 0.05)
    server = adder()
    with trio.fail_after(30):
        async with (
            open_stores(own_redis_server.url, timeout=0.5) as stores,
            open_redis(own_redis_server.url) as admin,
            trio.open_nursery() as nursery,
        ):
            ring = stores.request_state_key
            assert isinstance(ring, KeyRing)
            # SSE responses: every message goes through the event store, so Redis is on the
            # path of every call.
            url = await nursery.start(
                partial(server.serve_http, stores=stores, json_response=False)
            )
            async with mcptrio.open_client(f"{url}/mcp", revisions=HANDSHAKE_ERA) as client:
                first = await client.call_tool("add", {"a": 1, "b": 2})
                assert first.structured_content == {"result": 3}
                own_redis_server.freeze()
                try:
                    with trio.fail_after(3), pytest.raises(mcptrio.TransportError):
                        await client.call_tool("add", {"a": 1, "b": 2})
                finally:
                    own_redis_server.thaw()
                assert (await client.call_tool("add", {"a": 2, "b": 2})).structured_content == {
                    "result": 4
                }
                if loss == "flushall":
                    await admin.flushall()
                else:
                    await trio.to_thread.run_sync(own_redis_server.restart)
                # The same session, its events counted afresh in an empty Redis.
                after = await client.call_tool("add", {"a": 3, "b": 4})
                assert after.structured_content == {"result": 7}
                while await admin.get("mcptrio:request-state-key") != ring.current:  # noqa: ASYNC110 (polls Redis)
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
