"""``serve_http(..., shutdown=event)``: a graceful stop of the built-in server, and listeners
bound by someone else (as the workers of ``run --workers N`` are given)."""

from __future__ import annotations

from functools import partial

import trio
from http_client_for_tests import open_test_connection
from test_front_ends import EchoApp

from mcptrio.transports.http.serve import serve_http


async def test_a_shutdown_closes_idle_connections_and_answers_busy_ones_then_returns() -> None:
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
                    # The idle keep-alive connection is closed at once.
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
