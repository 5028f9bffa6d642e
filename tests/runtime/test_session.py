"""The session actor: cancellation, timeouts, progress, ping, backpressure and ending."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.protocol.types import CreateMessageRequest, SamplingMessage, TextContent
from mcptrio.transports.memory import memory_transport_pair

from conftest import open_recorded_client


class Gate:
    """Lets a test hold a tool inside its handler and see how the handler ended."""

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.release = trio.Event()
        self.cancelled = trio.Event()
        self.count = 0


def gated_server(gate: Gate, **kwargs: object) -> mcptrio.Server:
    server = mcptrio.Server("gated", **kwargs)  # type: ignore[arg-type]

    @server.tool()
    async def wait(label: str = "") -> str:
        gate.count += 1
        gate.entered.set()
        try:
            await gate.release.wait()
        except trio.Cancelled:
            gate.cancelled.set()
            raise
        return f"released {label}"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_cancel_stops_handler_and_sends_no_response() -> None:
    gate = Gate()
    with trio.fail_after(5):
        async with open_recorded_client(gated_server(gate)) as (client, wire, _):
            with trio.CancelScope() as scope:

                async def cancel_when_entered() -> None:
                    await gate.entered.wait()
                    scope.cancel()

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(cancel_when_entered)
                    await client.call_tool("wait")
            assert scope.cancelled_caught
            await gate.cancelled.wait()
            # The session goes on, and the cancelled call never got an answer.
            assert (await client.call_tool("add", {"a": 2, "b": 3})).content[0] == TextContent(
                text="5"
            )
            call = next(m for m in wire.client_to_server if m.get("method") == "tools/call")
            cancel = next(
                m for m in wire.client_to_server if m.get("method") == "notifications/cancelled"
            )
            assert cancel["params"]["requestId"] == call["id"]
            assert not [m for m in wire.server_to_client if m.get("id") == call["id"]]


async def test_timeout_sends_cancelled_and_raises_request_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = Gate()
    with trio.fail_after(60):
        async with open_recorded_client(gated_server(gate)) as (client, wire, _):
            start = trio.current_time()
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool("wait", timeout=2.0)
            assert trio.current_time() - start == pytest.approx(2.0)
            await gate.cancelled.wait()
            cancels = [
                m for m in wire.client_to_server if m.get("method") == "notifications/cancelled"
            ]
            assert len(cancels) == 1
            assert "timed out" in cancels[0]["params"]["reason"]


def progress_server(steps: int, interval: float) -> mcptrio.Server:
    server = mcptrio.Server("progress")

    @server.tool()
    async def slow(ctx: mcptrio.Context) -> str:
        for i in range(steps):
            await trio.sleep(interval)
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await trio.sleep(interval)
        return "done"

    return server


async def test_progress_pushes_the_deadline_back(autojump_clock: trio.testing.MockClock) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(60):
        async with mcptrio.open_client(progress_server(steps=10, interval=0.5)) as client:
            # 5.5 s of work under a 1 s timeout: each progress notification restarts it.
            result = await client.call_tool("slow", timeout=1.0, on_progress=on_progress)
    assert result.content[0] == TextContent(text="done")
    assert seen == [(i + 1, 10, f"step {i + 1}") for i in range(10)]


async def test_progress_never_extends_past_max_total_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(60):
        async with mcptrio.open_client(progress_server(steps=10, interval=0.5)) as client:
            start = trio.current_time()
            with pytest.raises(mcptrio.RequestTimeout):
                await client.call_tool(
                    "slow", timeout=1.0, max_total_timeout=3.0, on_progress=lambda *a: None
                )
            assert trio.current_time() - start == pytest.approx(3.0)


async def test_ping_both_ways() -> None:
    server = mcptrio.Server("pinger")

    @server.tool()
    async def ping_back(ctx: mcptrio.Context) -> str:
        await ctx.session.ping(timeout=5)
        return "pong"

    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
            await client.ping()
            assert (await client.call_tool("ping_back")).content[0] == TextContent(text="pong")
    assert wire.methods_sent_by_client().count("ping") == 1
    assert wire.methods_sent_by_server() == ["ping"]


async def test_in_flight_limit_stops_reading_until_a_handler_finishes() -> None:
    gate = Gate()
    with trio.fail_after(5):
        async with open_recorded_client(gated_server(gate, max_in_flight=2)) as (client, _, server):
            results: list[str] = []

            async def call(i: int) -> None:
                result = await client.call_tool("wait", {"label": str(i)})
                assert isinstance(result.content[0], TextContent)
                results.append(result.content[0].text)

            async with trio.open_nursery() as nursery:
                for i in range(5):
                    nursery.start_soon(call, i)
                await trio.testing.wait_all_tasks_blocked()
                assert gate.count == 2
                assert server.statistics().in_flight_incoming == 2
                gate.release.set()
            assert sorted(results) == [f"released {i}" for i in range(5)]


async def test_transport_end_cancels_handlers_and_fails_pending_calls() -> None:
    gate = Gate()
    client_end, server_end = memory_transport_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            server_session = await nursery.start(gated_server(gate).serve_session, server_end)
            async with mcptrio.open_client(client_end) as client:

                async def close_server_when_entered() -> None:
                    await gate.entered.wait()
                    await server_end.aclose()

                nursery.start_soon(close_server_when_entered)
                with pytest.raises(mcptrio.ConnectionClosed):
                    await client.call_tool("wait")
            await gate.cancelled.wait()
            await server_session.closed.wait()
            with pytest.raises(mcptrio.ConnectionClosed):
                await client.ping()


async def test_tool_crash_is_a_tool_error_and_mcp_error_an_error_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = mcptrio.Server("faulty")

    @server.tool()
    async def crash() -> str:
        raise RuntimeError("boom")

    @server.tool()
    async def refuse() -> str:
        raise mcptrio.McpError("teapot", {"why": "because"}, code=-31000)

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _):
            with caplog.at_level(logging.ERROR, logger="mcptrio.server"):
                crashed = await client.call_tool("crash")
            assert crashed.is_error is True
            assert crashed.content == [TextContent(text="Error executing tool crash: boom")]
            assert "crash" in caplog.text
            with pytest.raises(mcptrio.McpError) as info:
                await client.call_tool("refuse")
            assert (info.value.code, info.value.message, info.value.data) == (
                -31000,
                "teapot",
                {"why": "because"},
            )
            await client.ping()
    errors = [m["error"]["code"] for m in wire.server_to_client if "error" in m]
    assert errors == [-31000]


async def test_request_for_capability_the_client_lacks_is_refused_before_sending() -> None:
    server = mcptrio.Server("sampler")

    @server.tool()
    async def ask(ctx: mcptrio.Context) -> str:
        request = CreateMessageRequest(
            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=5
        )
        try:
            await ctx.send_request(request)
        except mcptrio.CapabilityNotNegotiated as exc:
            return f"refused: {exc.message}"
        return "sent"

    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
            result = await client.call_tool("ask")
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text.startswith("refused:")
    assert "sampling" in result.content[0].text
    assert "sampling/createMessage" not in wire.methods_sent_by_server()


def _all_tasks() -> list[trio.lowlevel.Task]:
    found: list[trio.lowlevel.Task] = []
    stack = [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        assert task is not None
        found.append(task)
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return found


async def test_no_task_left_after_a_thousand_sessions_open_and_close() -> None:
    gate = Gate()
    server = gated_server(gate)
    before = len(_all_tasks())
    with trio.fail_after(60):
        for i in range(1000):
            async with mcptrio.open_client(server) as client:
                if i % 100 == 0:
                    await client.call_tool("add", {"a": i, "b": 1})
    await trio.testing.wait_all_tasks_blocked()
    assert len(_all_tasks()) == before


async def test_a_handler_cancelling_its_own_scope_still_answers_with_an_error() -> None:
    server = mcptrio.Server("self-cancel")

    @server.tool()
    async def gives_up(ctx: mcptrio.Context) -> str:
        ctx.cancel_scope.cancel()
        await trio.sleep_forever()
        return "never"

    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            with pytest.raises(mcptrio.InternalError, match="cancelled"):
                await client.call_tool("gives_up", {})
            await client.ping()
