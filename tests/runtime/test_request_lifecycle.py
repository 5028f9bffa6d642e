"""The request lifecycle's contract (docs/explanation/request-lifecycle.md), line by line, on
both placements (answered at once, in a request actor) and through both ways in (the session's
reader, for a stream transport; a frame handed in by a task of its own, as an HTTP POST does).

Each test names the contract line it checks (C1 ... C12). The server is driven with raw frames,
so that ids, cancellations and the answers on the wire are exactly what the test says.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.protocol.errors import McpError
from mcptrio.runtime import Session, SessionBusy
from mcptrio.runtime.transport import FailedRequest, Frame, Outgoing, TransportAbilities
from mcptrio.server.context import Context
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair

PLACEMENTS = ["at_once", "actor"]
ENTRIES = ["reader", "handed in"]
REVISION = "2025-11-25"

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


class Boom(BaseException):
    """What a handler may raise past ``except Exception`` (as KeyboardInterrupt does)."""


class Custom(McpError, code=-32042, default_message="custom refusal"):
    pass


def build_server(max_in_flight: int = 4) -> tuple[mcptrio.Server, dict[str, Any]]:
    """A server with one tool per placement for each behaviour, and a record of what ran."""
    server = mcptrio.Server("lifecycle", max_in_flight=max_in_flight)
    record: dict[str, Any] = {"ran": [], "cancelled": [], "release": trio.Event(), "tasks": []}

    def behave(mode: str) -> str:
        """What both tools do once they run: a plain function, so calling it cannot suspend."""
        record["ran"].append(mode)
        record["tasks"].append(trio.lowlevel.current_task())
        if mode == "mcp":
            raise Custom
        if mode == "crash":
            raise ValueError("it broke")
        if mode == "base":
            raise Boom
        if mode == "set":
            SEEN.set("set by the handler")
        return f"{mode}: {SEEN.get()}"

    # Answered at once: no await anywhere in its code (mcptrio.server.eager).
    @server.tool(name="at_once")
    async def at_once(mode: str = "ok") -> str:
        return behave(mode)

    # Run in a request actor: it waits first.
    @server.tool(name="actor")
    async def actor(mode: str = "ok") -> str:
        try:
            if mode == "hold":
                held = behave(mode)
                await record["release"].wait()
                return held
            await trio.lowlevel.checkpoint()
        except trio.Cancelled:
            record["cancelled"].append(mode)
            raise
        return behave(mode)

    @server.tool(name="asks_client")
    async def asks_client(ctx: Context) -> str:
        record["tasks"].append(trio.lowlevel.current_task())
        await ctx.session.ping(timeout=1)
        return "pinged"

    @server.tool(name="task_tool", task="optional")
    async def task_tool() -> str:
        record["tasks"].append(trio.lowlevel.current_task())
        return "task done"

    return server, record


class Harness:
    """One server session, driven with raw frames through one way in."""

    def __init__(
        self,
        session: Session,
        peer: MemoryTransport | None,
        nursery: trio.Nursery,
        received: list[dict[str, Any]],
        unanswered: list[Any],
    ) -> None:
        self.session = session
        self._peer = peer
        self._nursery = nursery
        #: What the server sent, decoded; the ids of requests it said ended unanswered.
        self.received = received
        self.unanswered = unanswered

    async def send(self, message: dict[str, Any]) -> None:
        """Send ``message`` to the server; a handed-in frame is delivered in a task of its own
        (the test goes on while it waits for a slot, as a POST would)."""
        frame = json.dumps({"jsonrpc": "2.0", **message}).encode()
        if self._peer is not None:
            await self._peer.send([Outgoing(frame)])
        else:
            self._nursery.start_soon(self.session.deliver, frame)
        await trio.testing.wait_all_tasks_blocked()

    def answers_to(self, rid: int) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("id") == rid and "method" not in m]


class HandedInTransport:
    """A transport whose frames are all handed in; what the server sends is recorded."""

    def __init__(self, harness_received: list[dict[str, Any]], unanswered: list[Any]) -> None:
        self._received = harness_received
        self._unanswered = unanswered
        self.ended = trio.Event()

    def abilities(self) -> TransportAbilities:
        return TransportAbilities(
            send_nowait=self.send_nowait, request_ended_unanswered=self._unanswered.append
        )

    async def receive(self) -> Frame:
        await self.ended.wait()
        raise trio.EndOfChannel

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            self.send_nowait(frame)

    def send_nowait(self, frame: Outgoing) -> bool:
        self._received.append(json.loads(frame.data))
        return True

    async def aclose(self) -> None:
        self.ended.set()


class ReaderTransport:
    """The server's end of an in-memory pair, which also records requests ended unanswered."""

    def __init__(self, inner: MemoryTransport, unanswered: list[Any]) -> None:
        self._inner = inner
        self._unanswered = unanswered

    def abilities(self) -> TransportAbilities:
        return self._inner.abilities()._replace(request_ended_unanswered=self._unanswered.append)

    async def receive(self) -> Frame | FailedRequest:
        frame = await self._inner.receive()
        assert not isinstance(frame, mcptrio.protocol.codec.CarriedResult)
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        await self._inner.send(frames)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def open_harness(entry: str, server: mcptrio.Server) -> AsyncIterator[Harness]:
    """A session of ``server`` through ``entry``, initialized; ended with the block."""
    received: list[dict[str, Any]] = []
    unanswered: list[Any] = []
    peer: MemoryTransport | None = None
    transport: Any
    if entry == "reader":
        peer, server_end = memory_transport_pair()
        transport = ReaderTransport(server_end, unanswered)
    else:
        transport = HandedInTransport(received, unanswered)
    async with trio.open_nursery() as nursery:
        SEEN.set("the session's")
        session = await nursery.start(server.serve_session, transport)
        SEEN.set("the test's")
        harness = Harness(session, peer, nursery, received, unanswered)
        if peer is not None:
            nursery.start_soon(_collect, peer, received)
        await harness.send(
            {
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        await harness.send({"method": "notifications/initialized"})
        yield harness
        nursery.cancel_scope.cancel()


async def _collect(peer: MemoryTransport, received: list[dict[str, Any]]) -> None:
    while True:
        try:
            frame = await peer.receive()
        except trio.EndOfChannel:
            return
        assert isinstance(frame, bytes)
        received.append(json.loads(frame))


def call(rid: int, tool: str, mode: str = "ok", **params: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"mode": mode}, **params},
    }


def cancel(rid: int) -> dict[str, Any]:
    return {"method": "notifications/cancelled", "params": {"requestId": rid, "reason": "test"}}


def text_of(answer: dict[str, Any]) -> str:
    [content] = answer["result"]["content"]
    assert content["type"] == "text"
    text: str = content["text"]
    return text


pytestmark = [pytest.mark.parametrize("entry", ENTRIES)]


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c1_a_request_runs_where_the_one_rule_places_it(entry: str, placement: str) -> None:
    server, record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, placement))
            await trio.testing.wait_all_tasks_blocked()
            [task] = record["tasks"]
            reader = entry == "reader"
            if placement == "at_once":
                # In the task that delivered it: the reader, or the one that handed it in.
                assert task.name.endswith("Session.run") if reader else "deliver" in task.name
            else:
                assert task.name.endswith("_RequestActors._run")
                assert task.parent_nursery is h.session._nursery


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c2_a_result_is_answered_once(entry: str, placement: str) -> None:
    server, _record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, placement))
            await trio.testing.wait_all_tasks_blocked()
            [answer] = h.answers_to(1)
            assert text_of(answer).startswith("ok: ")
            assert h.unanswered == []


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize(("mode", "code"), [("mcp", -32042), ("crash", None)])
async def test_c3_an_error_is_answered_with_its_code_and_anything_else_is_a_tool_error(
    entry: str, placement: str, mode: str, code: int | None, caplog: pytest.LogCaptureFixture
) -> None:
    server, _record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, placement, mode))
            await trio.testing.wait_all_tasks_blocked()
            [answer] = h.answers_to(1)
            if code is not None:
                assert answer["error"]["code"] == code
            else:
                # A tool's own exception is a tool error the model can read.
                assert answer["result"]["isError"] is True
                assert "it broke" in text_of(answer)


async def test_c4_the_peers_cancellation_interrupts_an_actor_and_sends_nothing(
    entry: str,
) -> None:
    server, record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, "actor", "hold"))
            assert record["ran"] == ["hold"]
            await h.send(cancel(1))
            await trio.testing.wait_all_tasks_blocked()
            assert record["cancelled"] == ["hold"]
            assert h.answers_to(1) == []
            # The transport is told, so a stream waiting for the answer can end.
            assert h.unanswered == [1]


async def test_c4_a_request_answered_at_once_has_no_checkpoint_to_cancel(entry: str) -> None:
    # Its answer is out before anything else is read: a cancellation that follows finds
    # nothing to cancel, and nothing more is sent.
    server, record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, "at_once"))
            await h.send(cancel(1))
            await trio.testing.wait_all_tasks_blocked()
            assert len(h.answers_to(1)) == 1
            assert h.unanswered == []
            assert record["cancelled"] == []


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c5_the_in_flight_limit_makes_the_next_request_wait_for_a_slot(
    entry: str, placement: str
) -> None:
    server, record = build_server(max_in_flight=1)
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, "actor", "hold"))
            await h.send(call(2, placement))
            assert record["ran"] == ["hold"]
            assert h.session.statistics().in_flight_incoming == 1
            record["release"].set()
            await trio.testing.wait_all_tasks_blocked()
            assert record["ran"] == ["hold", "ok"]
            assert len(h.answers_to(1)) == len(h.answers_to(2)) == 1


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c6_a_request_cancelled_while_it_waits_for_a_slot_never_runs(
    entry: str, placement: str
) -> None:
    server, record = build_server(max_in_flight=1)
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, "actor", "hold"))
            await h.send(call(2, placement))
            if entry == "reader":
                # The reader waits for the slot: the cancellation is read after it.
                h.session.cancel_incoming(2, "test")
            else:
                await h.send(cancel(2))
            await trio.testing.wait_all_tasks_blocked()
            assert h.unanswered == [2]
            record["release"].set()
            await trio.testing.wait_all_tasks_blocked()
            assert record["ran"] == ["hold"]
            assert h.answers_to(2) == []


async def test_c7_past_max_waiting_a_request_handed_in_is_refused_busy(entry: str) -> None:
    if entry == "reader":
        pytest.skip("a reader is the only waiter: max_waiting bounds tasks that hand frames in")
    server, _record = build_server(max_in_flight=1)
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            h.session.max_waiting = 1
            await h.send(call(1, "actor", "hold"))
            await h.send(call(2, "at_once"))
            with pytest.raises(SessionBusy):
                await h.session.deliver(json.dumps({"jsonrpc": "2.0", **call(3, "actor")}).encode())


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c8_the_session_ending_cancels_what_runs_and_waits_and_answers_nothing(
    entry: str, placement: str
) -> None:
    server, record = build_server(max_in_flight=1)
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, "actor", "hold"))
            await h.send(call(2, placement))
            h.session.close()
            await h.session.closed.wait()
            assert record["cancelled"] == ["hold"]
            assert record["ran"] == ["hold"]
            assert h.answers_to(1) == h.answers_to(2) == []
            assert sorted(h.unanswered) == [1, 2]


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c9_a_handler_runs_in_a_fresh_copy_of_the_sessions_context(
    entry: str, placement: str
) -> None:
    server, _record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(call(1, placement, "set"))
            await h.send(call(2, placement))
            await trio.testing.wait_all_tasks_blocked()
            # It sees what the delivering task's context held (the session's, for the reader; the
            # handing task's, which started after the test set its value, otherwise), and what
            # it set is seen neither by the next request nor by the test's task.
            delivering = "the session's" if entry == "reader" else "the test's"
            assert text_of(h.answers_to(1)[0]) == "set: set by the handler"
            assert text_of(h.answers_to(2)[0]) == f"ok: {delivering}"
            assert SEEN.get() == "the test's"


@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_c10_a_base_exception_ends_the_session_and_reaches_whoever_runs_it(
    entry: str, placement: str
) -> None:
    server, _record = build_server()
    with trio.fail_after(5), pytest.raises(BaseException) as raised:
        async with open_harness(entry, server) as h:
            await h.send(call(1, placement, "base"))
            await trio.sleep(1)
    assert raised.group_contains(Boom)
    assert h.answers_to(1) == []


async def test_c11_a_handler_that_may_wait_on_the_peer_is_never_placed_at_once_and_times_out(
    entry: str, autojump_clock: trio.testing.MockClock
) -> None:
    # A handler that takes a Context can reach the peer, so it always runs in an actor (the
    # at-once placement has no checkpoint at which a timeout could land); its own request to
    # the peer times out and is called off there.
    server, record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send({**call(1, "asks_client"), "params": {"name": "asks_client"}})
            await trio.sleep(2)
            [task] = record["tasks"]
            assert task.name.endswith("_RequestActors._run")
            # Its timeout is a local error, answered -32603 with what happened.
            [answer] = h.answers_to(1)
            assert answer["error"]["code"] == -32603
            assert "got no response in time" in answer["error"]["message"]
            pings = [m for m in h.received if m.get("method") == "ping"]
            cancels = [m for m in h.received if m.get("method") == "notifications/cancelled"]
            assert [c["params"]["requestId"] for c in cancels] == [p["id"] for p in pings]


async def test_c12_a_task_augmented_call_hands_its_work_to_the_servers_task_nursery(
    entry: str,
) -> None:
    # "task_tool" never suspends, but a call made as a task is never placed at once: it is
    # answered with the task, and its work goes on in the server's task nursery.
    server, record = build_server()
    with trio.fail_after(5):
        async with open_harness(entry, server) as h:
            await h.send(
                {
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "task_tool", "arguments": {}, "task": {"ttl": 60000}},
                },
            )
            await trio.testing.wait_all_tasks_blocked()
            [answer] = h.answers_to(1)
            assert answer["result"]["task"]["taskId"]
            [task] = record["tasks"]
            # The work runs in the server's task nursery, not where the request was placed.
            assert task.parent_nursery is not h.session._nursery
            assert not task.name.endswith("_RequestActors._run")
