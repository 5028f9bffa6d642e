"""The client pool does not reuse a connection that has been idle for ``max_idle_time``: a
server closes an idle keep-alive connection when it likes (after its keep-alive timeout, or as
it drains), and a request written as that close crosses it would have an unknown outcome."""

from __future__ import annotations

import trio
import trio.testing
from fake_server import FakeExchange, FakeRequest, FakeServerStats, serve_fake_http

from mcptrio.transports.http.engine.client_pool import DEFAULT_MAX_IDLE_TIME, HttpClientPool


async def _ok(request: FakeRequest, exchange: FakeExchange) -> None:
    await exchange.respond(200, body=b"ok")


async def _connections_for_two_posts(pause: float, pool: HttpClientPool) -> int:
    stats = FakeServerStats()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_fake_http, _ok, stats)
        for _ in range(2):
            async with pool.request("POST", f"http://127.0.0.1:{port}/", body=b"x") as response:
                assert await response.read(10) == b"ok"
            await trio.sleep(pause)
        await pool.aclose()
        nursery.cancel_scope.cancel()
    return stats.connections


async def test_a_connection_idle_past_the_limit_is_closed_and_a_fresh_one_used(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(30):
        assert await _connections_for_two_posts(2.5, HttpClientPool(max_idle_time=2.0)) == 2


async def test_a_connection_idle_less_than_the_limit_is_reused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(30):
        assert await _connections_for_two_posts(1.5, HttpClientPool(max_idle_time=2.0)) == 1


def test_the_default_limit_is_below_the_common_keep_alive_timeouts() -> None:
    # uvicorn, hypercorn, Node.js and mcptrio's own server close idle connections after 5 s;
    # the margin covers the network's delay between the two ends' clocks.
    assert DEFAULT_MAX_IDLE_TIME <= 4.0
    assert HttpClientPool().max_idle_time == DEFAULT_MAX_IDLE_TIME
