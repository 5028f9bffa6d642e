"""The Streamable HTTP client carrying a request's POST in the requesting task (the session's
exchange path): no task started per request, the answer handed over in place, and every way a
request ends (answered, cancelled, timed out, the transport closed, no POST slot free) as it
was with a task per POST, in both eras, against a real mcptrio server; and a session renewal
that a carried request sets off stays the transport's (a scripted server that restarts)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from fake_server import FakeExchange, FakeRequest, FakeServerStats, serve_fake_http
from test_streamable_client import INIT_RESULT, TOOLS, _result

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.errors import ConnectionClosed, RequestTimeout
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.messages import OutgoingInfo
from mcptrio.transports.http.client.streamable import (
    StreamableHttpClientTransport,
    open_streamable_http_client_transport,
)
from mcptrio.transports.http.client.transport import (
    HttpClientTransport,
    open_http_client_transport,
)

ERAS = {
    "stateless": Revisions(supported=SUPPORTED),
    "handshake": Revisions(supported=tuple(r for r in SUPPORTED if r != "2026-07-28")),
}


class Recorder:
    """A server whose ``wait`` tool notes how it ended, and which notes every cancellation
    notice it is sent."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.server = mcptrio.Server("exchange")
        self.started = trio.Event()
        self.cancelled = trio.Event()

        @self.server.tool
        async def wait(seconds: float) -> str:
            """Sleeps, noting how it ended."""
            self.log.append("started")
            self.started.set()
            try:
                await trio.sleep(seconds)
            except trio.Cancelled:
                self.log.append("cancelled")
                self.cancelled.set()
                raise
            return "done"

        @self.server.tool
        def add(a: int, b: int) -> int:
            """Adds."""
            return a + b


@asynccontextmanager
async def client_of(
    recorder: Recorder, era: str, **settings: Any
) -> AsyncIterator[tuple[mcptrio.Client, HttpClientTransport]]:
    async with trio.open_nursery() as nursery:
        base = await nursery.start(recorder.server.serve_http)
        async with (
            open_http_client_transport(f"{base}/mcp", **settings) as transport,
            mcptrio.open_client(transport, revisions=ERAS[era]) as client,
        ):
            yield client, transport
        nursery.cancel_scope.cancel()


def posts_nursery(transport: HttpClientTransport) -> trio.Nursery:
    """Where the Streamable HTTP transport starts a task per POST it does not carry inline."""
    inner = transport.inner
    assert isinstance(inner, StreamableHttpClientTransport)
    return inner._nursery


def record_posts(transport: HttpClientTransport) -> list[str | None]:
    """The calls and cancellation notices the transport POSTs from now on, in order."""
    inner = transport.inner
    assert isinstance(inner, StreamableHttpClientTransport)
    posted: list[str | None] = []
    post = inner._post

    async def recording(data: bytes, info: OutgoingInfo, **options: Any) -> None:
        if info.method in ("tools/call", "notifications/cancelled"):
            posted.append(info.method)
        await post(data, info, **options)

    inner._post = recording  # type: ignore[method-assign]
    return posted


def _text(result: Any) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_a_call_posts_from_its_own_task_and_starts_none(era: str) -> None:
    recorder = Recorder()
    with trio.fail_after(20):
        async with client_of(recorder, era) as (client, transport), trio.open_nursery() as calls:
            posts = posts_nursery(transport)
            before = len(posts.child_tasks)
            calls.start_soon(client.call_tool, "wait", {"seconds": 0.5})
            await recorder.started.wait()
            assert len(posts.child_tasks) == before
            assert _text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
    assert recorder.log == ["started"]


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_cancelling_a_call_stops_the_handler_and_tells_the_server_as_its_era_says(
    era: str,
) -> None:
    """Stateless era: closing the response stream is the cancellation, no notice is sent;
    handshake era: ``notifications/cancelled``."""
    recorder = Recorder()
    with trio.fail_after(20):
        async with client_of(recorder, era) as (client, transport):
            posted = record_posts(transport)
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as calls:
                    calls.start_soon(client.call_tool, "wait", {"seconds": 60})
                    await recorder.started.wait()
                    scope.cancel()
            await recorder.cancelled.wait()
            # The session goes on: the next call is answered.
            assert _text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
    assert recorder.log == ["started", "cancelled"]
    notice = ["notifications/cancelled"] if era == "handshake" else []
    assert posted == ["tools/call", *notice, "tools/call"]


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_a_call_timing_out_is_cancelled_on_the_server(era: str) -> None:
    recorder = Recorder()
    with trio.fail_after(20):
        async with client_of(recorder, era) as (client, transport):
            posted = record_posts(transport)
            with pytest.raises(RequestTimeout):
                await client.call_tool("wait", {"seconds": 600}, timeout=0.5)
            await recorder.cancelled.wait()
            assert _text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
    notice = ["notifications/cancelled"] if era == "handshake" else []
    assert posted == ["tools/call", *notice, "tools/call"]


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_closing_the_transport_ends_a_call_in_flight_at_once(era: str) -> None:
    recorder = Recorder()
    failed: list[BaseException] = []

    async def call(client: mcptrio.Client) -> None:
        try:
            await client.call_tool("wait", {"seconds": 600})
        except ConnectionClosed as exc:
            failed.append(exc)

    with trio.fail_after(20):
        async with (
            client_of(recorder, era) as (client, transport),
            trio.open_nursery() as calls,
        ):
            calls.start_soon(call, client)
            await recorder.started.wait()
            with trio.fail_after(2):
                await transport.aclose()
    assert len(failed) == 1


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_calls_beyond_the_free_post_slots_wait_for_one_and_are_all_answered(
    era: str,
) -> None:
    recorder = Recorder()
    answers: list[str] = []

    async def add(client: mcptrio.Client, n: int) -> None:
        answers.append(_text(await client.call_tool("add", {"a": n, "b": 1})))

    with trio.fail_after(30):
        async with (
            client_of(recorder, era, max_concurrent_posts=2) as (client, _),
            trio.open_nursery() as calls,
        ):
            for n in range(40):
                calls.start_soon(add, client, n)
    assert sorted(answers, key=int) == [str(n + 1) for n in range(40)]


class ForgetfulServer:
    """A scripted handshake-era server that can forget its sessions (a restart), and whose
    next ``initialize`` then takes ``slow_init`` seconds."""

    def __init__(self) -> None:
        self.stats = FakeServerStats()
        self.sessions: set[str] = set()
        self.made = 0
        self.slow_init = 0.0
        self.renewing = trio.Event()
        self.log: list[tuple[str | None, str | None]] = []

    def restart(self, slow_init: float) -> None:
        self.sessions.clear()
        self.slow_init = slow_init

    async def __call__(self, request: FakeRequest, exchange: FakeExchange) -> None:
        sid = request.headers.get("mcp-session-id")
        if request.method != "POST":
            self.log.append((request.method, sid))
            await exchange.respond(405 if request.method == "GET" else 200)
            return
        message = json.loads(request.body)
        self.log.append((message.get("method"), sid))
        if message.get("method") == "initialize":
            if self.slow_init:
                self.renewing.set()
            await trio.sleep(self.slow_init)
            self.made += 1
            sid = f"session-{self.made}"
            self.sessions.add(sid)
            head = [("content-type", "application/json"), ("mcp-session-id", sid)]
            await exchange.respond(200, head, _result(message["id"], INIT_RESULT))
        elif sid not in self.sessions:
            await exchange.respond(404, body=b"no such session")
        elif "id" not in message:
            await exchange.respond(202)
        else:
            result = TOOLS if message["method"] == "tools/list" else {"content": []}
            head = [("content-type", "application/json")]
            await exchange.respond(200, head, _result(message["id"], result))


@asynccontextmanager
async def client_of_forgetful(
    server: ForgetfulServer,
) -> AsyncIterator[tuple[mcptrio.Client, StreamableHttpClientTransport]]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_fake_http, server, server.stats)
        async with (
            open_streamable_http_client_transport(f"http://127.0.0.1:{port}/mcp") as transport,
            mcptrio.open_client(transport, revisions=ERAS["handshake"]) as client,
        ):
            yield client, transport
        nursery.cancel_scope.cancel()


async def test_a_caller_giving_up_during_a_session_renewal_leaves_the_renewal_whole() -> None:
    server = ForgetfulServer()
    with trio.fail_after(20):
        async with client_of_forgetful(server) as (client, transport):
            await client.list_tools()
            server.restart(slow_init=1.0)
            with pytest.raises(RequestTimeout):
                await client.list_tools(timeout=0.3)  # a 404, then a slow renewal
            await trio.sleep(1.5)
            assert transport.session_id == "session-2"
            assert (await client.list_tools()).tools
    assert ("notifications/initialized", "session-2") in server.log


async def test_closing_the_transport_stops_a_session_renewal_under_way() -> None:
    server = ForgetfulServer()
    ended: list[BaseException] = []

    async def call(client: mcptrio.Client) -> None:
        try:
            await client.call_tool("echo", {})
        except ConnectionClosed as exc:
            ended.append(exc)

    with trio.fail_after(20):
        async with client_of_forgetful(server) as (client, transport):
            await client.list_tools()
            server.restart(slow_init=3.0)
            async with trio.open_nursery() as calls:
                calls.start_soon(call, client)
                await server.renewing.wait()
                with trio.fail_after(1):
                    await transport.aclose()
            await trio.sleep(4)
    assert len(ended) == 1
    # Nothing was sent to the session the renewal would have made.
    assert [entry for entry in server.log if entry[1] == "session-2"] == []
