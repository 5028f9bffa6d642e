"""The same behaviour on every HTTP front end: built-in (h11, httptools) and Hypercorn (ASGI)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio_websocket
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection

from mcptrio.transports.http.engine.asgi import AsgiApp, mount_asgi
from mcptrio.transports.http.engine.exchange import (
    BodyTooLarge,
    HttpRequest,
    HttpResponder,
    WebSocketClosed,
    WebSocketPeer,
)
from mcptrio.transports.http.engine.router import HttpRouter
from mcptrio.transports.http.serve import serve_http

JSON = [(b"content-type", b"application/json")]


class EchoApp:
    """Echoes what it received; a few paths exercise streaming, limits and failures."""

    def __init__(self, name: str = "echo") -> None:
        self.name = name
        self.go = trio.Event()
        self.stream_cancelled = trio.Event()
        self.requests = 0

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        self.requests += 1
        path = request.path
        if path.endswith("/limit"):
            try:
                body = await request.read_body(10)
            except BodyTooLarge:
                await responder.send_response(413, JSON, b'{"error": "too large"}')
                return
            await responder.send_response(200, JSON, body)
        elif path == "/stream":
            await responder.start_stream(200, [(b"content-type", b"text/event-stream")])
            await responder.send_chunk(b"data: one\n\n")
            await self.go.wait()
            await responder.send_chunk(b"data: two\n\n")
            await responder.end_stream()
        elif path == "/forever":
            await responder.start_stream(200, [(b"content-type", b"text/event-stream")])
            await responder.send_chunk(b"data: hello\n\n")
            try:
                await trio.sleep_forever()
            finally:
                self.stream_cancelled.set()
        elif path == "/no-reply":
            return
        elif path == "/boom":
            raise RuntimeError("handler failure")
        else:
            body = await request.read_body(1 << 20)
            echo = {
                "app": self.name,
                "method": request.method,
                "path": request.path,
                "root_path": getattr(request, "root_path", ""),
                "query": request.query_string.decode(),
                "x_test": [v.decode() for k, v in request.headers if k == b"x-test"],
                "body": body.decode(),
                "scheme": request.scheme,
                "has_client": request.client is not None,
            }
            await responder.send_response(200, JSON, json.dumps(echo).encode())

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        if "mcp" not in peer.subprotocols:
            await peer.reject(403, b"subprotocol mcp required")
            return
        await peer.accept("mcp")
        try:
            while True:
                message = await peer.receive_message(1000)
                await peer.send_text(message if isinstance(message, str) else message.decode())
        except WebSocketClosed:
            pass


async def test_method_path_query_and_headers_reach_the_app(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            response = await conn.request(
                "PUT",
                "/some%20where/x?a=1&b=%20",
                headers=[("X-Test", "one"), ("x-test", "two")],
                body=b"payload",
            )
    assert response.status == 200
    assert response.header("content-type") == b"application/json"
    echo = response.json()
    assert echo["method"] == "PUT"
    assert echo["path"] == "/some where/x"
    assert echo["query"] == "a=1&b=%20"
    assert echo["x_test"] == ["one", "two"]
    assert echo["body"] == "payload"
    assert echo["scheme"] == "http"
    assert echo["has_client"]


async def test_body_over_the_limit_raises_body_too_large(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            small = await conn.request("POST", "/limit", body=b"0123456789")
            async with open_test_connection(url) as conn:
                large = await conn.request("POST", "/limit", body=b"x" * 5000)
            async with open_test_connection(url) as conn:
                chunked = await conn.request("POST", "/limit", body=[b"x" * 6, b"y" * 6])
    assert (small.status, small.body) == (200, b"0123456789")
    assert large.status == 413
    assert chunked.status == 413


async def test_keep_alive_reuses_the_connection(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            for n in range(3):
                response = await conn.request("GET", f"/n{n}")
                assert response.json()["path"] == f"/n{n}"
            assert conn.reused == 2


async def test_pipelined_requests_are_answered_in_order(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            responses = await conn.pipeline(
                [("GET", "/first"), ("POST", "/second", b"body two"), ("GET", "/third")]
            )
    assert [r.json()["path"] for r in responses] == ["/first", "/second", "/third"]
    assert responses[1].json()["body"] == "body two"


async def test_chunked_request_body_is_reassembled(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            response = await conn.request("POST", "/echo", body=[b"ab", b"cd", b"ef"])
    assert response.json()["body"] == "abcdef"


async def test_expect_100_continue_gets_continue_before_the_body(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            host = url.split("//")[1]
            await conn.send_raw(
                b"POST /echo HTTP/1.1\r\nhost: %b\r\ncontent-length: 5\r\n"
                b"expect: 100-continue\r\nconnection: close\r\n\r\n" % host.encode()
            )
            interim = await conn.socket_stream.receive_some(1000)
            assert interim.startswith(b"HTTP/1.1 100")
            await conn.send_raw(b"hello")
            rest = await conn.receive_raw()
    final = (interim + rest).split(b"\r\n\r\n", 1)[1]
    assert final.startswith(b"HTTP/1.1 200")
    assert b'"body": "hello"' in final


async def test_streamed_response_arrives_incrementally(front_end: str) -> None:
    app = EchoApp()
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, open_test_connection(url) as conn:
            async with conn.stream("GET", "/stream") as response:
                assert response.status == 200
                assert response.header("content-type") == b"text/event-stream"
                first = await response.next_chunk()
                assert first == b"data: one\n\n"
                app.go.set()
                assert await response.read_all() == b"data: two\n\n"
            after = await conn.request("GET", "/after")
            assert after.json()["path"] == "/after"


async def test_client_disconnect_mid_stream_cancels_the_handler(front_end: str) -> None:
    app = EchoApp()
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url:
            async with (
                open_test_connection(url) as conn,
                conn.stream("GET", "/forever") as response,
            ):
                assert await response.next_chunk() == b"data: hello\n\n"
            await app.stream_cancelled.wait()


async def test_handler_without_response_or_failing_gets_500(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            silent = await conn.request("GET", "/no-reply")
            async with open_test_connection(url) as conn:
                failing = await conn.request("GET", "/boom")
    assert silent.status == 500
    assert failing.status == 500


async def test_malformed_request_gets_400(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url, open_test_connection(url) as conn:
            await conn.send_raw(b"NOT HTTP AT ALL\r\n\r\n")
            assert await conn.raw_status() == 400


async def test_websocket_echo_with_subprotocol(front_end: str) -> None:
    ws_url = ""
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url:
            ws_url = url.replace("http://", "ws://") + "/ws"
            async with trio_websocket.open_websocket_url(ws_url, subprotocols=["mcp"]) as ws:
                assert ws.subprotocol == "mcp"
                await ws.send_message("hello")
                assert await ws.get_message() == "hello"
                await ws.send_message(b"bytes")
                assert await ws.get_message() == "bytes"


async def test_websocket_without_subprotocol_is_rejected(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url:
            ws_url = url.replace("http://", "ws://") + "/ws"
            with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
                async with trio_websocket.open_websocket_url(ws_url):
                    pass
    assert rejected.value.status_code == 403


async def test_websocket_message_over_the_limit_closes_with_1009(front_end: str) -> None:
    with trio.fail_after(10):
        async with open_front_end(front_end, EchoApp()) as url:
            ws_url = url.replace("http://", "ws://") + "/ws"
            async with trio_websocket.open_websocket_url(ws_url, subprotocols=["mcp"]) as ws:
                await ws.send_message("x" * 5000)
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    await ws.get_message()
    assert closed.value.reason.code == 1009


async def test_router_picks_the_longest_prefix_and_404s_the_rest(front_end: str) -> None:
    router = HttpRouter({"/a": EchoApp("a"), "/a/b": EchoApp("ab")})
    with trio.fail_after(10):
        async with open_front_end(front_end, router) as url, open_test_connection(url) as conn:
            deep = (await conn.request("GET", "/a/b/mcp")).json()
            shallow = (await conn.request("GET", "/a/mcp")).json()
            exact = (await conn.request("GET", "/a")).json()
            missing = await conn.request("GET", "/ab/mcp")
    assert (deep["app"], deep["path"], deep["root_path"]) == ("ab", "/mcp", "/a/b")
    assert (shallow["app"], shallow["path"], shallow["root_path"]) == ("a", "/mcp", "/a")
    assert (exact["app"], exact["path"]) == ("a", "/")
    assert missing.status == 404
    assert missing.header("content-type") == b"application/json"
    assert missing.json()["error"] == "not found"


@pytest.mark.parametrize("front_end_name", ["builtin", "hypercorn"])
async def test_serve_http_multiplexes_a_mapping_and_runs_apps(front_end_name: str) -> None:
    class RunningApp(EchoApp):
        running = False

        async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            self.running = True
            task_status.started()
            await trio.sleep_forever()

    one, two = RunningApp("one"), RunningApp("two")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(
                lambda task_status: serve_http(
                    {"/one": one, "/two": two}, front_end=front_end_name, task_status=task_status
                )
            )
            assert one.running and two.running
            async with open_test_connection(url) as conn:
                first = (await conn.request("GET", "/one/mcp")).json()
                second = (await conn.request("GET", "/two/mcp")).json()
            nursery.cancel_scope.cancel()
    assert (first["app"], second["app"]) == ("one", "two")


async def test_mount_into_a_quart_trio_app_served_by_hypercorn() -> None:
    from hypercorn.config import Config
    from hypercorn.trio import serve
    from quart_trio import QuartTrio

    quart_app = QuartTrio(__name__)

    @quart_app.route("/hello")
    async def hello() -> str:
        return "hello from quart"

    quart_app.asgi_app = mount_asgi(quart_app.asgi_app, "/mcp-prefix", AsgiApp(EchoApp()))  # type: ignore[method-assign]

    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                lambda task_status: serve(quart_app, config, task_status=task_status)
            )
            async with open_test_connection(binds[0]) as conn:
                quart = await conn.request("GET", "/hello")
                mounted = await conn.request("POST", "/mcp-prefix/mcp?x=1", body=b"hi")
                ws_url = binds[0].replace("http://", "ws://") + "/mcp-prefix/mcp"
                async with trio_websocket.open_websocket_url(ws_url, subprotocols=["mcp"]) as ws:
                    await ws.send_message("ping")
                    assert await ws.get_message() == "ping"
            nursery.cancel_scope.cancel()
    assert (quart.status, quart.body) == (200, b"hello from quart")
    echo = mounted.json()
    assert (echo["path"], echo["root_path"], echo["body"]) == ("/mcp", "/mcp-prefix", "hi")
