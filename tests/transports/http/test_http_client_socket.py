"""The HTTP client's plain-TCP stream: what its fast path skips, and what it must still do."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import trio
import trio.testing
from fake_server import FakeExchange, FakeRequest, FakeServerStats, serve_fake_http

from mcptrio.transports.http.engine.client_pool import HttpClientPool, split_url
from mcptrio.transports.http.engine.client_socket import ConnectionStream


@pytest.fixture
def pair() -> Iterator[tuple[ConnectionStream, socket.socket]]:
    """A client stream and the peer's end, a plain blocking socket this test drives."""
    ours, peer = socket.socketpair()
    with peer:
        stream = ConnectionStream(ours)
        yield stream, peer
        ours.close()


class _Steps(trio.abc.Instrument):
    """Counts the steps of one task: a task that never yields runs in a single step."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task = task
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


async def test_a_write_in_a_cancelled_scope_sends_nothing(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    stream, peer = pair
    with trio.fail_after(5):
        with trio.CancelScope() as scope:
            scope.cancel()
            await stream.send_all(b"POST / HTTP/1.1\r\n\r\n")
        assert scope.cancelled_caught
        peer.setblocking(False)
        with pytest.raises(BlockingIOError):
            peer.recv(100)


async def test_the_read_after_a_write_waits_for_the_answer(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    stream, peer = pair
    with trio.fail_after(5):
        await stream.send_all(b"ping")
        async with trio.open_nursery() as nursery:

            async def answer_later() -> None:
                await trio.sleep(0.05)
                assert peer.recv(100) == b"ping"
                peer.sendall(b"pong")

            nursery.start_soon(answer_later)
            assert await stream.receive_some() == b"pong"


async def test_an_answer_already_there_when_the_request_is_written_is_read(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    # The fast path's bet is that the answer comes after the write; a peer that spoke first
    # (a 408 before closing) must still be heard, not waited for.
    stream, peer = pair
    peer.sendall(b"early")
    with trio.fail_after(5):
        await stream.send_all(b"late")
        assert await stream.receive_some() == b"early"


async def test_a_read_of_bytes_already_there_lets_other_tasks_run(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    # Only the read after a write skips its checkpoint (its wait was one): a stream whose bytes
    # keep coming must not hold the scheduler.
    stream, peer = pair
    await stream.send_all(b"request")
    peer.sendall(b"head")
    assert await stream.receive_some() == b"head"
    peer.sendall(b"body")
    steps = _Steps(trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(steps)
    try:
        assert await stream.receive_some() == b"body"
    finally:
        trio.lowlevel.remove_instrument(steps)
    assert steps.steps == 1  # the step that ends the read: it yielded once before


async def test_closing_wakes_a_read_in_progress(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    stream, _ = pair
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:

            async def read() -> None:
                with pytest.raises(trio.ClosedResourceError):
                    await stream.receive_some()

            nursery.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()
            await stream.aclose()
        with pytest.raises(trio.ClosedResourceError):
            await stream.send_all(b"more")


async def test_a_peer_that_resets_breaks_the_stream(
    pair: tuple[ConnectionStream, socket.socket],
) -> None:
    stream, peer = pair
    peer.close()
    with trio.fail_after(5), pytest.raises(trio.BrokenResourceError):
        for _ in range(100):
            await stream.send_all(b"x" * 65536)


async def _echo(request: FakeRequest, exchange: FakeExchange) -> None:
    await exchange.respond(200, [("content-type", "text/plain")], request.body or b"")


async def test_a_pool_exchange_goes_through_the_scheduler_although_its_write_does_not() -> None:
    # The write skips the checkpoint Trio's streams end with, and the read of a body that came
    # with its head skips one too, because the pool reads the answer's head right after the
    # write, and that read waits: an exchange still yields to other tasks.
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, _echo, FakeServerStats())
            pool = HttpClientPool()
            url = f"http://127.0.0.1:{port}/x"
            async with pool.request("POST", url, body=b"warm") as response:
                assert await response.read(100) == b"warm"
            origin, _ = split_url(url)
            assert pool.idle_connections(origin) == 1
            steps = _Steps(trio.lowlevel.current_task())
            trio.lowlevel.add_instrument(steps)
            try:
                async with pool.request("POST", url, body=b"again") as response:
                    assert await response.read(100) == b"again"
            finally:
                trio.lowlevel.remove_instrument(steps)
            assert steps.steps >= 1
            await pool.aclose()
            nursery.cancel_scope.cancel()


def test_readiness_is_read_for_a_descriptor_past_select_s_limit() -> None:
    """A process with many files open (a gateway, a server holding thousands of sessions) gives
    its connections descriptors past 1024, which ``select.select`` refuses."""
    spare = [socket.socket() for _ in range(1100)]
    try:
        ours, peer = socket.socketpair()
        with ours, peer:
            assert ours.fileno() > 1024
            stream = ConnectionStream(ours)
            assert not stream.is_readable()
            peer.send(b"x")
            assert stream.is_readable()
    finally:
        for sock in spare:
            sock.close()
