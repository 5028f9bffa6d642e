"""``serve_http(..., shutdown=event)``: a graceful stop of the built-in server, and listeners
bound by someone else (as the workers of ``run --workers N`` are given)."""

from __future__ import annotations

import contextlib
from functools import partial

import trio
import trio.testing
from http_client_for_tests import open_test_connection
from test_front_ends import EchoApp

from mcptrio.transports.http.engine.server_limits import ServerLimits
from mcptrio.transports.http.serve import serve_http


async def test_a_shutdown_answers_busy_and_idle_connections_then_closes_them_and_returns() -> None:
    app = EchoApp()
    shutdown = trio.Event()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            returned = trio.Event()

            async def serve(task_status: trio.TaskStatus[str]) -> None:
                await serve_http(
                    app, listeners=listeners, shutdown=shutdown, task_status=task_status
                )
                returned.set()

            url = await nursery.start(serve)
            assert url == f"http://127.0.0.1:{port}"
            async with (
                open_test_connection(url) as idle,
                open_test_connection(url) as busy,
            ):
                assert (await idle.request("GET", "/hello")).status == 200
                async with busy.stream("GET", "/stream") as streaming:
                    assert await streaming.next_chunk() == b"data: one\n\n"
                    shutdown.set()
                    await trio.sleep(0.1)
                    # The idle keep-alive connection is not closed under its client: a request
                    # already on its way is answered, and the connection closed after it.
                    late = await idle.request("GET", "/hello")
                    assert late.status == 200
                    assert late.header("connection") == b"close"
                    assert await idle.receive_raw() == b""
                    with trio.move_on_after(0.5):
                        await returned.wait()
                    assert not returned.is_set(), "returned while a response still streamed"
                    app.go.set()
                    assert await streaming.next_chunk() == b"data: two\n\n"
                    assert await streaming.next_chunk() is None
                # Answered, the busy connection is closed too, and the call returns.
                assert await busy.receive_raw() == b""
                await returned.wait()
            connecting = partial(trio.open_tcp_stream, "127.0.0.1", port)
            try:
                stream = await connecting()
            except OSError:
                pass
            else:
                await stream.aclose()
                raise AssertionError("a connection was accepted after the shutdown")


async def test_an_idle_connection_is_closed_at_its_keep_alive_deadline_during_a_shutdown(
    autojump_clock: trio.testing.MockClock,
) -> None:
    shutdown = trio.Event()
    limits = ServerLimits(keep_alive_timeout=5.0)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            returned = trio.Event()

            async def serve(task_status: trio.TaskStatus[str]) -> None:
                await serve_http(
                    EchoApp(), limits=limits, shutdown=shutdown, task_status=task_status
                )
                returned.set()

            url = await nursery.start(serve)
            async with open_test_connection(url) as idle:
                assert (await idle.request("GET", "/hello")).status == 200
                shutdown.set()
                start = trio.current_time()
                assert await idle.receive_raw() == b""
                assert trio.current_time() - start >= 4.9
                await returned.wait()


async def test_a_connection_accepted_by_the_kernel_before_a_shutdown_is_served() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    shutdown = trio.Event()
    shutdown.set()
    with trio.fail_after(10):
        # Connected (the kernel completed the handshake) and its request sent before the server
        # accepts anything; the server then stops at once.
        async with open_test_connection(f"http://127.0.0.1:{port}") as waiting:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    partial(serve_http, EchoApp(), listeners=listeners, shutdown=shutdown)
                )
                answer = await waiting.request("GET", "/hello")
            assert answer.status == 200
            assert answer.header("connection") == b"close"


async def test_a_stopping_server_serves_new_connections_until_it_stops_listening() -> None:
    # A balancer told of the stop at the same moment may still send a connection or two: they
    # are served (without keep-alive), never left to a listener that closes under them.
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    shutdown = trio.Event()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            returned = trio.Event()

            async def serve(task_status: trio.TaskStatus[str]) -> None:
                await serve_http(
                    EchoApp(), listeners=listeners, shutdown=shutdown, task_status=task_status
                )
                returned.set()

            await nursery.start(serve)
            shutdown.set()
            await trio.sleep(0.3)
            async with open_test_connection(url) as late:
                answer = await late.request("GET", "/hello")
                assert answer.status == 200
                assert answer.header("connection") == b"close"
                assert await late.receive_raw() == b""
            assert not returned.is_set()
            await returned.wait()
            with contextlib.suppress(OSError):
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                await stream.aclose()
                raise AssertionError("a connection was accepted after the listener closed")
