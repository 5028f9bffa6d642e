"""HTTP/1.1 message framing per RFC 9112, on every front end: what could smuggle a request past
a proxy, or make two components disagree on a header, is refused and the connection closed."""

from __future__ import annotations

import pytest
import trio
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection
from test_front_ends import EchoApp

from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nhost: x\r\n\r\n"


async def send_and_collect(front_end: str, raw: bytes) -> tuple[bytes, EchoApp]:
    """Send ``raw`` on one connection; everything the server answered before closing it."""
    app = EchoApp()
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, open_test_connection(url) as conn:
            await conn.send_raw(raw)
            answer = await conn.receive_raw()
    return answer, app


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize(
    "framing",
    [
        b"content-length: 5\r\ntransfer-encoding: chunked\r\n",
        b"transfer-encoding: chunked\r\ncontent-length: 5\r\n",
        b"content-length: 0\r\ntransfer-encoding: chunked\r\n",
    ],
    ids=["cl-then-te", "te-then-cl", "cl-zero-and-te"],
)
async def test_content_length_with_transfer_encoding_gets_400_and_the_smuggled_request_never_runs(
    front_end: str, framing: bytes
) -> None:
    raw = b"POST /a HTTP/1.1\r\nhost: x\r\n" + framing + b"\r\n0\r\n\r\n" + SMUGGLED
    answer, app = await send_and_collect(front_end, raw)
    assert status_of(answer) == 400
    assert b"smuggled" not in answer
    assert answer.count(b"HTTP/1.1 ") == 1
    assert app.requests == 0


async def test_differing_content_lengths_get_400(front_end: str) -> None:
    raw = b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd"
    answer, app = await send_and_collect(front_end, raw + SMUGGLED)
    assert status_of(answer) == 400
    assert app.requests == 0


async def test_a_transfer_coding_other_than_chunked_is_refused(front_end: str) -> None:
    raw = b"POST /a HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
    answer, app = await send_and_collect(front_end, raw + SMUGGLED)
    assert status_of(answer) in (400, 501)
    assert app.requests == 0


async def test_two_host_headers_get_400(front_end: str) -> None:
    raw = b"GET /a HTTP/1.1\r\nhost: localhost\r\nhost: evil.example\r\n\r\n"
    answer, app = await send_and_collect(front_end, raw)
    assert status_of(answer) == 400
    assert app.requests == 0


async def test_an_http_1_1_request_without_host_gets_400(front_end: str) -> None:
    answer, app = await send_and_collect(front_end, b"GET /a HTTP/1.1\r\n\r\n")
    assert status_of(answer) == 400
    assert app.requests == 0


async def test_two_origin_headers_are_refused(front_end: str) -> None:
    raw = (
        b"POST /a HTTP/1.1\r\nhost: localhost\r\norigin: http://localhost\r\n"
        b"origin: http://evil.example\r\ncontent-length: 0\r\n\r\n"
    )
    answer, app = await send_and_collect(front_end, raw)
    assert status_of(answer) == 400
    assert app.requests == 0


async def test_a_well_framed_request_after_the_checks_is_still_served(front_end: str) -> None:
    app = EchoApp()
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, open_test_connection(url) as conn:
            one = await conn.request("POST", "/a", body=b"hello")
            two = await conn.request("GET", "/b")
    assert (one.status, two.status) == (200, 200)
    assert app.requests == 2


class BodyIgnoringApp:
    """Answers with its path, never reading the request body."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        self.paths.append(request.path)
        await responder.send_response(
            200, [(b"content-type", b"text/plain")], request.path.encode()
        )

    async def handle_websocket(self, request: HttpRequest, peer: object) -> None:
        raise AssertionError("no WebSocket here")


async def receive_until(stream: trio.abc.ReceiveStream, end: bytes) -> bytes:
    """What the server sends until ``end`` (a response's body) has come."""
    received = b""
    while not received.endswith(end):
        data = await stream.receive_some(65536)
        assert data, received
        received += data
    return received


@pytest.mark.parametrize("arrival", ["with-the-head", "after-the-answer"])
async def test_a_body_the_app_left_unread_is_discarded_and_the_next_request_served(
    front_end: str, arrival: str
) -> None:
    # The body's bytes must not be taken for the next request, whether they came with the head
    # or only after the answer (then the loop still owes them a read before the next head).
    app = BodyIgnoringApp()
    body = b"GET /not-a-request HTTP/1.1\r\nhost: x\r\n\r\n"
    head = b"POST /first HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body)
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, open_test_connection(url) as conn:
            if arrival == "with-the-head":
                await conn.send_raw(head + body)
            else:
                await conn.send_raw(head)
            first = await receive_until(conn.socket_stream, b"/first")
            if arrival == "after-the-answer":
                await conn.send_raw(body)
            await conn.send_raw(b"GET /second HTTP/1.1\r\nhost: x\r\n\r\n")
            second = await receive_until(conn.socket_stream, b"/second")
    assert status_of(first) == 200
    assert status_of(second) == 200
    assert app.paths == ["/first", "/second"]
