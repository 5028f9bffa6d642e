"""Requests answered at once, in the task that decoded them: which handlers qualify (their code
can never suspend), which requests (tools/call and a static resource's read, with no middleware
and no task), and that the answer is the one an actor would have given, in a context of its own.
"""

from __future__ import annotations

import contextvars
import functools
import logging
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.protocol.errors import InvalidParams, McpError
from mcptrio.protocol.types import TextContent, TextResourceContents
from mcptrio.server.context import Context
from mcptrio.server.eager import never_suspends
from mcptrio.server.handler import read_handler
from mcptrio.server.middleware import Call, CallNext

from conftest import open_recorded_client

LEAK: contextvars.ContextVar[str] = contextvars.ContextVar("leak", default="unset")


async def returns(a: int) -> int:
    return a + 1


async def awaits() -> None:
    await trio.lowlevel.checkpoint()


async def enters() -> None:
    async with trio.open_nursery():
        pass


async def iterates(items: Any) -> list[Any]:
    return [item async for item in items]


async def loops(items: Any) -> None:
    async for _ in items:
        pass


async def awaits_in_a_comprehension(fns: list[Any]) -> list[Any]:
    return [await fn() for fn in fns]


async def makes_a_coroutine_it_does_not_await() -> Any:
    # Calling an async function without awaiting it cannot suspend this one.
    coroutine = awaits()
    coroutine.close()
    return None


async def async_generator() -> Any:
    yield 1


def plain(a: int) -> int:
    return a


class Holder:
    async def method(self) -> int:
        return 1

    async def __call__(self) -> int:
        return 1


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (returns, True),
        (makes_a_coroutine_it_does_not_await, True),
        (Holder().method, True),
        (awaits, False),
        (enters, False),
        (iterates, False),
        (loops, False),
        (awaits_in_a_comprehension, False),
        (async_generator, False),
        (plain, False),
        (lambda: None, False),
        (functools.partial(returns, 1), False),
        (Holder(), False),
    ],
)
def test_only_async_functions_with_no_await_never_suspend(fn: Any, expected: bool) -> None:
    assert never_suspends(fn) is expected


def test_a_handler_that_takes_the_context_is_not_answered_at_once() -> None:
    async def with_context(ctx: Context, a: int) -> int:
        return a

    assert read_handler(returns, "Tool 'returns'").never_suspends
    assert not read_handler(with_context, "Tool 'with_context'").never_suspends


def eager_server() -> mcptrio.Server:
    server = mcptrio.Server("eager")

    @server.tool()
    async def where() -> str:
        """The task the tool runs in."""
        return trio.lowlevel.current_task().name

    @server.tool()
    async def where_after_waiting() -> str:
        await trio.lowlevel.checkpoint()
        return trio.lowlevel.current_task().name

    @server.tool(task="optional")
    async def where_as_task_or_not() -> str:
        return trio.lowlevel.current_task().name

    @server.tool()
    async def sets_a_variable() -> str:
        before = LEAK.get()
        LEAK.set("set by the tool")
        return before

    @server.tool()
    async def fails(kind: str) -> str:
        if kind == "tool":
            raise mcptrio.ToolError("as a tool error")
        if kind == "mcp":
            raise InvalidParams("as a protocol error")
        raise ValueError("as anything else")

    @server.resource("test://static", mime_type="text/plain")
    async def static() -> str:
        return trio.lowlevel.current_task().name

    @server.resource("test://waits", mime_type="text/plain")
    async def waits() -> str:
        await trio.lowlevel.checkpoint()
        return trio.lowlevel.current_task().name

    server.add_resource("fixed contents", "test://fixed", mime_type="text/plain")
    return server


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def read_text(result: Any) -> str:
    contents = result.contents[0]
    assert isinstance(contents, TextResourceContents)
    return contents.text


ACTOR = "RequestActors._run"
#: The session's reader, where a request read from the transport is answered at once.
READER = "Session.run"


async def test_a_tool_that_never_waits_is_answered_where_it_was_decoded_not_in_an_actor() -> None:
    with trio.fail_after(5):
        async with mcptrio.open_client(eager_server()) as client:
            # The session's reader decoded it, and answers it there.
            assert READER in text(await client.call_tool("where", {}))
            assert READER in text(await client.call_tool("where", {}))
            assert ACTOR in text(await client.call_tool("where_after_waiting", {}))
            assert ACTOR in text(await client.call_tool("where_as_task_or_not", {}))
            assert READER in read_text(await client.read_resource("test://static"))
            assert ACTOR in read_text(await client.read_resource("test://waits"))
            assert read_text(await client.read_resource("test://fixed")) == "fixed contents"


async def test_with_middleware_installed_every_request_goes_to_an_actor() -> None:
    seen: list[str] = []

    async def mw(call: Call, call_next: CallNext) -> Any:
        seen.append(call.method)
        return await call_next(call)

    server = eager_server()
    server.add_middleware(mw)
    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            await client.call_tool("where", {})
            assert ACTOR in text(await client.call_tool("where", {}))
            server.remove_middleware(mw)
            assert READER in text(await client.call_tool("where", {}))
    assert seen.count("tools/call") == 2


async def test_a_tool_answered_at_once_runs_in_a_context_of_its_own() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(eager_server()) as (client, _wire, _session):
            # Set in the caller's task after the session started: not the session's to see.
            LEAK.set("the caller's")
            assert text(await client.call_tool("sets_a_variable", {})) == "unset"
            assert LEAK.get() == "the caller's"
            # What the tool set stayed with its call.
            assert text(await client.call_tool("sets_a_variable", {})) == "unset"


async def test_errors_of_a_tool_answered_at_once_are_answered_as_an_actors_would_be(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(eager_server()) as (client, _wire, _session):
            result = await client.call_tool("fails", {"kind": "tool"})
            assert result.is_error and text(result) == "as a tool error"
            with pytest.raises(McpError) as raised:
                await client.call_tool("fails", {"kind": "mcp"})
            assert raised.value.code == -32602
            with caplog.at_level(logging.ERROR):
                result = await client.call_tool("fails", {"kind": "other"})
            assert result.is_error and "as anything else" in text(result)
            invalid = await client.call_tool("fails", {"kind": 3})
            assert invalid.is_error and "Invalid arguments" in text(invalid)
            # The session is still answering.
            assert text(await client.call_tool("where", {}))


async def test_a_cancelled_caller_is_cancelled_though_its_answer_came_at_once() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(eager_server()) as (client, _wire, _session):
            with trio.CancelScope() as scope:
                scope.cancel()
                await client.call_tool("where", {})
            assert scope.cancelled_caught
            assert text(await client.call_tool("where", {}))


async def test_calls_answered_at_once_still_let_other_tasks_run() -> None:
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await trio.lowlevel.checkpoint()

    with trio.fail_after(5):
        async with (
            mcptrio.open_client(eager_server()) as client,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(other)
            await trio.lowlevel.checkpoint()
            before = turns
            for _ in range(10):
                await client.call_tool("where", {})
            assert turns - before >= 9
            nursery.cancel_scope.cancel()


async def test_a_handler_that_waits_after_all_is_answered_with_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = eager_server()
    # A broken promise (a bug of the server's): every tool call taken as never waiting.
    server._bound_answers_at_once = lambda request: True
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _wire, _session):
            with (
                caplog.at_level(logging.ERROR, "mcptrio.session"),
                pytest.raises(McpError) as raised,
            ):
                await client.call_tool("where_after_waiting", {})
            assert raised.value.code == -32603
            assert "waited" in caplog.text
            assert text(await client.call_tool("where", {}))


class Boom(BaseException):
    """What a handler may raise past ``except Exception`` (as KeyboardInterrupt, SystemExit)."""


async def test_a_base_exception_answered_at_once_ends_the_session_as_in_an_actor() -> None:
    # KeyboardInterrupt, SystemExit and their kind are no answer: raised in the task that
    # decoded the request, they end the session and reach whoever runs it, as they do from a
    # request actor.
    server = mcptrio.Server("boom", max_in_flight=2)

    @server.tool()
    async def explodes() -> str:
        raise Boom

    with trio.fail_after(5), pytest.raises(BaseException) as raised:
        async with mcptrio.open_client(server) as client:
            await client.call_tool("explodes")
    assert (
        raised.group_contains(Boom)
        if isinstance(raised.value, BaseExceptionGroup)
        else (isinstance(raised.value, Boom))
    )


async def _waits_for_the_event() -> str:
    await SWAPPED["event"].wait()
    return "waited"


SWAPPED: dict[str, trio.Event] = {}


async def test_a_handler_whose_code_is_swapped_for_code_that_waits_runs_in_an_actor() -> None:
    # What a hot reloader does: the function judged never to wait now runs other code.
    server = mcptrio.Server("swap")

    @server.tool()
    async def swapped() -> str:
        return "at once"

    swapped.__code__ = _waits_for_the_event.__code__
    event = SWAPPED["event"] = trio.Event()
    answers: list[str] = []
    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client, trio.open_nursery() as nursery:

            async def call() -> None:
                answers.append(text(await client.call_tool("swapped")))

            nursery.start_soon(call)
            await trio.testing.wait_all_tasks_blocked()
            event.set()
    assert answers == ["waited"]
