"""Request actors reused from one request to the next behave as one task per request would."""

from __future__ import annotations

import contextvars

import trio
import trio.testing

import mcptrio
from mcptrio.protocol.types import TextContent

from conftest import open_recorded_client

seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def text(result: mcptrio.protocol.types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_a_handlers_context_variable_is_not_seen_by_the_next_request() -> None:
    server = mcptrio.Server("ctx")

    @server.tool()
    async def mark(value: str) -> str:
        before = seen.get()
        seen.set(value)
        return before

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("mark", {"value": "first"})) == "unset"
            assert text(await client.call_tool("mark", {"value": "second"})) == "unset"


async def test_a_scope_a_handler_kept_cannot_cancel_a_later_request() -> None:
    server = mcptrio.Server("kept")
    kept: list[trio.CancelScope] = []
    entered = trio.Event()
    release = trio.Event()

    @server.tool()
    async def keep(ctx: mcptrio.Context) -> str:
        kept.append(ctx.cancel_scope)
        return "kept"

    @server.tool()
    async def wait() -> str:
        entered.set()
        await release.wait()
        return "done"

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("keep")) == "kept"
            async with trio.open_nursery() as nursery:

                async def call_wait() -> None:
                    assert text(await client.call_tool("wait")) == "done"

                nursery.start_soon(call_wait)
                await entered.wait()
                kept[0].cancel()
                await trio.sleep(0.01)
                release.set()


async def test_a_deadline_set_on_a_handlers_scope_does_not_reach_the_next_request(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = mcptrio.Server("deadline")

    @server.tool()
    async def hurry(ctx: mcptrio.Context) -> str:
        ctx.cancel_scope.deadline = trio.current_time() + 1
        return "set"

    @server.tool()
    async def slow() -> str:
        await trio.sleep(5)
        return "slept"

    with trio.fail_after(60):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("hurry")) == "set"
            assert text(await client.call_tool("slow")) == "slept"


async def test_a_peer_cancellation_reaches_a_request_run_by_a_reused_actor() -> None:
    server = mcptrio.Server("reuse")
    entered = trio.Event()
    cancelled = trio.Event()

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def wait() -> str:
        entered.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise
        return "never"

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _):
            assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:

                    async def cancel_when_entered() -> None:
                        await entered.wait()
                        scope.cancel()

                    nursery.start_soon(cancel_when_entered)
                    await client.call_tool("wait")
            await cancelled.wait()
            assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
            call = [m for m in wire.client_to_server if m.get("method") == "tools/call"][1]
            assert not [m for m in wire.server_to_client if m.get("id") == call["id"]]


async def test_parked_actors_stay_within_the_in_flight_limit() -> None:
    server = mcptrio.Server("limit", max_in_flight=3)

    @server.tool()
    async def nap() -> str:
        await trio.sleep(0.001)
        return "ok"

    with trio.fail_after(10):
        async with open_recorded_client(server) as (client, _, session):
            async with trio.open_nursery() as nursery:
                for _ in range(20):
                    nursery.start_soon(client.call_tool, "nap")
            assert 1 <= session.statistics().parked_request_actors <= 3
            assert session.statistics().in_flight_incoming == 0
