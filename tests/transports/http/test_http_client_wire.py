"""The HTTP client's response parsing, with httptools and with the h11 fallback alike: the bounds
and framing rules hold whichever parser reads, against a server that writes raw bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio
from fake_server import FakeExchange, FakeRequest, FakeServerStats, serve_fake_http

from mcptrio.transports.http.engine.client_pool import (
    HttpClientPool,
    HttpProtocolError,
    split_url,
)
from mcptrio.transports.http.engine.client_wire import MAX_HEAD_SIZE, ConnectionParser, ParserName

pytest.importorskip("httptools")

PARSERS: list[ParserName] = ["httptools", "h11"]


@asynccontextmanager
async def raw_server(answers: list[bytes], seen: list[bytes]) -> AsyncIterator[str]:
    """Answers each request head it reads (a request has no body here, or a short one) with the
    next of ``answers``, then closes the connection when the answers run out."""

    async def handler(stream: trio.SocketStream) -> None:
        buffer = b""
        while answers:
            while b"\r\n\r\n" not in buffer:
                data = await stream.receive_some(65536)
                if not data:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            seen.append(head)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buffer) < length:
                buffer += await stream.receive_some(65536)
            buffer = buffer[length:]
            await stream.send_all(answers.pop(0))
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("parser", PARSERS)
async def test_content_length_with_transfer_encoding_is_refused(parser: ParserName) -> None:
    smuggled = (
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    with trio.fail_after(5):
        async with raw_server([smuggled], []) as url:
            pool = HttpClientPool(parser=parser)
            with pytest.raises(HttpProtocolError):
                async with pool.request("GET", url) as response:
                    await response.read(100)
            await pool.aclose()


@pytest.mark.parametrize("parser", PARSERS)
async def test_a_response_head_over_the_limit_is_refused(parser: ParserName) -> None:
    huge = b"HTTP/1.1 200 OK\r\n" + b"x-filler: " + b"y" * MAX_HEAD_SIZE + b"\r\n\r\n"
    with trio.fail_after(5):
        async with raw_server([huge], []) as url:
            pool = HttpClientPool(parser=parser)
            with pytest.raises(HttpProtocolError):
                async with pool.request("GET", url):
                    pass
            await pool.aclose()


@pytest.mark.parametrize("parser", PARSERS)
async def test_a_body_without_framing_runs_to_the_close_and_the_connection_is_not_reused(
    parser: ParserName,
) -> None:
    answers = [b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end"]
    with trio.fail_after(5):
        async with raw_server(answers, []) as url:
            pool = HttpClientPool(parser=parser)
            async with pool.request("GET", url) as response:
                assert await response.read(100) == b"until the end"
                assert response.complete
            assert pool.idle_connections(split_url(url)[0]) == 0
            await pool.aclose()


@pytest.mark.parametrize("parser", PARSERS)
async def test_interim_responses_are_skipped_and_keep_alive_reuses_the_connection(
    parser: ParserName,
) -> None:
    answers = [
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\none",
        b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n",
    ]
    seen: list[bytes] = []
    with trio.fail_after(5):
        async with raw_server(answers, seen) as url:
            pool = HttpClientPool(parser=parser)
            async with pool.request("POST", url, body=b"a") as response:
                assert response.status == 200
                assert await response.read(100) == b"one"
            async with pool.request("POST", url, body=b"b") as response:
                assert (response.status, response.reason) == (201, "Created")
                assert await response.read(100) == b"two"
            assert pool.idle_connections(split_url(url)[0]) == 1
            await pool.aclose()
    # One connection served both (the server reads both heads on it), each with its length.
    assert [head.split(b"\r\n")[0] for head in seen] == [b"POST /mcp HTTP/1.1"] * 2
    assert all(b"content-length: 1" in head for head in seen)


def test_one_llhttp_parser_reads_a_connections_responses_one_after_another() -> None:
    # The httptools reader keeps its llhttp parser for the connection's next response: that
    # holds only because the pool reuses a connection whose last response ended (reusable).
    parser = ConnectionParser("httptools")
    answers = [
        ([b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\none"], 200, b"one"),
        (
            [b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n"],
            201,
            b"two",
        ),
        ([b"HTTP/1.1 204 No Content\r\n\r\n"], 204, b""),
        ([b"HTTP/1.1 200 OK\r\ncontent", b"-length: 4\r\n\r\nfo", b"ur"], 200, b"four"),
    ]
    first = parser.reader()
    for pieces, status, body in answers:
        reader = parser.reader()
        assert reader is first
        assert reader.head is None and not reader.complete
        for piece in pieces:
            reader.feed(piece)
        assert reader.head is not None and reader.head.status == status
        assert b"".join(reader.body) == body
        assert reader.complete and reader.reusable()


@pytest.mark.parametrize("parser", PARSERS)
async def test_bytes_after_the_response_are_a_protocol_error_or_never_reused(
    parser: ParserName,
) -> None:
    answers = [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n"]
    with trio.fail_after(5):
        async with raw_server(answers, []) as url:
            pool = HttpClientPool(parser=parser)
            try:
                async with pool.request("GET", url) as response:
                    await response.read(100)
            except HttpProtocolError:
                pass
            assert pool.idle_connections(split_url(url)[0]) == 0
            await pool.aclose()


@pytest.mark.parametrize(
    "header", [("x-evil", "a\r\nx-injected: 1"), ("bad name", "v"), ("x-nul", "a\x00b")]
)
async def test_a_header_that_would_break_the_request_head_is_refused_before_sending(
    header: tuple[str, str],
) -> None:
    seen: list[bytes] = []
    with trio.fail_after(5):
        async with raw_server([b"HTTP/1.1 204 No Content\r\n\r\n"], seen) as url:
            pool = HttpClientPool()
            with pytest.raises(ValueError, match="header"):
                async with pool.request("GET", url, headers=[header]):
                    pass
            await pool.aclose()
    assert seen == []


async def test_the_fallback_parser_is_used_when_asked() -> None:
    with trio.fail_after(5):
        async with raw_server([b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"], []) as url:
            pool = HttpClientPool(parser="h11")
            async with pool.request("GET", url) as response:
                assert response._connection.parser.kind == "h11"
                assert await response.read(10) == b"ok"
            await pool.aclose()
    with pytest.raises(ValueError, match="unknown parser"):
        HttpClientPool(parser="fast")  # type: ignore[arg-type]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("json_response", [True, False])
async def test_calls_over_either_parser_and_either_answer_mode_from_many_callers(
    parser: ParserName, json_response: bool
) -> None:
    import mcptrio
    from mcptrio.transports.http.client.streamable import open_streamable_http_client_transport

    server = mcptrio.Server("wire")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(partial(server.serve_http, json_response=json_response))
            pool = HttpClientPool(parser=parser, max_connections=12)
            async with (
                open_streamable_http_client_transport(f"{base}/mcp", pool=pool) as transport,
                mcptrio.open_client(transport) as client,
            ):
                results: list[str] = []

                async def caller(n: int) -> None:
                    for i in range(5):
                        result = await client.call_tool("add", {"a": n, "b": i})
                        results.append(getattr(result.content[0], "text", ""))

                async with trio.open_nursery() as callers:
                    for n in range(8):
                        callers.start_soon(caller, n)
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert sorted(results) == sorted(str(n + i) for n in range(8) for i in range(5))


async def test_concurrent_requests_each_keep_their_connection_for_the_next_round() -> None:
    stats = FakeServerStats()
    arrived = 0
    all_in = trio.Event()

    async def wait_for_all(request: FakeRequest, exchange: FakeExchange) -> None:
        nonlocal arrived
        arrived += 1
        if arrived % 16 == 0:
            all_in.set()
        await all_in.wait()
        await exchange.respond(200, body=b"ok")

    async def one(pool: HttpClientPool, url: str) -> None:
        async with pool.request("GET", url) as response:
            assert await response.read(10) == b"ok"

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_fake_http, wait_for_all, stats)
            url = f"http://127.0.0.1:{port}/"
            pool = HttpClientPool(max_connections=16)
            for _ in range(3):
                all_in = trio.Event()
                async with trio.open_nursery() as callers:
                    for _ in range(16):
                        callers.start_soon(one, pool, url)
                assert pool.idle_connections(split_url(url)[0]) == 16
            await pool.aclose()
            nursery.cancel_scope.cancel()
    # Sixteen at once, three times over: sixteen connections, none reopened.
    assert (stats.connections, len(stats.requests)) == (16, 48)
