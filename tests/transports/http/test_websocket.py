"""MCP over WebSocket: the standalone server and the client, end to end on loopback.

Every test binds port 0 on 127.0.0.1 and runs under a ``trio.fail_after``. What the client and
server put on the wire is validated against the schema of the negotiated revision.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
import trio_websocket
from cancellation import Waiter
from eras import only
from front_ends_for_tests import open_front_end
from http_client_for_tests import tls_contexts

import mcptrio
from mcptrio.protocol.errors import ConnectionClosed
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.runtime.session import Session
from mcptrio.runtime.transport import Outgoing, Transport
from mcptrio.server.context import Context
from mcptrio.transports.http.engine.exchange import (
    Headers,
    HttpRequest,
    HttpResponder,
    WebSocketClosed,
    WebSocketPeer,
)
from mcptrio.transports.websocket import (
    WebSocketHandshakeError,
    WebSocketRejected,
    WebSocketTransport,
    open_websocket_client_transport,
    serve_websocket_session,
)
from mcptrio.transports.websocket_server import serve_websocket

from conftest import RecordingTransport
from schema_validation import validate_message

IO_LIMIT = 10


class Recorder(RecordingTransport):
    """A client transport that keeps every message it carries, decoded."""

    def validate(self, revision: str) -> None:
        for message in self.sent:
            validate_message(message, revision, "client")
        for message in self.received:
            validate_message(message, revision, "server")


class RecordingFactory:
    """Makes the server's sessions and remembers their transports."""

    def __init__(self, server: mcptrio.Server) -> None:
        self.server = server
        self.transports: list[Transport] = []
        self.sessions: list[Session] = []

    def session(self, transport: Transport) -> Session:
        self.transports.append(transport)
        session = self.server.session(transport)
        self.sessions.append(session)
        return session


def make_server(probe: Waiter) -> mcptrio.Server:
    server = mcptrio.Server("ws-test")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def echo_later(text: str, delay: float) -> str:
        await trio.sleep(delay)
        return text

    @server.tool()
    async def count(ctx: Context, steps: int) -> int:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return steps

    @server.tool()
    async def wait_forever() -> str:
        await probe.wait_until_cancelled()

    return server


@asynccontextmanager
async def serving(factory: Any, **options: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_websocket, factory, **options))
        yield url
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def recorded_client(
    url: str, **options: Any
) -> AsyncIterator[tuple[mcptrio.Client, Recorder]]:
    async with open_websocket_client_transport(url) as transport:
        recorder = Recorder(transport)
        async with mcptrio.open_client(recorder, **options) as client:
            yield client, recorder


def port_of(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


# ------------------------------------------------------------------ sessions end to end


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_initialize_list_and_call_over_websocket_in_every_revision(revision: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with (
            serving(make_server(Waiter())) as url,
            recorded_client(url, revisions=only(revision)) as (client, recorder),
        ):
            assert url.startswith("ws://127.0.0.1:") and url.endswith("/mcp")
            assert client.protocol_version == revision
            tools = await client.list_tools()
            assert {tool.name for tool in tools.tools} >= {"add", "count", "wait_forever"}
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5"  # type: ignore[union-attr]
        methods = [m.get("method") for m in recorder.sent]
        assert methods[:2] == ["initialize", "notifications/initialized"]
        recorder.validate(revision)


async def test_open_client_connects_to_a_ws_url_and_leaves_promptly() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter())) as url:
            async with mcptrio.open_client(url) as client:
                result = await client.call_tool("add", {"a": 20, "b": 22})
                assert result.content[0].text == "42"  # type: ignore[union-attr]
                left_at = trio.current_time()
            assert trio.current_time() - left_at < 1.0


async def test_progress_notifications_reach_the_caller() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(IO_LIMIT):
        async with (
            serving(make_server(Waiter())) as url,
            recorded_client(url) as (client, recorder),
        ):
            result = await client.call_tool("count", {"steps": 3}, on_progress=on_progress)
            assert result.content[0].text == "3"  # type: ignore[union-attr]
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert [m.get("method") for m in recorder.received].count("notifications/progress") == 3
        recorder.validate(client.protocol_version)


async def test_concurrent_calls_share_one_websocket() -> None:
    results: dict[int, str] = {}
    with trio.fail_after(IO_LIMIT):
        async with (
            serving(make_server(Waiter())) as url,
            recorded_client(url) as (client, recorder),
        ):

            async def call(i: int) -> None:
                # Later calls finish first, so answers come back out of order.
                result = await client.call_tool(
                    "echo_later", {"text": f"#{i}", "delay": (20 - i) / 200}
                )
                results[i] = result.content[0].text  # type: ignore[union-attr]

            async with trio.open_nursery() as nursery:
                for i in range(20):
                    nursery.start_soon(call, i)
        assert results == {i: f"#{i}" for i in range(20)}
        recorder.validate(client.protocol_version)


async def test_server_closing_the_socket_fails_the_pending_call_promptly() -> None:
    probe = Waiter()
    factory = RecordingFactory(make_server(probe))
    failures: list[BaseException] = []
    with trio.fail_after(IO_LIMIT):
        async with serving(factory) as url, mcptrio.open_client(url) as client:

            async def call() -> None:
                try:
                    await client.call_tool("wait_forever")
                except ConnectionClosed as exc:
                    failures.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await probe.entered.wait()
                closed_at = trio.current_time()
                await factory.transports[0].aclose()
            assert trio.current_time() - closed_at < 1.0
            assert len(failures) == 1
            with pytest.raises(ConnectionClosed):
                await client.call_tool("add", {"a": 1, "b": 1})
        assert probe.cancelled.is_set()


async def test_cancelled_call_reaches_the_server_as_notifications_cancelled() -> None:
    probe = Waiter()
    factory = RecordingFactory(make_server(probe))
    with trio.fail_after(IO_LIMIT):
        async with serving(factory) as url, recorded_client(url) as (client, recorder):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(client.call_tool, "wait_forever"))
                await probe.entered.wait()
                nursery.cancel_scope.cancel()
            await probe.cancelled.wait()
            # The session lives on: the handler was stopped by the notification, not by an end.
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.content[0].text == "3"  # type: ignore[union-attr]
            assert factory.sessions[0].statistics().in_flight_incoming == 0
        cancels = [m for m in recorder.sent if m.get("method") == "notifications/cancelled"]
        assert len(cancels) == 1
        call_ids = [m["id"] for m in recorder.sent if m.get("method") == "tools/call"]
        assert cancels[0]["params"]["requestId"] == call_ids[0]
        # No answer to the cancelled request came back.
        assert all(m.get("id") != call_ids[0] for m in recorder.received)
        recorder.validate(client.protocol_version)


async def test_cancelling_the_server_ends_the_client_session() -> None:
    probe = Waiter()
    # The server's own scope: the client block, outside it, lives on to see the session end.
    server_scope = trio.CancelScope()

    async def run_server(*, task_status: trio.TaskStatus[str]) -> None:
        with server_scope:
            await serve_websocket(make_server(probe), task_status=task_status)

    with trio.fail_after(IO_LIMIT):
        async with trio.open_nursery() as server_nursery:
            url = await server_nursery.start(run_server)
            async with mcptrio.open_client(url) as client:
                async with trio.open_nursery() as nursery:

                    async def call() -> None:
                        with pytest.raises(ConnectionClosed):
                            await client.call_tool("wait_forever")

                    nursery.start_soon(call)
                    await probe.entered.wait()
                    stopped_at = trio.current_time()
                    server_scope.cancel()
                assert probe.cancelled.is_set()
            # Every session said goodbye properly instead of waiting out the close timeout.
            assert trio.current_time() - stopped_at < 1.0


async def test_wss_with_tls() -> None:
    server_context, client_context = tls_contexts("127.0.0.1")
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter()), ssl_context=server_context) as url:
            assert url.startswith("wss://127.0.0.1:")
            async with (
                open_websocket_client_transport(url, ssl_context=client_context) as transport,
                mcptrio.open_client(transport) as client,
            ):
                result = await client.call_tool("add", {"a": 1, "b": 1})
                assert result.content[0].text == "2"  # type: ignore[union-attr]


# ------------------------------------------------------------------ refused upgrades


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://localhost.evil.example"])
async def test_foreign_origin_is_refused_with_403(origin: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter())) as url:
            with pytest.raises(WebSocketRejected) as info:
                async with open_websocket_client_transport(url, headers={"Origin": origin}):
                    pass
            assert info.value.status_code == 403


@pytest.mark.parametrize(
    "origin", ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:80"]
)
async def test_local_origin_is_allowed_by_default(origin: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with (
            serving(make_server(Waiter())) as url,
            open_websocket_client_transport(url, headers={"Origin": origin}) as transport,
            mcptrio.open_client(transport) as client,
        ):
            await client.ping()


async def test_allowed_origins_replace_the_default() -> None:
    allowed = ["https://app.example"]
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter()), allowed_origins=allowed) as url:
            async with (
                open_websocket_client_transport(
                    url, headers={"Origin": "https://APP.example/"}
                ) as t,
                mcptrio.open_client(t) as client,
            ):
                await client.ping()
            with pytest.raises(WebSocketRejected) as info:
                async with open_websocket_client_transport(
                    url, headers={"Origin": "http://localhost"}
                ):
                    pass
            assert info.value.status_code == 403


async def test_wrong_path_is_refused_with_404() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter()), path="/mcp") as url:
            with pytest.raises(WebSocketRejected) as info:
                async with open_websocket_client_transport(url.replace("/mcp", "/other")):
                    pass
            assert info.value.status_code == 404


async def test_client_not_offering_mcp_is_refused_with_400() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter())) as url:
            with pytest.raises(trio_websocket.ConnectionRejected) as info:
                async with trio_websocket.open_websocket_url(url, subprotocols=["graphql-ws"]):
                    pass
            assert info.value.status_code == 400
            assert b"mcp" in (info.value.body or b"")


async def test_sessions_past_max_connections_are_refused_with_503() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter()), max_connections=1) as url:
            async with mcptrio.open_client(url) as client:
                await client.ping()
                with pytest.raises(WebSocketRejected) as info:
                    async with open_websocket_client_transport(url):
                        pass
                assert info.value.status_code == 503
            # The slot is freed once the first session has closed.
            while True:
                try:
                    async with mcptrio.open_client(url) as client:
                        await client.ping()
                        break
                except WebSocketRejected:
                    await trio.sleep(0.01)


async def test_silent_connection_is_dropped_after_the_handshake_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(60):
        async with serving(make_server(Waiter()), handshake_timeout=5) as url:
            stream = await trio.open_tcp_stream("127.0.0.1", port_of(url))
            started = trio.current_time()
            assert await stream.receive_some() == b""
            assert trio.current_time() - started >= 5
            await stream.aclose()


async def test_connection_refused_raises_handshake_error() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    await listener.aclose()
    with trio.fail_after(IO_LIMIT), pytest.raises(WebSocketHandshakeError):
        async with open_websocket_client_transport(f"ws://127.0.0.1:{port}/mcp"):
            pass


# ------------------------------------------------------------------ bad messages


@asynccontextmanager
async def raw_client(url: str) -> AsyncIterator[trio_websocket.WebSocketConnection]:
    """A bare trio-websocket client offering ``mcp``, to put arbitrary messages on the wire."""
    async with trio_websocket.open_websocket_url(url, subprotocols=["mcp"]) as ws:
        yield ws


async def test_binary_message_closes_with_1003() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter())) as url, raw_client(url) as ws:
            await ws.send_message(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
            with pytest.raises(trio_websocket.ConnectionClosed) as info:
                await ws.get_message()
            assert info.value.reason is not None and info.value.reason.code == 1003


@pytest.mark.parametrize("text", ["x" * 1001, "é" * 600], ids=["characters", "bytes"])
async def test_message_over_max_frame_size_closes_with_1009(text: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with (
            serving(make_server(Waiter()), max_frame_size=1000) as url,
            raw_client(url) as ws,
        ):
            await ws.send_message(text)
            with pytest.raises(trio_websocket.ConnectionClosed) as info:
                await ws.get_message()
            assert info.value.reason is not None and info.value.reason.code == 1009


async def test_text_that_is_not_json_gets_a_parse_error_and_the_socket_stays_open() -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(make_server(Waiter())) as url, raw_client(url) as ws:
            await ws.send_message("not json")
            answer = json.loads(await ws.get_message())
            # JSON-RPC answers a parse error with "id": null, which the MCP schemas do not
            # describe; the protocol layer owns that choice, so only the code is checked.
            assert answer["error"]["code"] == -32700
            await ws.send_message('{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
            assert json.loads(await ws.get_message())["id"] == 7


# ------------------------------------------------------------------ the client's side


@asynccontextmanager
async def raw_server(
    subprotocol: str | None,
) -> AsyncIterator[tuple[str, trio.MemoryReceiveChannel[int | None]]]:
    """A bare trio-websocket server; yields its URL and the close code of each client."""
    close_codes, codes = trio.open_memory_channel[int | None](10)

    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        connection = await request.accept(subprotocol=subprotocol)
        try:
            while True:
                await connection.get_message()
        except trio_websocket.ConnectionClosed as exc:
            await close_codes.send(exc.reason.code if exc.reason else None)

    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            partial(trio_websocket.serve_websocket, handler, "127.0.0.1", 0, None)
        )
        yield f"ws://127.0.0.1:{server.port}/mcp", codes
        nursery.cancel_scope.cancel()


async def test_client_refuses_a_server_that_does_not_select_mcp() -> None:
    with trio.fail_after(IO_LIMIT):
        async with raw_server(None) as (url, codes):
            with pytest.raises(WebSocketHandshakeError, match="did not select"):
                async with open_websocket_client_transport(url):
                    pass
            assert await codes.receive() == 1002


async def test_client_leaving_closes_with_1000_even_when_cancelled() -> None:
    with trio.fail_after(IO_LIMIT):
        async with raw_server("mcp") as (url, codes):
            async with open_websocket_client_transport(url) as transport:
                await transport.send([Outgoing(b'{"jsonrpc": "2.0", "method": "x"}')])
            assert await codes.receive() == 1000
            left_at = trio.current_time()
            with trio.CancelScope() as scope:
                async with open_websocket_client_transport(url) as transport:
                    scope.cancel()
                    await trio.sleep_forever()
            # The close handshake completed rather than waiting out its timeout.
            assert trio.current_time() - left_at < 1.0
            assert await codes.receive() == 1000


async def test_transport_after_close() -> None:
    with trio.fail_after(IO_LIMIT):
        async with raw_server("mcp") as (url, codes), open_websocket_client_transport(url) as t:
            assert isinstance(t, WebSocketTransport)
            await t.aclose()
            await t.aclose()
            with pytest.raises(trio.ClosedResourceError):
                await t.send([Outgoing(b"{}")])
            with pytest.raises(trio.EndOfChannel):
                await t.receive()
            assert await codes.receive() == 1000


# ------------------------------------------------------------------ on every HTTP front end


class WebSocketOnlyApp:
    """The smallest HttpApp serving MCP over WebSocket: every upgrade becomes a session."""

    def __init__(self, factory: Any, max_frame_size: int = 4 * 1024 * 1024) -> None:
        self.factory = factory
        self.max_frame_size = max_frame_size

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        await responder.send_response(404, [(b"content-type", b"text/plain")], b"Not Found")

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await serve_websocket_session(
            self.factory, request, peer, max_frame_size=self.max_frame_size
        )


@asynccontextmanager
async def front_end_url(front_end: str, app: WebSocketOnlyApp) -> AsyncIterator[str]:
    async with open_front_end(front_end, app) as base_url:
        yield base_url.replace("http://", "ws://", 1) + "/mcp"


async def test_sessions_through_every_front_end(front_end: str) -> None:
    probe = Waiter()
    with trio.fail_after(IO_LIMIT):
        async with (
            front_end_url(front_end, WebSocketOnlyApp(make_server(probe))) as url,
            recorded_client(url) as (client, recorder),
        ):
            result = await client.call_tool("count", {"steps": 2}, on_progress=lambda *_: None)
            assert result.content[0].text == "2"  # type: ignore[union-attr]
            async with trio.open_nursery() as nursery:
                for i in range(10):
                    nursery.start_soon(
                        partial(client.call_tool, "echo_later", {"text": str(i), "delay": 0.01})
                    )
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(client.call_tool, "wait_forever"))
                await probe.entered.wait()
                nursery.cancel_scope.cancel()
            await probe.cancelled.wait()
            await client.ping()
            left_at = trio.current_time()
        assert trio.current_time() - left_at < 1.0
        assert "notifications/cancelled" in [m.get("method") for m in recorder.sent]
        recorder.validate(client.protocol_version)


async def test_front_end_closing_mid_call_fails_the_pending_call(front_end: str) -> None:
    probe = Waiter()
    factory = RecordingFactory(make_server(probe))
    with trio.fail_after(IO_LIMIT):
        async with (
            front_end_url(front_end, WebSocketOnlyApp(factory)) as url,
            mcptrio.open_client(url) as client,
        ):

            async def call() -> None:
                with pytest.raises(ConnectionClosed):
                    await client.call_tool("wait_forever")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await probe.entered.wait()
                await factory.transports[0].aclose()


async def test_front_end_refuses_a_client_without_mcp(front_end: str) -> None:
    with trio.fail_after(IO_LIMIT):
        async with front_end_url(front_end, WebSocketOnlyApp(make_server(Waiter()))) as url:
            with pytest.raises(trio_websocket.ConnectionRejected) as info:
                async with trio_websocket.open_websocket_url(url, subprotocols=["other"]):
                    pass
            assert info.value.status_code == 400


@pytest.mark.parametrize(
    ("message", "code"),
    [(b"{}", 1003), ("x" * 1001, 1009), ("é" * 600, 1009)],
    ids=["binary", "characters", "bytes"],
)
async def test_front_end_closes_on_bad_messages(
    front_end: str, message: str | bytes, code: int
) -> None:
    app = WebSocketOnlyApp(make_server(Waiter()), max_frame_size=1000)
    with trio.fail_after(IO_LIMIT):
        async with front_end_url(front_end, app) as url, raw_client(url) as ws:
            await ws.send_message(message)
            with pytest.raises(trio_websocket.ConnectionClosed) as info:
                await ws.get_message()
            assert info.value.reason is not None and info.value.reason.code == code


# ------------------------------------------------------------------ the transport's contract


class ScriptedPeer:
    """A WebSocketPeer that replays ``messages``, then reports the peer closed."""

    def __init__(
        self,
        messages: Sequence[str | bytes] = (),
        *,
        subprotocols: Sequence[str] = ("mcp",),
        hang: str = "",
    ) -> None:
        self.incoming = list(messages)
        self.subprotocols = subprotocols
        self.hang = hang
        self.sent: list[str] = []
        self.closed_with: list[int] = []
        self.accepted: str | None = None
        self.rejected: int | None = None

    async def accept(
        self, subprotocol: str | None, headers: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        if self.hang == "accept":
            await trio.sleep_forever()
        self.accepted = subprotocol

    async def reject(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        await trio.lowlevel.checkpoint()
        self.rejected = status

    async def receive_message(self, limit: int) -> str | bytes:
        await trio.lowlevel.checkpoint()
        if not self.incoming:
            raise WebSocketClosed
        return self.incoming.pop(0)

    async def send_text(self, data: str) -> None:
        if self.hang == "send":
            await trio.sleep_forever()
        self.sent.append(data)

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        self.closed_with.append(code)
        if self.hang == "close":
            await trio.sleep_forever()


class NoRequest:
    method = "GET"
    path = "/mcp"
    query_string = b""
    headers: Sequence[tuple[bytes, bytes]] = ()
    client = None
    scheme = "http"

    async def read_body(self, limit: int) -> bytes:
        return b""


async def test_transport_hands_over_text_as_utf8_and_ends_on_close() -> None:
    peer = ScriptedPeer(['{"a": "é"}'])
    transport = WebSocketTransport(peer)
    assert await transport.receive() == '{"a": "é"}'.encode()
    for _ in range(2):
        with pytest.raises(trio.EndOfChannel):
            await transport.receive()
    await transport.send([Outgoing(b"1"), Outgoing(b"2", related=5)])
    assert peer.sent == ["1", "2"]
    await transport.aclose()
    await transport.aclose()
    assert peer.closed_with == [1000]


@pytest.mark.parametrize(
    ("message", "code"), [(b"{}", 1003), ("é" * 6, 1009)], ids=["binary", "oversized"]
)
async def test_transport_closes_on_a_bad_message_and_ends(message: str | bytes, code: int) -> None:
    peer = ScriptedPeer([message, "{}"])
    transport = WebSocketTransport(peer, max_frame_size=10)
    with pytest.raises(trio.EndOfChannel):
        await transport.receive()
    with pytest.raises(trio.EndOfChannel):
        await transport.receive()
    assert peer.closed_with == [code] and transport.close_code == code
    with pytest.raises(trio.ClosedResourceError):
        await transport.send([Outgoing(b"{}")])


async def test_peer_that_takes_nothing_is_closed_with_1008(
    autojump_clock: trio.testing.MockClock,
) -> None:
    peer = ScriptedPeer(hang="send")
    transport = WebSocketTransport(peer, send_timeout=30)
    with trio.fail_after(60):
        started = trio.current_time()
        with pytest.raises(trio.BrokenResourceError):
            await transport.send([Outgoing(b"{}")])
        assert trio.current_time() - started == pytest.approx(30)
    assert peer.closed_with == [1008]


async def test_close_is_shielded_and_bounded(autojump_clock: trio.testing.MockClock) -> None:
    peer = ScriptedPeer(hang="close")
    transport = WebSocketTransport(peer, close_timeout=5)
    with trio.fail_after(60):
        with trio.CancelScope() as scope:
            scope.cancel()
            started = trio.current_time()
            await transport.aclose()
        assert trio.current_time() - started == pytest.approx(5)
    assert peer.closed_with == [1000]


async def test_session_refused_without_mcp_and_dropped_when_accept_hangs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = make_server(Waiter())
    with trio.fail_after(60):
        refused = ScriptedPeer(subprotocols=("other",))
        await serve_websocket_session(server, NoRequest(), refused)
        assert refused.rejected == 400 and refused.accepted is None
        stuck = ScriptedPeer(hang="accept")
        started = trio.current_time()
        await serve_websocket_session(server, NoRequest(), stuck, handshake_timeout=3)
        assert trio.current_time() - started == pytest.approx(3)
        ended = ScriptedPeer()
        await serve_websocket_session(server, NoRequest(), ended)
        assert ended.accepted == "mcp" and ended.closed_with == [1000]
