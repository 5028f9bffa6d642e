"""A server's lifespan: entered before serving by every entry point, shared while open, left
after the serving stops; its value reaches every handler as ``ctx.lifespan``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.protocol.types import TextContent
from mcptrio.server.lifespan import LifespanError
from mcptrio.transports.memory import memory_transport_pair


class Resource:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.log.append("opened")


def counted_server(log: list[str]) -> mcptrio.Server:
    @asynccontextmanager
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[Resource]:
        resource = Resource(log)
        try:
            yield resource
        finally:
            log.append("closed")

    server = mcptrio.Server("life", lifespan=lifespan)

    @server.tool
    async def which(ctx: mcptrio.Context) -> str:
        log.append("served")
        return type(ctx.lifespan).__name__

    @server.tool
    def which_in_a_thread(ctx: mcptrio.Context) -> str:
        return type(ctx.lifespan).__name__

    return server


async def call(client: mcptrio.Client, tool: str) -> str:
    result = await client.call_tool(tool, {})
    first = result.content[0]
    assert isinstance(first, TextContent), result
    return first.text


async def test_the_lifespan_opens_before_serving_and_closes_after_in_memory() -> None:
    log: list[str] = []
    with trio.fail_after(5):
        async with mcptrio.open_client(counted_server(log)) as client:
            assert log == ["opened"]
            assert await call(client, "which") == "Resource"
            assert await call(client, "which_in_a_thread") == "Resource"
    assert log == ["opened", "served", "closed"]


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_serve_http_opens_the_lifespan_before_it_reports_its_url(scheme: str) -> None:
    log: list[str] = []
    server = counted_server(log)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http)
            assert log == ["opened"]
            for era in (HANDSHAKE_ERA, None):
                if era is None and scheme == "ws":
                    continue
                options: dict[str, Any] = {} if era is None else {"revisions": era}
                target = url.replace("http", scheme, 1) + "/mcp"
                async with mcptrio.open_client(target, **options) as client:
                    assert await call(client, "which") == "Resource"
            nursery.cancel_scope.cancel()
    served = ["served", "served"] if scheme == "http" else ["served"]
    assert log == ["opened", *served, "closed"]


async def test_entry_points_inside_open_lifespan_share_one() -> None:
    log: list[str] = []
    server = counted_server(log)
    with trio.fail_after(10):
        async with server.open_lifespan() as resource, trio.open_nursery() as nursery:
            assert isinstance(resource, Resource)
            url = await nursery.start(server.serve_http)
            async with (
                mcptrio.open_client(server) as in_memory,
                mcptrio.open_client(url + "/mcp") as over_http,
            ):
                assert await call(in_memory, "which") == "Resource"
                assert await call(over_http, "which") == "Resource"
            nursery.cancel_scope.cancel()
    assert log == ["opened", "served", "served", "closed"]


async def test_a_lifespan_that_fails_to_start_fails_serving_clearly() -> None:
    @asynccontextmanager
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[None]:
        raise OSError("database unreachable")
        yield

    server = mcptrio.Server("broken", lifespan=lifespan)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            with pytest.raises(LifespanError) as caught:
                await nursery.start(server.serve_http)
    assert str(caught.value) == (
        "The lifespan of server 'broken' failed to start: OSError: database unreachable"
    )
    assert isinstance(caught.value.__cause__, OSError)
    assert isinstance(caught.value, mcptrio.McpError)


async def test_a_failing_lifespan_fails_the_in_memory_client_too() -> None:
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[None]:
        raise ValueError("no config")
        yield

    server = mcptrio.Server("broken", lifespan=lifespan)
    with trio.fail_after(5), pytest.raises(LifespanError, match="no config"):
        async with mcptrio.open_client(server):
            pass


async def test_an_async_generator_function_is_a_lifespan() -> None:
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[dict[str, str]]:
        yield {"name": server.info.name}

    server = mcptrio.Server("gen", lifespan=lifespan)

    @server.tool
    async def name(ctx: mcptrio.Context) -> str:
        return str(ctx.lifespan["name"])

    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            assert await call(client, "name") == "gen"


async def test_a_lifespan_task_lives_as_long_as_the_serving() -> None:
    ticks: list[float] = []

    @asynccontextmanager
    async def lifespan(server: mcptrio.Server) -> AsyncIterator[list[float]]:
        async def tick() -> None:
            while True:
                ticks.append(trio.current_time())
                await trio.sleep(1)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(tick)
            yield ticks
            nursery.cancel_scope.cancel()

    server = mcptrio.Server("ticking", lifespan=lifespan)
    with trio.fail_after(5):
        async with mcptrio.open_client(server):
            await trio.sleep(0.01)
        count = len(ticks)
        await trio.sleep(0.01)
    assert count >= 1 and len(ticks) == count


async def test_without_a_lifespan_the_context_has_none() -> None:
    server = mcptrio.Server("plain")

    @server.tool
    async def value(ctx: mcptrio.Context) -> str:
        return repr(ctx.lifespan)

    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            assert await call(client, "value") == "None"


def lifespan_reading_server() -> mcptrio.Server:
    """A counted server whose tool ``read`` answers the lifespan's repr, or what reading it
    raised."""
    server = counted_server([])

    @server.tool
    async def read(ctx: mcptrio.Context) -> str:
        try:
            return repr(ctx.lifespan)
        except RuntimeError as exc:
            return str(exc)

    return server


async def test_a_session_run_outside_any_entry_point_is_told_the_lifespan_is_not_running() -> None:
    server = lifespan_reading_server()
    client_end, server_end = memory_transport_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(server.session(server_end).run)
            async with mcptrio.open_client(client_end) as client:
                message = await call(client, "read")
            nursery.cancel_scope.cancel()
    assert message.startswith("The lifespan of server 'life' is not running")


async def test_an_entry_point_that_outlives_the_lifespan_owner_is_told_it_ended() -> None:
    server = lifespan_reading_server()
    with trio.fail_after(5):
        async with trio.open_nursery() as outer:
            owner = trio.CancelScope()

            async def own(task_status: trio.TaskStatus[None]) -> None:
                with owner:
                    async with server.open_lifespan():
                        task_status.started()
                        await trio.sleep_forever()

            await outer.start(own)
            async with mcptrio.open_client(server) as client:
                owner.cancel()
                await trio.lowlevel.checkpoint()
                message = await call(client, "read")
            # A later entry point opens it afresh.
            async with mcptrio.open_client(server) as client:
                assert await call(client, "which") == "Resource"
    assert message.startswith("The lifespan of server 'life' has ended")


def test_a_lifespan_must_be_callable() -> None:
    with pytest.raises(TypeError, match="function of the server"):
        mcptrio.Server("x", lifespan=42)  # type: ignore[arg-type]


async def test_the_free_serve_functions_open_the_lifespans_of_their_servers() -> None:
    from mcptrio.transports.http.serve import serve_http
    from mcptrio.transports.websocket_server import serve_websocket

    log_a: list[str] = []
    log_b: list[str] = []
    a, b = counted_server(log_a), counted_server(log_b)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, {"/a": a, "/b": b})
            assert log_a == log_b == ["opened"]
            async with mcptrio.open_client(url + "/b/mcp") as client:
                assert await call(client, "which") == "Resource"
            nursery.cancel_scope.cancel()
        assert log_a == ["opened", "closed"]
        assert log_b == ["opened", "served", "closed"]
        log_a.clear()
        async with trio.open_nursery() as nursery:
            ws_url = await nursery.start(serve_websocket, a)
            async with mcptrio.open_client(ws_url, revisions=HANDSHAKE_ERA) as client:
                assert await call(client, "which") == "Resource"
            nursery.cancel_scope.cancel()
        assert log_a == ["opened", "served", "closed"]


async def test_serve_websocket_fails_clearly_when_the_lifespan_cannot_start() -> None:
    from mcptrio.transports.websocket_server import serve_websocket

    async def lifespan(server: mcptrio.Server) -> AsyncIterator[None]:
        raise OSError("no cache")
        yield

    server = mcptrio.Server("broken-ws", lifespan=lifespan)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            with pytest.raises(LifespanError, match="no cache"):
                await nursery.start(serve_websocket, server)
