"""A request never sees the context variables of an earlier one, on every path out of a handler:
answered, cancelled by the peer, cancelled by itself, or bound to values that refuse comparison."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

import mcptrio
from mcptrio.protocol.errors import McpError
from mcptrio.protocol.types import TextContent
from mcptrio.transports.memory import memory_transport_pair

from conftest import RecordingTransport, open_recorded_client

mark: contextvars.ContextVar[str] = contextvars.ContextVar("review_mark", default="unset")


def text(result: mcptrio.protocol.types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def tools_with_a_marking_handler(server: mcptrio.Server, entered: trio.Event) -> None:
    @server.tool()
    async def read() -> str:
        return mark.get()

    @server.tool()
    async def mark_then_wait() -> str:
        mark.set("leaked")
        entered.set()
        await trio.sleep_forever()
        return "never"


async def test_a_context_variable_set_by_a_peer_cancelled_handler_is_not_seen_next() -> None:
    server = mcptrio.Server("review-cancel-ctx")
    entered = trio.Event()
    tools_with_a_marking_handler(server, entered)
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _):
            # One actor answers this, parks, and is the only one parked afterwards.
            assert text(await client.call_tool("read")) == "unset"
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:

                    async def cancel_when_entered() -> None:
                        await entered.wait()
                        scope.cancel()

                    nursery.start_soon(cancel_when_entered)
                    await client.call_tool("mark_then_wait")
            assert text(await client.call_tool("read")) == "unset"
            # Checked after the next call: the writer may not have sent it before (the
            # notification is queued ahead of that call, so it is on the wire by now).
            assert "notifications/cancelled" in wire.methods_sent_by_client()


async def test_a_context_variable_set_by_a_handler_that_cancelled_itself_is_not_seen_next() -> None:
    server = mcptrio.Server("review-self-cancel-ctx")

    @server.tool()
    async def read() -> str:
        return mark.get()

    @server.tool()
    async def mark_and_give_up(ctx: mcptrio.Context) -> str:
        mark.set("leaked")
        ctx.cancel_scope.cancel()
        await trio.lowlevel.checkpoint()
        return "never"

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("read")) == "unset"
            with pytest.raises(McpError):
                await client.call_tool("mark_and_give_up")
            assert text(await client.call_tool("read")) == "unset"


async def test_a_handler_that_cancels_its_own_scope_and_sets_a_context_variable_answers(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = mcptrio.Server("review-lost-answer")

    @server.tool()
    async def read() -> str:
        return mark.get()

    @server.tool()
    async def mark_cancel_and_return(ctx: mcptrio.Context) -> str:
        # Fails at e7b7ad5 (9b8d15c sent this answer inside the cancelled scope, so it was lost
        # and the actor parked with the changed context); passes with the answer sent outside.
        # No checkpoint after the cancel: the handler returns normally, so it must answer
        # ("a handler that cancels its own scope still answers", 4c46049).
        mark.set("leaked")
        ctx.cancel_scope.cancel()
        return "done"

    client_end, server_end = memory_transport_pair()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            # A server end with no send_nowait: answers go through the writer's channel (as
            # over stdio or HTTP), and handing one to it is a checkpoint.
            await nursery.start(server.serve_session, RecordingTransport(server_end))
            async with mcptrio.open_client(client_end) as client:
                assert text(await client.call_tool("read")) == "unset"
                result = await client.call_tool("mark_cancel_and_return", timeout=10)
                assert text(result) == "done"
                assert text(await client.call_tool("read", timeout=10)) == "unset"
            nursery.cancel_scope.cancel()


class RefusesComparison:
    """A value whose ``==`` raises, as numpy arrays' truth value does."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value of this object is ambiguous")

    __hash__ = object.__hash__


array_like: contextvars.ContextVar[Any] = contextvars.ContextVar("review_array_like")


async def test_a_context_value_that_refuses_comparison_does_not_end_the_session() -> None:
    server = mcptrio.Server("review-eq-raises")

    @server.tool()
    async def replace() -> str:
        array_like.set(RefusesComparison())
        return "replaced"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    # The session (started in this task's context) inherits a value for the variable.
    array_like.set(RefusesComparison())
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("replace")) == "replaced"
            assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"


box: contextvars.ContextVar[list[str]] = contextvars.ContextVar("review_box")


async def test_an_equal_object_a_handler_bound_is_not_seen_by_the_next_request() -> None:
    server = mcptrio.Server("review-eq-identity")
    session_box: list[str] = []
    bound: list[list[str]] = []

    @server.tool()
    async def rebind() -> str:
        fresh: list[str] = []
        bound.append(fresh)
        box.set(fresh)
        return "rebound"

    @server.tool()
    async def whose() -> str:
        current = box.get()
        if current is session_box:
            return "session"
        return "handler" if any(current is b for b in bound) else "other"

    box.set(session_box)
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _, _):
            assert text(await client.call_tool("rebind")) == "rebound"
            assert text(await client.call_tool("whose")) == "session"
