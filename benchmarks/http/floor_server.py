"""The HTTP floor: a bare Trio + httptools server answering every POST with a fixed answer.

``python -m benchmarks.http.server floor json|sse PORT`` serves it at
``http://127.0.0.1:PORT/mcp`` (any path). It is what an MCP server over HTTP cannot do less
than: a Trio TCP listener, httptools parsing each request, the fixed answer of the request's
workload (``benchmarks/servers/floor_answers.py``, with the request's id) written back on the
same keep-alive connection. No JSON parsing, no MCP work, no state.

To be driven exactly like the library servers (the runner opens a session from Python, wrk's
``calls.lua`` calls on it, ``sessions.lua`` opens and closes sessions) it answers the session
requests the least way that passes their checks: ``initialize`` with a fixed result and a fixed
``Mcp-Session-Id``, a notification (no id) with 202 and no body, ``DELETE`` with 200, any other
method with 405. In ``sse`` mode every answer is one SSE event, ``text/event-stream``.
"""

from __future__ import annotations

from contextlib import suppress
from functools import partial

import httptools
import trio

from benchmarks.servers.floor_answers import INITIALIZE, SESSION_ID, answer_halves, request_id

_RECEIVE_SIZE = 1 << 16
_EMPTY_202 = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
_EMPTY_200 = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
_NOT_ALLOWED = b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n"
_SESSION_HEADER = f"mcp-session-id: {SESSION_ID}\r\n".encode()
_INITIALIZE_NEEDLE = f'"{INITIALIZE}"'.encode()


class _Requests:
    """httptools' callbacks: each complete request's method and body, in order."""

    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.complete: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []

    def on_message_begin(self) -> None:
        self._body = []

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.complete.append((self.parser.get_method(), b"".join(self._body)))


def _answer(method: bytes, body: bytes, sse: bool) -> bytes:
    """The whole HTTP response to one request."""
    if method == b"DELETE":
        return _EMPTY_200
    if method != b"POST":
        return _NOT_ALLOWED
    identifier = request_id(body)
    if identifier is None:
        return _EMPTY_202
    before, after = answer_halves(body)
    payload = before + identifier + after
    if sse:
        payload = b"event: message\ndata: " + payload + b"\n\n"
        content_type = b"text/event-stream"
    else:
        content_type = b"application/json"
    extra = _SESSION_HEADER if _INITIALIZE_NEEDLE in body else b""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n%s\r\n" % (
        content_type,
        len(payload),
        extra,
    )
    return head + payload


async def handle_connection(stream: trio.SocketStream, *, sse: bool) -> None:
    """Answer the requests of one keep-alive connection until the client closes it (or resets
    it: wrk stopped mid-request is the end of a run, not a failure)."""
    with suppress(trio.BrokenResourceError):
        async with stream:
            await _answer_requests(stream, sse)


async def _answer_requests(stream: trio.SocketStream, sse: bool) -> None:
    requests = _Requests()
    while data := await stream.receive_some(_RECEIVE_SIZE):
        try:
            requests.parser.feed_data(data)
        except httptools.HttpParserError:
            return
        if requests.complete:
            # Every request that arrived whole answered in one write (wrk pipelines none, but
            # a client may).
            answers = b"".join(_answer(m, b, sse) for m, b in requests.complete)
            requests.complete.clear()
            await stream.send_all(answers)


async def serve(port: int, *, sse: bool) -> None:
    await trio.serve_tcp(partial(handle_connection, sse=sse), port, host="127.0.0.1")


def run(json_response: bool, port: int) -> None:
    trio.run(partial(serve, port, sse=not json_response))
