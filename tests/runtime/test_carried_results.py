"""In process, a result crosses unencoded (the in-memory transport's ``carry_results``): whole,
in order with everything sent before it, encoded after all when the pipe is full, in both
eras."""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import Handlers
from mcptrio.protocol.codec import CarriedResult
from mcptrio.protocol.types import CallToolResult, Root, TextContent
from mcptrio.runtime.transport import FailedRequest, Frame, Outgoing, Transport, TransportAbilities
from mcptrio.server.context import Context
from mcptrio.transports.memory import memory_transport_pair

BIG = "y" * 200_000


class Tap:
    """Passes everything through; notes what each message received was: ``("carried", id)``,
    ``("frame", id)`` for an answer, ``("frame", method)`` for anything else."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.seen: list[tuple[str, object]] = []

    def abilities(self) -> TransportAbilities:
        return TransportAbilities()

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        item = await self.inner.receive()
        if isinstance(item, CarriedResult):
            self.seen.append(("carried", item.id))
        elif isinstance(item, bytes):
            message = json.loads(item)
            self.seen.append(("frame", message.get("method", message.get("id"))))
        return item

    async def send(self, frames: Sequence[Outgoing]) -> None:
        await self.inner.send(frames)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def answers(self, kind: str) -> list[object]:
        return [key for how, key in self.seen if how == kind and isinstance(key, int)]


@asynccontextmanager
async def connected(
    server: mcptrio.Server, client_end: Transport, server_end: Transport, **options: Any
) -> AsyncIterator[mcptrio.Client]:
    """``server`` serving ``server_end``, and a client of it on ``client_end``."""
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_session, server_end)
        async with mcptrio.open_client(client_end, **options) as client:
            yield client
        nursery.cancel_scope.cancel()


def make_server() -> mcptrio.Server:
    server = mcptrio.Server("carried")

    @server.tool()
    def big() -> str:
        return BIG

    @server.tool()
    async def steps(ctx: Context, n: int) -> int:
        for i in range(3):
            await ctx.report_progress(i, 3)
        return n

    @server.tool()
    async def roots(ctx: Context) -> str:
        return " ".join(root.uri for root in await ctx.list_roots())

    return server


async def test_in_process_results_reach_the_client_unencoded_and_whole() -> None:
    client_end, server_end = memory_transport_pair(carry_results=True)
    tap = Tap(client_end)
    with trio.fail_after(10):
        async with connected(make_server(), tap, server_end, revisions=HANDSHAKE_ERA) as client:
            result = await client.call_tool("big")
            tools = await client.list_tools()
    assert result.content == [TextContent(text=BIG)]
    assert {tool.name for tool in tools.tools} == {"big", "steps", "roots"}
    # Only initialize's answer (made by the protocol layer, id 1) came as a frame.
    assert tap.answers("frame") == [1] and len(tap.answers("carried")) >= 2


async def test_a_full_pipe_sends_answers_as_frames_each_after_its_progress() -> None:
    client_end, server_end = memory_transport_pair(buffer=1, carry_results=True)
    tap = Tap(client_end)
    progress: dict[int, list[float]] = {}

    async def call(client: mcptrio.Client, n: int) -> None:
        def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.setdefault(n, []).append(done)

        assert (await client.call_tool("steps", {"n": n}, on_progress=on_progress)).content == [
            TextContent(text=str(n))
        ]
        # Every progress notification came before the answer: none is left over.
        assert progress[n] == [0, 1, 2]

    with trio.fail_after(10):
        async with (
            connected(make_server(), tap, server_end, revisions=HANDSHAKE_ERA) as client,
            trio.open_nursery() as calls,
        ):
            for n in range(30):
                calls.start_soon(call, client, n)
    assert sorted(progress) == list(range(30))
    assert tap.answers("frame"), "no answer met a full pipe: the test did not test it"
    assert tap.answers("carried")


async def test_the_client_answers_the_server_unencoded_too() -> None:
    client_end, server_end = memory_transport_pair(carry_results=True)
    tap = Tap(server_end)
    handlers = Handlers(roots=[Root(uri="file:///a"), Root(uri="file:///b")])
    with trio.fail_after(10):
        async with connected(
            make_server(), client_end, tap, revisions=HANDSHAKE_ERA, handlers=handlers
        ) as client:
            result = await client.call_tool("roots")
    assert result.content == [TextContent(text="file:///a file:///b")]
    # The server's roots/list is answered unencoded (its own answers are frames: Tap has no
    # send_carried_nowait).
    assert tap.answers("carried")


async def test_the_stateless_era_in_process_carries_its_answers_too() -> None:
    client_end, server_end = memory_transport_pair(carry_results=True)
    tap = Tap(client_end)
    with trio.fail_after(10):
        handlers = Handlers(roots=[Root(uri="file:///a")])
        async with connected(make_server(), tap, server_end, handlers=handlers) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("big")
            # An input-required answer (the client's roots asked for, in the stateless
            # era's way) is carried and read as one as well.
            roots = await client.call_tool("roots")
    assert result.content == [TextContent(text=BIG)]
    assert roots.content == [TextContent(text="file:///a")]
    assert tap.answers("carried")


async def test_a_bare_pair_carries_only_frames() -> None:
    client_end, server_end = memory_transport_pair()
    tap = Tap(client_end)
    with trio.fail_after(10):
        async with connected(make_server(), tap, server_end, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("big")
    assert tap.answers("carried") == [] and tap.answers("frame")


def awkward_server() -> mcptrio.Server:
    server = mcptrio.Server("awkward")

    @server.tool()
    def point() -> tuple[int, int]:
        return (1, 2)

    @server.tool()
    async def unwritable(ctx: Context) -> CallToolResult:
        for i in range(5):
            await ctx.report_progress(i, 5)
        return CallToolResult(content=[TextContent(text="bad \ud800 text")])

    return server


async def test_in_process_a_result_reads_as_it_would_from_the_wire() -> None:
    # A tuple is carried as JSON would carry it: an array, which the client's output-schema
    # check accepts (a tuple would fail it).
    with trio.fail_after(10):
        async with mcptrio.open_client(awkward_server(), revisions=HANDSHAKE_ERA) as client:
            result = await client.call_tool("point")
    assert result.structured_content == {"result": [1, 2]}


async def test_a_result_no_frame_can_hold_is_an_error_answer_and_the_session_goes_on() -> None:
    client_end, server_end = memory_transport_pair(buffer=1, carry_results=True)

    async def slow_progress(done: float, total: float | None, message: str | None) -> None:
        await trio.sleep(0.001)

    with trio.fail_after(10):
        async with connected(
            awkward_server(), client_end, server_end, revisions=HANDSHAKE_ERA
        ) as client:
            with pytest.raises(mcptrio.McpError) as failed:
                await client.call_tool("unwritable", on_progress=slow_progress)
            assert failed.value.code == -32603
            assert (await client.call_tool("point")).structured_content == {"result": [1, 2]}


async def call_after_waking_a_task(
    client: mcptrio.Client, nursery: trio.Nursery, order: list[str], name: str
) -> None:
    """Call tool ``name`` just after waking a fresh task, which notes ``"woken"`` in its step."""
    event = trio.Event()
    nursery.start_soon(note_when_set, event, order)
    await trio.testing.wait_all_tasks_blocked()
    event.set()
    await client.call_tool(name)


async def note_when_set(event: trio.Event, order: list[str]) -> None:
    """A task that notes ``"woken"`` in its first step after ``event`` is set."""
    await event.wait()
    order.append("woken")


async def test_a_task_the_handler_woke_runs_before_its_caller_resumes() -> None:
    # The answer may skip the client's reader only when nothing else is ready to run: a task
    # the handler woke (or started) still runs its step before the caller, as by way of the
    # reader. Trio runs the tasks of one scheduler pass in a random order: 50 tries.
    server = mcptrio.Server("wakes")
    order: list[str] = []
    wake: list[trio.Event] = []

    @server.tool()
    async def ring() -> str:
        wake[-1].set()
        return "rung"

    with trio.fail_after(10):
        async with (
            mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client,
            trio.open_nursery() as nursery,
        ):
            for _ in range(50):
                wake.append(trio.Event())
                nursery.start_soon(note_when_set, wake[-1], order)
                await trio.testing.wait_all_tasks_blocked()
                await client.call_tool("ring")
                order.append("caller")
    assert order == ["woken", "caller"] * 50


async def test_a_task_woken_before_a_call_runs_before_its_handler_starts() -> None:
    # The request may skip the server's reader only when nothing else is ready to run: a task
    # the caller woke just before calling still runs its step before the handler starts (in an
    # actor: this handler waits).
    server = mcptrio.Server("ordered")
    order: list[str] = []

    @server.tool()
    async def mark() -> str:
        order.append("handler")
        await trio.lowlevel.checkpoint()
        return "marked"

    with trio.fail_after(10):
        async with (
            mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client,
            trio.open_nursery() as nursery,
        ):
            await client.call_tool("mark")
            order.clear()
            for _ in range(50):
                await call_after_waking_a_task(client, nursery, order, "mark")
    assert order == ["woken", "handler"] * 50


async def test_a_handler_never_runs_in_its_in_process_callers_task() -> None:
    # In process, a request is taken by the server session's reader, as from any other
    # transport: its handler runs there (answered at once) or in a request actor, never in
    # the task of the client that called it.
    server = mcptrio.Server("ordered")
    where: list[trio.lowlevel.Task] = []

    @server.tool()
    async def mark() -> str:
        where.append(trio.lowlevel.current_task())
        return "marked"

    with trio.fail_after(10):
        async with (
            mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client,
            trio.open_nursery() as nursery,
        ):
            order: list[str] = []
            for _ in range(20):
                await call_after_waking_a_task(client, nursery, order, "mark")
            assert order == ["woken"] * 20
    assert len(where) == 20
    assert trio.lowlevel.current_task() not in where


async def test_a_handler_runs_in_the_servers_context_not_its_callers() -> None:
    # A request taken in the caller's task starts in a parked actor, which runs in its own
    # context: what the caller set after the session opened is not seen by the handler.
    seen: list[str] = []
    server = mcptrio.Server("context")

    @server.tool()
    async def look() -> str:
        seen.append(CALLER_VAR.get())
        return "looked"

    with trio.fail_after(10):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("look")
            CALLER_VAR.set("the caller's")
            for _ in range(3):
                await client.call_tool("look")
                await client.ping()
    assert seen == ["unset"] * 4


CALLER_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("caller_var", default="unset")


async def test_a_call_whose_timeout_has_run_out_times_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A caller its deadline has woken gives up, as by way of the reader: the answer is not
    # handed to it in the actor's task after all.
    server = mcptrio.Server("late")

    @server.tool()
    async def quick() -> str:
        await trio.lowlevel.checkpoint()
        return "done"

    @server.tool()
    async def at_once() -> str:
        return "done"

    with trio.fail_after(30):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("quick")
            for _ in range(40):
                with pytest.raises(mcptrio.RequestTimeout):
                    await client.call_tool("quick", timeout=0)
                await client.ping()
            # Answered at once, in the caller's task: its checkpoint finds the deadline gone.
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("at_once", timeout=0)
            assert (await client.call_tool("at_once", timeout=5)).content


async def test_a_call_returns_after_its_own_progress_callback(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The client's reader is still in the call's on_progress when the answer comes: the answer
    # waits for it (is not handed to the caller past a reader that is busy).
    server = mcptrio.Server("progress")
    seen: list[str] = []

    @server.tool()
    async def work(ctx: Context) -> int:
        await ctx.report_progress(0, 1)
        await trio.sleep(0.001)
        return 1

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        await trio.sleep(0.005)
        seen.append("progress")

    with trio.fail_after(30):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            for _ in range(20):
                await client.call_tool("work", on_progress=on_progress)
                seen.append("returned")
                await trio.sleep(0.01)
    assert seen == ["progress", "returned"] * 20


async def test_a_request_waits_for_the_notification_the_server_is_reading(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The server's reader is in a notification's middleware chain, and reads nothing more
    # until it returns: a request sent meanwhile is not taken past it.
    server = mcptrio.Server("middleware")
    order: list[str] = []

    async def slow_on_notifications(call: Any, call_next: Any) -> Any:
        if call.request_id is None and call.method == "notifications/roots/list_changed":
            await trio.sleep(0.005)
            order.append("notification")
        return await call_next(call)

    server.add_middleware(slow_on_notifications)

    @server.tool()
    async def mark() -> str:
        order.append("handler")
        return "marked"

    handlers = Handlers(roots=[Root(uri="file:///a")])
    with trio.fail_after(30):
        async with mcptrio.open_client(
            server, revisions=HANDSHAKE_ERA, handlers=handlers
        ) as client:
            await client.call_tool("mark")
            order.clear()
            for i in range(20):
                await client.set_roots([Root(uri=f"file:///{i}")])
                await trio.sleep(0.001)
                await client.call_tool("mark")
                await trio.sleep(0.01)
    assert order == ["notification", "handler"] * 20
