"""The built-in server's request parsers let go of their state between two requests while a
response streams (``RequestParser.shrink``), and read what follows as if they had kept it.

The invariant ``shrink`` relies on: a parser that has handed out a request's end and holds no
byte beyond it is in the state a fresh one starts in. These tests fail if a shrunk parser loses
or misreads the next request, or lets go of a request it had begun to read.
"""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from collections.abc import Callable

import pytest
import trio
import trio.testing
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection
from test_front_ends import EchoApp

from mcptrio.transports.http.engine.h11_parser import H11RequestParser
from mcptrio.transports.http.engine.httptools_parser import HttptoolsRequestParser
from mcptrio.transports.http.engine.parser import (
    END_OF_MESSAGE,
    PEER_CLOSED,
    ParserEvent,
    RequestHead,
    RequestParser,
)

PARSERS: dict[str, Callable[[int], RequestParser]] = {
    "h11": H11RequestParser,
    "httptools": HttptoolsRequestParser,
}
STREAM = b"GET /stream HTTP/1.1\r\nhost: a\r\naccept: text/event-stream\r\n\r\n"
NEXT = b"POST /next HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc"


def events(parser: RequestParser) -> list[ParserEvent]:
    taken = []
    while (event := parser.next_event()) is not None:
        taken.append(event)
    return taken


def summary(taken: list[ParserEvent]) -> list[object]:
    return [e.target if isinstance(e, RequestHead) else e for e in taken]


def streaming(name: str) -> RequestParser:
    """A parser that has read the streamed request whole, as a streaming connection's has."""
    parser = PARSERS[name](4096)
    parser.feed(STREAM)
    assert summary(events(parser)) == [b"/stream", END_OF_MESSAGE]
    return parser


@pytest.mark.parametrize("name", PARSERS)
@pytest.mark.parametrize("pieces", [0, 1, 3], ids=["after-the-stream", "whole", "in-pieces"])
def test_a_shrunk_parser_reads_the_next_request_as_before(name: str, pieces: int) -> None:
    """``pieces`` of the next request arrive while the stream is open (0: after it ended)."""
    parser = streaming(name)
    parser.shrink()
    cut = [len(NEXT) * i // pieces for i in range(pieces + 1)] if pieces else []
    for start, end in itertools.pairwise(cut):
        parser.feed(NEXT[start:end])
    parser.next_request()
    if not pieces:
        parser.feed(NEXT)
    assert summary(events(parser)) == [b"/next", b"abc", END_OF_MESSAGE]


@pytest.mark.parametrize("name", PARSERS)
def test_a_parser_holding_part_of_the_next_request_keeps_it(name: str) -> None:
    parser = PARSERS[name](4096)
    parser.feed(STREAM + NEXT[:20])
    assert summary(events(parser)) == [b"/stream", END_OF_MESSAGE]
    parser.shrink()
    parser.feed(NEXT[20:])
    parser.next_request()
    assert summary(events(parser)) == [b"/next", b"abc", END_OF_MESSAGE]


@pytest.mark.parametrize("name", PARSERS)
def test_a_shrunk_parser_sees_its_client_close(name: str) -> None:
    parser = streaming(name)
    parser.shrink()
    parser.feed(b"")
    parser.next_request()
    assert parser.next_event() is PEER_CLOSED


@pytest.mark.parametrize("name", PARSERS)
def test_shrinking_lets_go_of_most_of_what_a_parser_holds(name: str) -> None:
    tracemalloc.start(1)
    try:
        parsers = [streaming(name) for _ in range(100)]
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for parser in parsers:
            parser.shrink()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # A parser's own object and its last request's head stay; what it parses with goes.
    assert (before - after) / len(parsers) >= 256, f"{(before - after) / len(parsers):.0f} B"


async def test_a_request_pipelined_while_a_response_streams_is_answered_after_it(
    front_end: str,
) -> None:
    app = EchoApp()
    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, open_test_connection(url) as conn:
            host = url.split("//")[1].encode()
            await conn.send_raw(b"GET /stream HTTP/1.1\r\nhost: %b\r\n\r\n" % host)
            received = b""
            while b"data: one" not in received:
                received += await conn.socket_stream.receive_some(65536)
            # Read by the server while the stream is open (its parser has let go by then).
            await conn.send_raw(
                b"GET /after HTTP/1.1\r\nhost: %b\r\nconnection: close\r\n\r\n" % host
            )
            await trio.testing.wait_all_tasks_blocked()
            app.go.set()
            received += await conn.receive_raw()
    stream, after = received.split(b"0\r\n\r\n", 1)
    assert b"data: two" in stream
    assert after.startswith(b"HTTP/1.1 200")
    assert b'"path": "/after"' in after
