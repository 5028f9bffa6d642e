"""The h11 client pool: keep-alive, streamed bodies, deadlines and TLS, on a scripted server."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing
from fake_server import Cut, FakeExchange, FakeRequest, FakeServerStats, serve_fake_http
from http_client_for_tests import tls_contexts

from mcptrio.transports.http.engine.client_connect import Address
from mcptrio.transports.http.engine.client_pool import (
    HttpClientPool,
    HttpConnectError,
    HttpProtocolError,
    HttpTimeout,
    Origin,
    OutcomeUnknown,
    split_url,
)


async def _echo(request: FakeRequest, exchange: FakeExchange) -> None:
    await exchange.respond(200, [("content-type", "text/plain")], request.body or b"empty")


async def test_sequential_requests_reuse_one_keep_alive_connection() -> None:
    stats = FakeServerStats()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, _echo, stats)
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/x?y=1"
            for i in range(3):
                async with pool.request("POST", url, body=f"m{i}".encode()) as response:
                    assert response.status == 200
                    assert response.content_type == "text/plain"
                    assert await response.read(100) == f"m{i}".encode()
            origin, _ = split_url(url)
            assert pool.idle_connections(origin) == 1
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert stats.connections == 1
    assert [r.target for r in stats.requests] == ["/x?y=1"] * 3
    assert stats.requests[0].headers["host"] == f"127.0.0.1:{port}"
    assert stats.requests[0].headers["content-length"] == "2"


async def test_connection_close_from_server_gets_a_fresh_connection_next_time() -> None:
    stats = FakeServerStats()

    async def close_after(request: FakeRequest, exchange: FakeExchange) -> None:
        exchange.keep_alive = False
        await exchange.respond(200, body=b"bye")

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, close_after, stats)
            pool = HttpClientPool()
            for _ in range(2):
                async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                    assert await response.read(10) == b"bye"
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert stats.connections == 2


async def test_idle_connection_closed_silently_by_server_is_replaced() -> None:
    stats = FakeServerStats()
    seen = 0

    async def answer_once_per_connection(request: FakeRequest, exchange: FakeExchange) -> None:
        nonlocal seen
        seen += 1
        await exchange.respond(200, body=b"ok")
        # Keep-alive announced, then the server drops the idle connection anyway.
        raise Cut

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, answer_once_per_connection, stats)
            pool = HttpClientPool()
            for _ in range(3):
                async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                    assert await response.read(10) == b"ok"
                await trio.sleep(0.05)
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert seen == 3
    assert stats.connections == 3


def _cut_the_second_request() -> tuple[FakeServerStats, Callable[..., Awaitable[None]]]:
    """A server that answers every request but the second, which it receives whole and then
    drops the connection on, as a server that dies running it does."""
    stats = FakeServerStats()

    async def handler(request: FakeRequest, exchange: FakeExchange) -> None:
        if len(stats.requests) == 2:
            raise Cut
        await exchange.respond(200, body=b"ok")

    return stats, handler


async def test_a_post_cut_after_it_reached_the_server_is_not_sent_again() -> None:
    stats, handler = _cut_the_second_request()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, handler, stats)
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/"
            async with pool.request("POST", url, body=b"first") as response:
                assert await response.read(10) == b"ok"
            with pytest.raises(OutcomeUnknown, match="ended after the POST was sent"):
                async with pool.request("POST", url, body=b"charge"):
                    pass
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert [r.body for r in stats.requests] == [b"first", b"charge"]


async def test_a_post_cut_on_a_fresh_connection_has_an_unknown_outcome() -> None:
    stats = FakeServerStats()

    async def cut(request: FakeRequest, exchange: FakeExchange) -> None:
        raise Cut

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, cut, stats)
            pool = HttpClientPool()
            with pytest.raises(OutcomeUnknown):
                async with pool.request("POST", f"http://127.0.0.1:{port}/", body=b"x"):
                    pass
            nursery.cancel_scope.cancel()
    assert len(stats.requests) == 1


async def test_a_get_cut_on_a_reused_connection_goes_once_more_on_a_fresh_one() -> None:
    stats, handler = _cut_the_second_request()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, handler, stats)
            pool = HttpClientPool()
            for _ in range(2):
                async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                    assert await response.read(10) == b"ok"
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert len(stats.requests) == 3
    assert stats.connections == 2


async def test_a_post_on_an_idle_connection_found_closed_goes_on_a_fresh_one() -> None:
    stats = FakeServerStats()

    async def answer_then_drop(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.respond(200, body=b"ok")
        raise Cut

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, answer_then_drop, stats)
            pool = HttpClientPool()
            for _ in range(2):
                async with pool.request("POST", f"http://127.0.0.1:{port}/") as response:
                    assert await response.read(10) == b"ok"
                # The close reaches the idle socket before the next request is written.
                await trio.sleep(0.05)
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert len(stats.requests) == 2
    assert stats.connections == 2


async def test_chunked_body_is_streamed_piece_by_piece() -> None:
    stats = FakeServerStats()
    release = trio.Event()

    async def chunked(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200, [("content-type", "text/event-stream")])
        await exchange.send(b"first")
        await release.wait()
        await exchange.send(b"second")
        await exchange.end()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, chunked, stats)
            pool = HttpClientPool()
            async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                assert response.header(b"transfer-encoding") == b"chunked"
                assert await response.receive_some() == b"first"
                release.set()
                assert await response.receive_some() == b"second"
                assert await response.receive_some() == b""
                assert response.complete
            # A fully read chunked response leaves the connection reusable.
            async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                release.set()
                assert await response.read(100) == b"firstsecond"
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert stats.connections == 1


async def test_body_over_the_limit_is_refused_and_connection_not_reused() -> None:
    stats = FakeServerStats()

    async def big(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.respond(200, body=b"x" * 1_000_000)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, big, stats)
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/"
            async with pool.request("GET", url) as response:
                assert await response.read(100) is None
            assert pool.idle_connections(split_url(url)[0]) == 0
            await pool.aclose()
            nursery.cancel_scope.cancel()


async def test_silent_server_hits_the_per_read_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stats = FakeServerStats()

    async def stall(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200)
        await exchange.send(b"a")
        await trio.sleep(1000)

    with trio.fail_after(100):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, stall, stats)
            pool = HttpClientPool(read_timeout=5)
            started = trio.current_time()
            with pytest.raises(HttpTimeout):
                async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                    assert await response.receive_some() == b"a"
                    await response.receive_some()
            assert 5 <= trio.current_time() - started < 6
            await pool.aclose()
            nursery.cancel_scope.cancel()


async def test_server_that_never_answers_times_out(autojump_clock: trio.testing.MockClock) -> None:
    stats = FakeServerStats()

    async def mute(request: FakeRequest, exchange: FakeExchange) -> None:
        await trio.sleep(1000)

    with trio.fail_after(100):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, mute, stats)
            pool = HttpClientPool(read_timeout=30)
            with pytest.raises(HttpTimeout):
                async with pool.request(
                    "GET", f"http://127.0.0.1:{port}/", read_timeout=2
                ) as response:
                    await response.read(10)
            nursery.cancel_scope.cancel()


async def test_waiting_for_a_free_connection_has_a_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stats = FakeServerStats()

    async def stream(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200)
        await trio.sleep(1000)

    with trio.fail_after(100):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, stream, stats)
            pool = HttpClientPool(max_connections=1, connect_timeout=3, read_timeout=500)
            url = f"http://127.0.0.1:{port}/"
            async with pool.request("GET", url) as held:
                assert held.status == 200
                with pytest.raises(HttpTimeout, match="No free connection"):
                    async with pool.request("GET", url):
                        pass
            nursery.cancel_scope.cancel()


async def test_server_closing_mid_body_is_a_protocol_error() -> None:
    stats = FakeServerStats()

    async def truncated(request: FakeRequest, exchange: FakeExchange) -> None:
        await exchange.start(200, [("content-length", "100")])
        await exchange.send(b"only a bit")
        raise Cut

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, truncated, stats)
            pool = HttpClientPool()
            with pytest.raises(HttpProtocolError):
                async with pool.request("GET", f"http://127.0.0.1:{port}/") as response:
                    await response.read(1000)
            nursery.cancel_scope.cancel()


async def _refuse_every_body(
    answer: bytes, drained: int, *, task_status: trio.TaskStatus[int]
) -> None:
    """A server that answers each request as soon as its head arrives, reads at most
    ``drained`` bytes of the body, then closes: what a server refusing an oversized body does."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    while True:
        stream = await listeners[0].accept()
        async with stream:
            received = b""
            while b"\r\n\r\n" not in received:
                received += await stream.receive_some(65536)
            await stream.send_all(answer)
            await stream.send_eof()
            while drained > 0 and (data := await stream.receive_some(65536)):
                drained -= len(data)


@pytest.mark.parametrize("drained", [0, 1 << 16], ids=["closes-at-once", "drains-a-little"])
async def test_an_answer_to_a_body_the_server_refuses_reaches_the_caller(drained: int) -> None:
    body = b'{"error":{"code":-32600,"message":"Body exceeds the limit"}}'
    answer = b"HTTP/1.1 413 Content Too Large\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(_refuse_every_body, answer, drained)
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/"
            for _ in range(2):
                async with pool.request("POST", url, body=b"x" * (8 << 20)) as response:
                    assert response.status == 413
                    assert await response.read(1000) == body
                assert pool.idle_connections(split_url(url)[0]) == 0
            await pool.aclose()
            nursery.cancel_scope.cancel()


async def test_an_early_success_answer_lets_the_whole_body_go_out() -> None:
    # Only an answer that refuses the body stops its write: a server that starts a 200 while
    # it reads the body gets all of it.
    size = 8 << 20
    received: list[int] = []

    async def answer_first_then_read(*, task_status: trio.TaskStatus[int]) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        async with await listeners[0].accept() as stream:
            data = b""
            while b"\r\n\r\n" not in data:
                data += await stream.receive_some(65536)
            got = len(data.partition(b"\r\n\r\n")[2])
            await stream.send_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
            while got < size:
                got += len(await stream.receive_some(65536))
            received.append(got)
            await stream.send_all(b"ok")
            await trio.sleep_forever()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(answer_first_then_read)
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/"
            async with pool.request("POST", url, body=b"x" * size) as response:
                assert response.status == 200
                assert await response.read(100) == b"ok"
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert received == [size]


async def test_a_broken_answer_to_a_large_body_is_a_protocol_error() -> None:
    # The head breaks off while the body is still being written: the caller gets the error
    # the pool documents, not an exception group from the write running beside the read.
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(_refuse_every_body, b"HTTP/1.1 200 OK\r\ncontent-le", 0)
            pool = HttpClientPool()
            with pytest.raises(HttpProtocolError):
                async with pool.request("POST", f"http://127.0.0.1:{port}/", body=b"x" * (8 << 20)):
                    pass
            await pool.aclose()
            nursery.cancel_scope.cancel()


async def test_an_address_filter_chooses_the_addresses_connected_to() -> None:
    stats = FakeServerStats()
    seen: list[list[str]] = []

    def nowhere(origin: Origin, addresses: list[Address]) -> list[Address]:
        seen.append([str(address) for address in addresses])
        return []

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, _echo, stats)
            url = f"http://127.0.0.1:{port}/"
            refused = HttpClientPool(address_filter=nowhere)
            with pytest.raises(HttpConnectError, match="no chosen address"):
                async with refused.request("GET", url):
                    pass
            allowed = HttpClientPool(address_filter=lambda origin, addresses: addresses)
            async with allowed.request("GET", url) as response:
                assert await response.read(100) == b"empty"
            await allowed.aclose()
            nursery.cancel_scope.cancel()
    assert seen == [["127.0.0.1"]]
    assert stats.connections == 1


async def test_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pool = HttpClientPool()
    with trio.fail_after(10), pytest.raises(HttpConnectError):
        async with pool.request("GET", f"http://127.0.0.1:{port}/"):
            pass


async def test_https_with_a_trusted_self_signed_certificate() -> None:
    server_context, client_context = tls_contexts("localhost")
    stats = FakeServerStats()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: serve_fake_http(
                    _echo, stats, ssl_context=server_context, task_status=task_status
                )
            )
            pool = HttpClientPool(ssl_context=client_context)
            url = f"https://localhost:{port}/secure"
            for body in (b"one", b"two"):
                async with pool.request("POST", url, body=body) as response:
                    assert await response.read(10) == body
            await pool.aclose()
            # Without trusting the CA, the handshake fails as a connect error.
            strict = HttpClientPool()
            with pytest.raises(HttpConnectError):
                async with strict.request("GET", url):
                    pass
            nursery.cancel_scope.cancel()
    assert stats.connections == 2
    assert stats.requests[0].headers["host"] == f"localhost:{port}"


def test_only_http_urls_are_accepted() -> None:
    with pytest.raises(ValueError):
        split_url("ftp://example.com/")
    origin, target = split_url("https://example.com")
    assert (origin.host_header, target) == (b"example.com", b"/")
    origin, _ = split_url("http://[::1]:8080/a")
    assert origin.host_header == b"[::1]:8080"
