"""Adversarial review of requests answered at once (review-eager): reproductions.

Each test states what it shows; those marked ``xfail(strict=True)`` reproduce a finding (they
fail today, and would pass once it is fixed).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.client.options import Revisions
from mcptrio.protocol.errors import McpError
from mcptrio.protocol.types import TextContent

HANDSHAKE_ERA = Revisions(protocol_version="2025-11-25")


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


class Boom(BaseException):
    """A BaseException a handler raises (KeyboardInterrupt, SystemExit and friends)."""


def servers() -> tuple[mcptrio.Server, dict[str, Any]]:
    server = mcptrio.Server("review")
    shared: dict[str, Any] = {"calls": 0}

    @server.tool()
    async def eager() -> str:
        shared["calls"] += 1
        return "eager"

    @server.tool()
    async def actor() -> str:
        shared["calls"] += 1
        await trio.lowlevel.checkpoint()
        return "actor"

    @server.tool()
    async def raises_base_eager() -> str:
        raise Boom("eager")

    @server.tool()
    async def raises_base_actor() -> str:
        await trio.lowlevel.checkpoint()
        raise Boom("actor")

    return server, shared


# ----------------------------------------------------------------- timeout=0


async def test_timeout_zero_times_out_for_a_tool_in_an_actor(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _ = servers()
    with trio.fail_after(30):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("actor")
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("actor", timeout=0)


@pytest.mark.xfail(strict=True, reason="finding 3: timeout=0 answered, not timed out, if eager")
async def test_timeout_zero_times_out_for_a_tool_answered_at_once_too(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _ = servers()
    with trio.fail_after(30):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("eager")
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("eager", timeout=0)


# ------------------------------------------------------------ BaseException


async def test_a_base_exception_of_an_eager_handler_in_process() -> None:
    # In an actor, a BaseException of a handler ends the server's session (its nursery); the
    # client's caller sees the session end. Answered at once in process, it is raised in the
    # *client caller's own task*, and the server's session goes on with the slot taken.
    server, _ = servers()
    outcome: list[str] = []
    with trio.fail_after(10):
        try:
            async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
                await client.call_tool("eager")
                try:
                    await client.call_tool("raises_base_eager")
                except Boom:
                    outcome.append("Boom raised in the client caller's task")
                stats = next(iter(server_sessions(server))).statistics()
                outcome.append(f"in flight after: {stats.in_flight_incoming}")
        except BaseException as exc:
            outcome.append(f"open_client raised {type(exc).__name__}")
    print(outcome)
    assert outcome[:2] == ["Boom raised in the client caller's task", "in flight after: 1"]


@pytest.mark.xfail(strict=True, reason="finding 4: each BaseException leaks an in-flight slot")
async def test_base_exceptions_of_eager_handlers_do_not_starve_the_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # After max_in_flight of them, the in-process session takes no request any more: the next
    # call waits for a slot that is never freed.
    server, _ = servers()
    server.max_in_flight = 2
    with trio.fail_after(60):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("eager")
            for _ in range(2):
                with pytest.raises(Boom):
                    await client.call_tool("raises_base_eager")
            assert text(await client.call_tool("eager", timeout=5)) == "eager"


def server_sessions(server: mcptrio.Server) -> Any:
    return [state.session for state in server.session_states()]


# ------------------------------------------------------------ broken promise

EVENTS: dict[str, trio.Event] = {}


async def _waits_on_event() -> str:
    await EVENTS["swap"].wait()
    return "waited"


@pytest.mark.xfail(strict=True, reason="finding 1: a broken promise leaves the task in a lot")
async def test_a_broken_promise_parked_on_an_event_does_not_corrupt_the_caller_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A code swap after registration (what a hot reloader such as jurigged does): the tool now
    # waits on an Event. The promise is broken; the module says the coroutine is closed and
    # the request answered -32603, "never left waiting where nothing would wake it". But
    # Event.wait put the *current task* (here, the client caller's) in the event's parking lot
    # before yielding, and close() never runs the abort function: setting the event later
    # reschedules a task that is not blocked.
    server = mcptrio.Server("swap")
    event = EVENTS["swap"] = trio.Event()

    @server.tool()
    async def swapped() -> str:
        return "eager"

    swapped.__code__ = _waits_on_event.__code__

    with trio.fail_after(10):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.ping()
            with caplog.at_level(logging.ERROR), pytest.raises(McpError) as raised:
                await client.call_tool("swapped")
            assert raised.value.code == -32603
            event.set()  # reschedules the caller's task, which is running
            await trio.sleep(0.01)
            await client.ping()


# ---------------------------------------------------------------- stack depth


def _depth() -> int:
    frame: Any = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _recurse(n: int) -> int:
    return 0 if n == 0 else 1 + _recurse(n - 1)


@pytest.mark.xfail(strict=True, reason="finding 6: an eager handler runs at its caller's depth")
async def test_an_eager_handler_has_the_stack_an_actor_would_have() -> None:
    # In an actor a handler starts about 11 frames deep; answered at once in process it starts
    # at its caller's depth plus about 14 (up to ~115, the hand-off's limit being 100), so a
    # handler that recurses deep enough fails only when answered at once.
    server = mcptrio.Server("deep")

    @server.tool()
    async def recurses(n: int) -> int:
        return _recurse(n)

    async def deep(levels: int) -> int:
        if levels:
            return await deep(levels - 1)
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("recurses", {"n": 1})
            result = await client.call_tool(
                "recurses", {"n": sys.getrecursionlimit() - _depth() + 20}
            )
            return 0 if result.is_error else 1

    with trio.fail_after(10):
        assert await deep(40) == 1
