"""The Streamable HTTP client carrying a request's POST in the requesting task (the session's
exchange path): no task started per request, the answer handed over in place, and every way a
request ends (answered, cancelled, timed out, the transport closed, no POST slot free) as it
was with a task per POST, in both eras, against a real mcptrio server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.errors import ConnectionClosed, RequestTimeout
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.messages import OutgoingInfo
from mcptrio.transports.http.client.streamable import StreamableHttpClientTransport
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
