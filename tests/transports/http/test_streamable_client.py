"""The Streamable HTTP client transport, against the official SDK's server and a scripted one."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA
from fake_server import Cut, FakeExchange, FakeRequest, FakeServerStats, serve_fake_http
from sdk_peer import open_sdk_server

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.errors import InvalidParams, McpError, ProtocolError, TransportError
from mcptrio.protocol.sse import encode_event
from mcptrio.protocol.types import TextContent
from mcptrio.runtime.transport import FailedRequest, Outgoing, OversizedFrame
from mcptrio.transports.http.client.messages import http_error
from mcptrio.transports.http.client.streamable import (
    StreamableHttpClientTransport,
    open_streamable_http_client_transport,
)
from mcptrio.transports.http.engine.client_pool import HttpProtocolError, HttpStatusError

# --------------------------------------------------------------------------- the SDK's server


@pytest.mark.parametrize("mode", ["streamable-sse", "streamable-json"])
async def test_handshake_list_and_call_against_the_sdk_server(mode: str) -> None:
    with trio.fail_after(30):
        async with (
            open_sdk_server(mode) as base,
            open_streamable_http_client_transport(base + "/mcp", timeout=10) as transport,
            mcptrio.open_client(transport, revisions=HANDSHAKE_ERA) as client,
        ):
            assert client.server_info.name == "sdk-peer"
            assert transport.session_id is not None
            assert transport.protocol_version == client.protocol_version == "2025-11-25"
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"add", "countdown"}
            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert result.content == [TextContent(text="42")]
            await client.ping()


async def test_progress_arrives_on_the_post_stream_of_the_sdk_server() -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    with trio.fail_after(30):
        async with (
            open_sdk_server("streamable-sse") as base,
            open_streamable_http_client_transport(base + "/mcp", timeout=10) as transport,
            mcptrio.open_client(transport) as client,
        ):
            result = await client.call_tool(
                "countdown", {"start": 3}, on_progress=lambda p, t, m: progress.append((p, t, m))
            )
            assert result.content == [TextContent(text="liftoff")]
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


# --------------------------------------------------------------------------- a scripted server

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "fake", "version": "1"},
}
TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def _result(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def _text(rid: Any, text: str) -> bytes:
    return _result(rid, {"content": [{"type": "text", "text": text}]})


Script = Callable[["FakeMcp", FakeRequest, FakeExchange, dict[str, Any]], Awaitable[bool]]


class FakeMcp:
    """A minimal MCP endpoint: sessions, JSON answers, and a hook to script any request."""

    def __init__(self, script: Script | None = None, *, get_status: int = 405) -> None:
        self.script = script
        self.get_status = get_status
        self.sessions: set[str] = set()
        self.counter = 0
        self.stats = FakeServerStats()
        self.posted: list[dict[str, Any]] = []
        self.refuse_initialize = False

    def forget_sessions(self) -> None:
        self.sessions.clear()

    async def __call__(self, request: FakeRequest, exchange: FakeExchange) -> None:
        sid = request.headers.get("mcp-session-id")
        if request.method == "DELETE":
            self.sessions.discard(sid or "")
            await exchange.respond(200)
            return
        if request.method == "GET":
            if self.script is not None and await self.script(self, request, exchange, {}):
                return
            await exchange.respond(self.get_status)
            return
        message = json.loads(request.body)
        self.posted.append(message)
        if message.get("method") == "initialize":
            if self.refuse_initialize:
                await exchange.respond(503)
                return
            self.counter += 1
            new = f"session-{self.counter}"
            self.sessions.add(new)
            await exchange.respond(
                200,
                [("content-type", "application/json"), ("mcp-session-id", new)],
                _result(message["id"], INIT_RESULT),
            )
            return
        if sid not in self.sessions:
            await exchange.respond(404, body=b"no such session")
            return
        if self.script is not None and await self.script(self, request, exchange, message):
            return
        if "id" not in message:
            await exchange.respond(202)
        elif message["method"] == "tools/list":
            await exchange.respond(
                200, [("content-type", "application/json")], _result(message["id"], TOOLS)
            )
        else:
            await exchange.respond(
                200, [("content-type", "application/json")], _result(message["id"], {})
            )


@asynccontextmanager
async def serve(fake: FakeMcp) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_fake_http, fake, fake.stats)
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_fake_client(
    fake: FakeMcp, *, revisions: Revisions | None = None, **transport_options: Any
) -> AsyncIterator[tuple[StreamableHttpClientTransport, mcptrio.Client]]:
    """``fake`` served, and a client of it over the Streamable HTTP client transport opened with
    ``transport_options``."""
    async with (
        serve(fake) as url,
        open_streamable_http_client_transport(url, **transport_options) as transport,
        mcptrio.open_client(transport, revisions=revisions or Revisions()) as client,
    ):
        yield transport, client


def _sse_head() -> list[tuple[str, str]]:
    return [("content-type", "text/event-stream")]


async def test_headers_session_id_protocol_version_and_delete_on_close() -> None:
    fake = FakeMcp()
    with trio.fail_after(10):
        async with open_fake_client(
            fake, revisions=HANDSHAKE_ERA, headers={"Authorization": "Bearer t0k"}
        ) as (transport, client):
            await client.list_tools()
            assert transport.session_id == "session-1"
    requests = fake.stats.requests
    init, initialized, *middle, delete = requests
    # The GET stream opens once initialization is done, alongside the first request.
    get = next(r for r in middle if r.method == "GET")
    tools_list = next(r for r in middle if r.method == "POST")
    assert init.headers["accept"] == "application/json, text/event-stream"
    assert init.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in init.headers and "mcp-protocol-version" not in init.headers
    for later in (initialized, get, tools_list, delete):
        assert later.headers["mcp-session-id"] == "session-1"
        assert later.headers["mcp-protocol-version"] == "2025-11-25"
        assert later.headers["authorization"] == "Bearer t0k"
    assert (get.method, get.headers["accept"]) == ("GET", "text/event-stream")
    assert json.loads(initialized.body)["method"] == "notifications/initialized"
    assert delete.method == "DELETE"


async def test_error_status_answers_the_request_promptly_with_the_http_status() -> None:
    async def fail_calls(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad thing"}}'
            await exchange.respond(400, [("content-type", "application/json")], body)
            return True
        if message.get("method") == "ping":
            await exchange.respond(503, body=b"overloaded")
            return True
        return False

    fake = FakeMcp(fail_calls)
    with trio.fail_after(10):
        async with open_fake_client(fake) as (_, client):
            with pytest.raises(McpError, match="HTTP 400 Bad Request: bad thing") as info:
                await client.call_tool("echo", {})
            assert info.value.code == -32600
            with pytest.raises(HttpStatusError, match="HTTP 503 Service Unavailable: overloaded"):
                await client.ping()
            assert (await client.list_tools()).tools[0].name == "echo"


@pytest.mark.parametrize(
    ("status", "reason", "body", "kind", "code", "message"),
    [
        # The server's own reason phrase is kept.
        (400, "Invalid Session", b"", HttpStatusError, -32603, "HTTP 400 Invalid Session"),
        # None sent (h11's default, and HTTP/2 has none): the standard phrase stands in.
        (
            404,
            "",
            b"no such session",
            HttpStatusError,
            -32603,
            "HTTP 404 Not Found: no such session",
        ),
        # No standard phrase either: the status alone.
        (599, "", b"", HttpStatusError, -32603, "HTTP 599"),
        # A JSON-RPC error in the body is the server's answer, rebuilt as any error answer.
        (
            403,
            "",
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"not yours"}}',
            ProtocolError,
            -32001,
            "HTTP 403 Forbidden: not yours",
        ),
        (
            400,
            "",
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}',
            InvalidParams,
            -32602,
            "HTTP 400 Bad Request: bad",
        ),
    ],
)
def test_http_error_carries_status_reason_and_the_body_s_error(
    status: int, reason: str, body: bytes, kind: type[McpError], code: int, message: str
) -> None:
    error = http_error(status, reason, body)
    assert type(error) is kind
    assert (error.code, error.message) == (code, message)
    if isinstance(error, HttpStatusError):
        assert error.status == status
        assert error.body == body


async def test_sse_stream_cut_after_retry_is_resumed_after_that_delay(
    autojump_clock: trio.testing.MockClock,
) -> None:
    times: list[float] = []

    async def cut_then_resume(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            times.append(trio.current_time())
            await exchange.start(200, _sse_head())
            await exchange.send(encode_event("", event_id="s1-0", retry_ms=2500))
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {
                    "progressToken": message["params"]["_meta"]["progressToken"],
                    "progress": 1,
                },
            }
            await exchange.send(encode_event(json.dumps(progress), event_id="s1-1"))
            raise Cut
        if request.method == "GET" and request.headers.get("last-event-id") == "s1-1":
            times.append(trio.current_time())
            rid = fake.posted[-1]["id"]
            await exchange.start(200, _sse_head())
            await exchange.send(encode_event(_text(rid, "resumed"), event_id="s1-2"))
            await exchange.end()
            return True
        return False

    fake = FakeMcp(cut_then_resume)
    seen: list[float] = []
    with trio.fail_after(60):
        async with open_fake_client(fake) as (_, client):
            result = await client.call_tool("echo", {}, on_progress=lambda p, t, m: seen.append(p))
    assert result.content == [TextContent(text="resumed")]
    assert seen == [1]
    assert times[1] - times[0] == pytest.approx(2.5, abs=0.1)


async def test_resumption_without_retry_uses_the_default_delay_and_gives_up_with_backoff(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gets: list[float] = []

    async def never_resumable(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            gets.append(trio.current_time())
            await exchange.start(200, _sse_head())
            await exchange.send(encode_event("", event_id="p-0"))
            raise Cut
        if request.method == "GET" and "last-event-id" in request.headers:
            gets.append(trio.current_time())
            await exchange.respond(500)
            return True
        return False

    fake = FakeMcp(never_resumable)
    with trio.fail_after(120):
        async with open_fake_client(fake, reconnect_delay=1.0, max_reconnect_attempts=3) as (
            _,
            client,
        ):
            with pytest.raises(McpError, match="could not be resumed"):
                await client.call_tool("echo", {})
    delays = [round(b - a, 1) for a, b in itertools.pairwise(gets)]
    assert delays == [1.0, 2.0, 4.0]


async def test_stream_without_event_ids_that_breaks_fails_the_request_at_once() -> None:
    async def cut(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            await exchange.start(200, _sse_head())
            raise Cut
        return False

    with trio.fail_after(10):
        async with open_fake_client(FakeMcp(cut)) as (_, client):
            with pytest.raises(McpError, match="cannot be resumed"):
                await client.call_tool("echo", {})
            await client.ping()


async def test_standalone_get_stream_delivers_server_messages_and_is_resumed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cursors: list[str | None] = []
    logged: list[str] = []

    async def get_stream(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method != "GET":
            return False
        cursor = request.headers.get("last-event-id")
        cursors.append(cursor)
        n = len(cursors)
        await exchange.start(200, _sse_head())
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": f"note {n}"},
        }
        await exchange.send(encode_event(json.dumps(note), event_id=f"g-{n}", retry_ms=100))
        if n < 3:
            await exchange.end()
        else:
            await trio.sleep_forever()
        return True

    three = trio.Event()

    def on_note(session: Any, notification: Any) -> None:
        logged.append(notification.data)
        if len(logged) == 3:
            three.set()

    fake = FakeMcp(get_stream)
    with trio.fail_after(30):
        async with open_fake_client(fake) as (_, client):
            client.session._handle_notification = on_note
            await three.wait()
    assert logged == ["note 1", "note 2", "note 3"]
    assert cursors == [None, "g-1", "g-2"]


async def test_server_restart_404_starts_a_new_session_transparently() -> None:
    fake = FakeMcp()
    with trio.fail_after(10):
        async with open_fake_client(fake, revisions=HANDSHAKE_ERA) as (transport, client):
            await client.list_tools()
            fake.forget_sessions()
            assert (await client.list_tools()).tools[0].name == "echo"
            assert transport.session_id == "session-2"
            await client.ping()
    methods = [m.get("method") for m in fake.posted]
    assert methods == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/list",  # 404
        "initialize",
        "notifications/initialized",
        "tools/list",
        "ping",
    ]
    assert fake.posted[4] == fake.posted[0]
    last = fake.stats.requests[-1]
    assert last.method == "DELETE" and last.headers["mcp-session-id"] == "session-2"


async def test_renewal_refused_ends_the_transport() -> None:
    fake = FakeMcp()
    with trio.fail_after(10):
        async with serve(fake) as url, open_streamable_http_client_transport(url) as transport:
            async with mcptrio.open_client(transport) as client:
                fake.forget_sessions()
                fake.refuse_initialize = True
                with pytest.raises(McpError):
                    await client.list_tools()
            with pytest.raises(trio.EndOfChannel):
                await transport.receive()


async def test_oversized_json_response_is_reported_and_fails_the_call() -> None:
    async def huge(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            body = _text(message["id"], "x" * 5000)
            await exchange.respond(200, [("content-type", "application/json")], body)
            return True
        return False

    with trio.fail_after(10):
        async with (
            serve(FakeMcp(huge)) as url,
            open_streamable_http_client_transport(url, max_frame_size=2000) as transport,
        ):
            await transport.send([Outgoing(_initialize_frame(1))])
            assert b"protocolVersion" in await _frame(transport)
            call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}'
            await transport.send([Outgoing(call)])
            oversized = await transport.receive()
            assert isinstance(oversized, OversizedFrame) and oversized.limit == 2000
            failed = await transport.receive()
            assert isinstance(failed, FailedRequest) and failed.request_id == 2
            assert isinstance(failed.error, HttpProtocolError)
            assert "larger than the frame size limit" in failed.error.message


async def test_an_oversized_sse_answer_fails_its_call_at_once_and_is_not_asked_again() -> None:
    async def huge_event(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call" and message["params"]["name"] == "big":
            await exchange.start(200, _sse_head())
            # Over the limit (2000) but not over the SSE line limit: the event is read whole.
            event = _text(message["id"], "x" * 1950)
            assert 2000 < len(event) < 2064
            await exchange.send(encode_event(event, event_id="big-1"))
            await trio.sleep_forever()
        return False

    fake = FakeMcp(huge_event)
    with trio.fail_after(10):
        async with open_fake_client(fake, revisions=HANDSHAKE_ERA, max_frame_size=2000) as (
            _,
            client,
        ):
            with pytest.raises(TransportError, match="exceeds the size limit of 2000 bytes"):
                await client.call_tool("big")
            assert (await client.list_tools()).tools[0].name == "echo"
    calls = [m["params"]["name"] for m in fake.posted if m.get("method") == "tools/call"]
    assert calls == ["big"]


def _initialize_frame(rid: int) -> bytes:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
    ).encode()


async def _frame(transport: Any) -> bytes:
    frame = await transport.receive()
    assert isinstance(frame, bytes)
    return frame


async def test_cancelled_request_stops_following_its_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if message.get("method") == "tools/call":
            await exchange.start(200, _sse_head())
            await exchange.send(encode_event("", event_id="c-0"))
            await trio.sleep_forever()
        return False

    fake = FakeMcp(slow)
    with trio.fail_after(60):
        async with open_fake_client(fake) as (_, client):
            with pytest.raises(mcptrio.protocol.errors.RequestTimeout):
                await client.call_tool("echo", {}, timeout=5)
            await trio.sleep(1)
            # The stream's connection was given up: the next call opens no new one beyond it.
            assert (await client.list_tools()).tools
    assert [m.get("method") for m in fake.posted][-2:] == ["notifications/cancelled", "tools/list"]


async def test_first_request_after_initialized_waits_for_the_standalone_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A server that sends notifications on the standalone stream in reaction to a request must
    # have that stream before it sees the request, or what it sends there is lost.
    order: list[str] = []

    async def slow_get(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method == "GET":
            await trio.sleep(0.5)
            await exchange.start(200, _sse_head())
            order.append("GET answered")
            await trio.sleep_forever()
        if message.get("method") == "tools/list":
            order.append("tools/list")
        return False

    fake = FakeMcp(slow_get)
    with trio.fail_after(30):
        async with open_fake_client(fake) as (_, client):
            await client.list_tools()
    assert order == ["GET answered", "tools/list"]


async def test_a_standalone_get_never_answered_delays_the_first_request_only_briefly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def silent_get(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method == "GET":
            await trio.sleep_forever()
        return False

    fake = FakeMcp(silent_get)
    with trio.fail_after(30):
        async with open_fake_client(fake) as (_, client):
            start = trio.current_time()
            await client.list_tools()
            assert trio.current_time() - start <= 2.5


@pytest.mark.parametrize("too_large", [False, True], ids=["answer", "answer-too-large"])
async def test_an_answer_arriving_on_another_stream_ends_the_wait_on_the_requests_own(
    autojump_clock: trio.testing.MockClock, too_large: bool
) -> None:
    # A lax server (the conformance suite's sse-retry mock is one) may put the answer to a POST
    # on the standalone GET stream; the POST's broken stream must not then be resumed. Nor when
    # the answer is over the client's size limit (which fails the call).
    text = "x" * 1950 if too_large else "from the GET"
    primed = trio.Event()
    resumptions: list[str] = []

    async def answer_elsewhere(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method == "GET":
            if "last-event-id" in request.headers:
                resumptions.append(request.headers["last-event-id"])
                await exchange.respond(200, _sse_head(), b"")
                return True
            await exchange.start(200, _sse_head())
            await primed.wait()
            await exchange.send(encode_event(_text(call_ids[0], text), event_id="g-1"))
            await trio.sleep_forever()
        if message.get("method") == "tools/call":
            call_ids.append(message["id"])
            await exchange.start(200, _sse_head())
            await exchange.send(encode_event("", event_id="p-1", retry_ms=100))
            primed.set()
            await trio.sleep(0.05)
            await exchange.end()
            return True
        return False

    call_ids: list[Any] = []
    fake = FakeMcp(answer_elsewhere)
    with trio.fail_after(30):
        async with open_fake_client(fake, max_frame_size=2000) as (_, client):
            if too_large:
                with pytest.raises(TransportError, match="exceeds the size limit"):
                    await client.call_tool("echo", {})
            else:
                result = await client.call_tool("echo", {})
                assert result.content == [TextContent(text=text)]
            await trio.sleep(2)
            await client.ping()
    assert resumptions == []
