"""The built-in server's request loop gives other tasks a turn between requests, even when the
client's next request is always already there (it never has to wait for one)."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
import trio
from front_ends_for_tests import open_front_end

from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder

BUILTIN = ["builtin-h11", "builtin-httptools"]
REQUESTS = 20

Trace = list[tuple[str, int] | str]


def request_bytes(number: int) -> bytes:
    return f"GET /{number} HTTP/1.1\r\nhost: x\r\n\r\n".encode()


class NextRequestWaitingApp:
    """Each handler puts the client's next request on the wire before it answers (a plain
    socket send, no yield), so the loop finds every next request head already there."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.client: socket.socket | None = None
        self.answered = trio.Event()

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        number = int(request.path.rsplit("/", 1)[1])
        self.trace.append(("handle", number))
        if number < REQUESTS:
            assert self.client is not None
            self.client.send(request_bytes(number + 1))
        await responder.send_response(200, [(b"content-type", b"text/plain")], b"ok")
        self.trace.append(("sent", number))
        if number == REQUESTS:
            self.answered.set()


@pytest.mark.parametrize("front_end", BUILTIN)
async def test_a_client_whose_next_request_is_always_there_does_not_keep_the_loop(
    front_end: str,
) -> None:
    trace: Trace = []
    app = NextRequestWaitingApp(trace)

    async def tick() -> None:
        while True:
            trace.append("tick")
            await trio.lowlevel.checkpoint()

    with trio.fail_after(10):
        async with open_front_end(front_end, app) as url, trio.open_nursery() as nursery:
            nursery.start_soon(tick)
            address = urlsplit(url)
            assert address.hostname is not None and address.port is not None
            with socket.create_connection((address.hostname, address.port)) as client:
                app.client = client
                client.send(request_bytes(1))
                await app.answered.wait()
            nursery.cancel_scope.cancel()

    handled = [entry for entry in trace if entry != "tick"]
    assert handled == [(step, n) for n in range(1, REQUESTS + 1) for step in ("handle", "sent")]
    # One request a turn: Trio runs each ready task once a turn, in random order, so the other
    # task's step of the turn between two of the loop's lies between a request and the one
    # after the next.
    for number in range(1, REQUESTS - 1):
        span = trace[trace.index(("handle", number)) : trace.index(("handle", number + 2))]
        assert "tick" in span, f"no other task ran from request {number} to {number + 2}"
