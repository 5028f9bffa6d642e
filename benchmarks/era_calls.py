"""Python calls per ``tools/call`` in each era, in process: ``python -m benchmarks.era_calls``.

The benchmark server's Streamable HTTP app (``McpHttpApp``, JSON answers) is handed requests
without sockets or a parser, one after the other: ``add(1, 2)`` on an open handshake-era session
(revision 2025-11-25), and stateless-era POSTs (revision 2026-07-28, the ``_meta`` and routing
headers of ``benchmarks/http/client.py``, the bytes the HTTP benchmark sends). A
``sys.setprofile`` hook counts every Python and C function called per request; ``--by-function``
lists the functions whose count differs between the eras (what one era does that the other does
not). Counts do not depend on the machine's load; the HTTP engine's own calls are not in them
(``benchmarks/instructions.py``'s ``http-call`` and ``http-call-stateless`` cells measure the
whole server process).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from types import FrameType
from typing import Any

import trio

from benchmarks.http.client import PROTOCOL_VERSION, stateless_headers, stateless_params
from benchmarks.servers.mcptrio_server import build_server
from mcptrio.transports.http.endpoints.app import McpHttpApp

_HEAD = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]
_CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


class _Post:
    method = "POST"
    path = "/mcp"
    query_string = b""
    client = ("127.0.0.1", 5000)
    scheme = "http"

    def __init__(self, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.headers = headers
        self.body = body

    async def read_body(self, limit: int) -> bytes:
        return self.body


class _Responder:
    def __init__(self) -> None:
        self.status = 0
        self.headers: Any = ()
        self.body = b""

    async def send_response(self, status: int, headers: Any, body: bytes = b"") -> None:
        self.status, self.headers, self.body = status, headers, body

    async def start_stream(self, status: int, headers: Any) -> None:
        raise AssertionError("a call of the benchmark is answered as JSON")

    def on_client_gone(self, callback: Any) -> None:
        pass

    def allow_eviction(self) -> None:
        pass

    def watch_for_departure(self) -> None:
        pass


def _body(rid: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


async def _open_session(app: McpHttpApp) -> list[tuple[bytes, bytes]]:
    """Open a handshake-era session: the head lines of its calls."""
    init = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": _CLIENT}
    answer = _Responder()
    await app.handle_http(_Post(_HEAD, _body(0, "initialize", init)), answer)  # type: ignore[arg-type]
    session = dict(answer.headers)[b"mcp-session-id"]
    head = [
        *_HEAD,
        (b"mcp-session-id", session),
        (b"mcp-protocol-version", PROTOCOL_VERSION.encode()),
    ]
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    await app.handle_http(_Post(head, initialized), _Responder())  # type: ignore[arg-type]
    return head


_CLIENT = {"name": "benchmarks.era_calls", "version": "1"}


def _posts(era: str, head: list[tuple[bytes, bytes]], count: int, first: int) -> list[_Post]:
    if era == "stateless":
        routing = [(k.lower().encode(), v.encode()) for k, v in stateless_headers("call").items()]
        head, params = [*_HEAD, *routing], stateless_params("call")
    else:
        params = _CALL
    return [_Post(head, _body(first + i, "tools/call", params)) for i in range(count)]


class _CallCounter:
    def __init__(self) -> None:
        self.by_function: Counter[str] = Counter()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            self.by_function[f"{code.co_filename.rpartition('/mcptrio/')[2]}:{code.co_name}"] += 1
        elif event == "c_call":
            self.by_function["C " + getattr(arg, "__qualname__", repr(arg))] += 1


async def _count(app: McpHttpApp, posts: list[_Post]) -> Counter[str]:
    answer = _Responder()
    counter = _CallCounter()
    sys.setprofile(counter)
    try:
        for post in posts:
            await app.handle_http(post, answer)  # type: ignore[arg-type]
    finally:
        sys.setprofile(None)
    if answer.status != 200 or b'"text":"3"' not in answer.body:
        raise SystemExit(f"unexpected answer: {answer.status} {answer.body[:200]!r}")
    return counter.by_function


async def main(calls: int, by_function: bool) -> None:
    app = McpHttpApp(build_server())
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        head = await _open_session(app)
        counts: dict[str, Counter[str]] = {}
        for index, era in enumerate(("handshake", "stateless")):
            await _count(app, _posts(era, head, 200, 1_000_000 * (index + 1)))  # warm up
            counts[era] = await _count(app, _posts(era, head, calls, 1))
            print(f"{era}: {sum(counts[era].values()) / calls:.1f} calls per request")
        if by_function:
            handshake, stateless = counts["handshake"], counts["stateless"]
            names = sorted(
                set(handshake) | set(stateless), key=lambda n: handshake[n] - stateless[n]
            )
            for name in names:
                difference = (stateless[name] - handshake[name]) / calls
                if abs(difference) >= 0.5:
                    print(f"  {difference:+5.1f}  {name}")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.era_calls", description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--by-function", action="store_true")
    args = parser.parse_args()
    trio.run(main, args.calls, args.by_function)
