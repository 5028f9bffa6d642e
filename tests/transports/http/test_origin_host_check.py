"""One Host/Origin check for every MCP endpoint: its rules, and every endpoint that asks it.

The endpoints are Streamable HTTP and WebSocket upgrades on each HTTP front end (built-in with
h11, built-in with httptools, Hypercorn), and the standalone WebSocket server. Each is sent raw
requests, so that ``Host`` and ``Origin`` are exactly what the test says, and answers 403 to a
foreign name. Loopback only, port 0, every test that does I/O under ``trio.fail_after``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Literal

import pytest
import trio
from test_streamable_http import initialize_body

import mcptrio
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity, OriginHostCheck, Refusal
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.websocket_server import serve_websocket

IO_LIMIT = 10

# ------------------------------------------------------------------ the rules


def refusal(check: OriginHostCheck, host: bytes | None, origin: bytes | None) -> Refusal | None:
    headers = [(b"host", host)] if host is not None else []
    if origin is not None:
        headers.append((b"origin", origin))
    return check.refusal(headers)


@pytest.mark.parametrize(
    "origin",
    [
        None,
        b"http://localhost",
        b"http://localhost:3000",
        b"https://127.0.0.1",
        b"http://[::1]:80",
        b"HTTP://LocalHost:8080",
        b"http://localhost:3000/",
    ],
)
def test_loopback_origins_and_no_origin_are_allowed_by_default(origin: bytes | None) -> None:
    assert refusal(OriginHostCheck(), b"127.0.0.1:8000", origin) is None


@pytest.mark.parametrize(
    "origin",
    [
        b"http://evil.example",
        b"http://localhost.evil.example",
        b"null",
        b"file://localhost",
        b"http://localhost/path",
        b"http://evil@localhost:80",
        b"http://localhost:99999",
        b"http://localhost:1000000065535",
        b"http://[::1",
        b"http://localhost:abc",
        "http://l\u00f6calhost".encode(),
        b"",
    ],
)
def test_an_origin_that_is_foreign_or_not_an_origin_is_refused_with_403(origin: bytes) -> None:
    assert refusal(OriginHostCheck(), b"localhost", origin) == Refusal(403, "Origin not allowed")


@pytest.mark.parametrize(
    "host",
    [
        b"evil.example.com",
        b"localhost.evil.example.com:80",
        b"localhost:99999",
        b"localhost:80/x",
        b"::1",
        b"user@localhost",
        b"",
    ],
)
def test_a_foreign_or_malformed_host_is_refused_before_the_origin(host: bytes) -> None:
    refused = refusal(OriginHostCheck(), host, b"http://evil.example")
    assert refused == Refusal(403, "Host not allowed")


@pytest.mark.parametrize("host", [None, b"localhost", b"127.0.0.1:1", b"[::1]", b"[::1]:65535"])
def test_loopback_hosts_and_no_host_are_allowed_by_default(host: bytes | None) -> None:
    assert refusal(OriginHostCheck(), host, None) is None


def test_configured_names_replace_the_defaults() -> None:
    check = OriginHostCheck(
        allowed_origins=["https://App.example/", "http://dev.example:*"],
        allowed_hosts=["mcp.example.com", "alt.example.com:*"],
    )
    assert refusal(check, b"mcp.example.com", b"https://app.example") is None
    assert refusal(check, b"ALT.example.com:8443", b"http://dev.example:5173") is None
    assert refusal(check, b"mcp.example.com:8443", None) == Refusal(403, "Host not allowed")
    assert refusal(check, b"localhost", None) == Refusal(403, "Host not allowed")
    for origin in (b"https://app.example:443", b"http://localhost", b"https://dev.example"):
        assert refusal(check, b"mcp.example.com", origin) == Refusal(403, "Origin not allowed")


def test_a_star_turns_a_check_off() -> None:
    check = OriginHostCheck(allowed_origins=["*"], allowed_hosts=["*"])
    assert refusal(check, b"evil.example.com", b"null") is None


def test_the_bound_address_is_allowed_unless_it_is_a_wildcard() -> None:
    check = OriginHostCheck()
    check.allow_bound_address("0.0.0.0", 8000)
    check.allow_bound_address("::", 8000)
    assert refusal(check, b"192.0.2.7:8000", None) == Refusal(403, "Host not allowed")
    check.allow_bound_address("192.0.2.7", 8000)
    check.allow_bound_address("2001:db8::1", 8000)
    assert refusal(check, b"192.0.2.7:8000", b"http://192.0.2.7:8000") is None
    assert refusal(check, b"[2001:db8::1]:8000", b"https://[2001:db8::1]:8000") is None
    assert refusal(check, b"192.0.2.7:8001", None) == Refusal(403, "Host not allowed")


def test_a_value_seen_before_gets_the_same_verdict_however_many_came_between() -> None:
    # The check remembers its verdicts on recent values; a flood of new ones must not change
    # what it answers for an old one.
    check = OriginHostCheck()
    for round_ in range(3):
        assert refusal(check, b"localhost:8000", b"http://localhost:3000") is None
        assert refusal(check, b"evil.example", None) == Refusal(403, "Host not allowed")
        origin = b"http://evil.example"
        assert refusal(check, b"localhost", origin) == Refusal(403, "Origin not allowed")
        for port in range(200):
            assert refusal(check, b"localhost:%d" % (round_ * 1000 + port), None) is None
            assert refusal(check, b"h%d.example" % port, None) is not None


async def test_credentials_are_asked_for_only_after_host_and_origin_pass() -> None:
    asked: list[str] = []

    class Nobody:
        async def authenticate(self, request: object) -> None:
            asked.append("authenticate")
            await trio.lowlevel.checkpoint()

        def challenge(self, request: object) -> bytes:
            return b'Bearer realm="mcp"'

    class Request:
        method = "POST"
        path = "/mcp"
        query_string = b""
        client = None
        scheme = "http"

        def __init__(self, origin: bytes) -> None:
            self.headers = [(b"host", b"localhost"), (b"origin", origin)]

        async def read_body(self, limit: int) -> bytes:
            raise AssertionError("the check reads no body")

    security = HttpSecurity(authenticator=Nobody())
    assert await security.admit(Request(b"http://evil.example")) == Refusal(
        403, "Origin not allowed"
    )
    assert asked == []
    refused = await security.admit(Request(b"http://localhost"))
    assert refused == Refusal(401, "Unauthorized", ((b"www-authenticate", b'Bearer realm="mcp"'),))
    assert asked == ["authenticate"]


class _RepeatedHeaderRequest:
    """A POST to the MCP endpoint with ``headers`` as given, repeats and all (a front end
    that lets a repeated Host or Origin through hands the app such a list)."""

    method = "POST"
    path = "/mcp"
    query_string = b""
    client = ("127.0.0.1", 5000)
    scheme = "http"

    def __init__(self, headers: list[tuple[bytes, bytes]]) -> None:
        self.headers = headers

    async def read_body(self, limit: int) -> bytes:
        return INITIALIZE


class _StatusOnly:
    def __init__(self) -> None:
        self.status: int | None = None

    async def send_response(self, status: int, headers: object, body: bytes = b"") -> None:
        self.status = status

    def on_client_gone(self, callback: object) -> None:
        pass

    def watch_for_departure(self) -> None:
        pass


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [
        (b"host", b"evil.example", b"localhost"),
        (b"origin", b"http://evil.example", b"http://localhost"),
    ],
)
async def test_a_post_is_judged_by_the_first_host_or_origin_it_repeats(
    name: bytes, first: bytes, second: bytes
) -> None:
    # The app reads a POST's headers into a dict of first values once (for Host, Origin and
    # the endpoint's lookups): the first value must stay the one judged, as header() finds it.
    app = McpHttpApp(make_server())
    common = [(b"accept", b"application/json, text/event-stream")]
    common.append((b"content-type", b"application/json"))
    if name == b"origin":
        common.append((b"host", b"localhost"))
    responder = _StatusOnly()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            await nursery.start(app.run)
            await app.handle_http(
                _RepeatedHeaderRequest([*common, (name, first), (name, second)]), responder
            )
            assert responder.status == 403
            allowed = _StatusOnly()
            await app.handle_http(
                _RepeatedHeaderRequest([*common, (name, second), (name, first)]), allowed
            )
            assert allowed.status == 200
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ every endpoint asks it

Endpoint = Literal["streamable-http", "websocket"]
FrontEnd = Literal["builtin-h11", "builtin-httptools", "hypercorn", "standalone-websocket"]

INITIALIZE = initialize_body("2025-11-25")


def make_server() -> mcptrio.Server:
    server = mcptrio.Server("origin-host")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@asynccontextmanager
async def serving(front_end: FrontEnd) -> AsyncIterator[tuple[str, int]]:
    """Serve a server on ``front_end`` on 127.0.0.1, port 0; yield the address."""
    async with trio.open_nursery() as nursery:
        if front_end == "standalone-websocket":
            url = await nursery.start(partial(serve_websocket, make_server()))
        elif front_end == "hypercorn":
            pytest.importorskip("hypercorn")
            url = await nursery.start(partial(serve_http, make_server(), front_end="hypercorn"))
        else:
            parser: Literal["h11", "httptools"] = (
                "h11" if front_end == "builtin-h11" else "httptools"
            )
            if parser == "httptools":
                pytest.importorskip("httptools")
            url = await nursery.start(partial(serve_http, make_server(), parser=parser))
        host, port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
        yield host, int(port)
        nursery.cancel_scope.cancel()


async def status_of(
    address: tuple[str, int], endpoint: Endpoint, host: str, origin: str | None
) -> int:
    """The status a raw request to ``/mcp`` with this ``Host`` and ``Origin`` is answered with."""
    lines = [f"Host: {host}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    if endpoint == "websocket":
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Protocol: mcp",
        ]
        head, body = "GET /mcp HTTP/1.1", b""
    else:
        lines += [
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(INITIALIZE)}",
        ]
        head, body = "POST /mcp HTTP/1.1", INITIALIZE
    request = "\r\n".join([head, *lines, "", ""]).encode() + body
    stream = await trio.open_tcp_stream(*address)
    async with stream:
        await stream.send_all(request)
        received = b""
        while b"\r\n" not in received:
            data = await stream.receive_some(4096)
            assert data, f"the server closed without answering; got {received!r}"
            received += data
    return int(received.split(b" ", 2)[1])


HTTP_FRONT_ENDS: list[FrontEnd] = ["builtin-h11", "builtin-httptools", "hypercorn"]
CASES: list[tuple[FrontEnd, Endpoint]] = [
    *((front_end, "streamable-http") for front_end in HTTP_FRONT_ENDS),
    *((front_end, "websocket") for front_end in HTTP_FRONT_ENDS),
    ("standalone-websocket", "websocket"),
]


@pytest.mark.parametrize(("front_end", "endpoint"), CASES)
async def test_every_endpoint_refuses_a_foreign_host_or_origin_with_403(
    front_end: FrontEnd, endpoint: Endpoint
) -> None:
    with trio.fail_after(IO_LIMIT):
        async with serving(front_end) as address:
            local = f"127.0.0.1:{address[1]}"
            accepted = 101 if endpoint == "websocket" else 200
            assert await status_of(address, endpoint, local, None) == accepted
            assert await status_of(address, endpoint, local, "http://localhost:3000") == accepted
            for origin in ("http://evil.example", "null", "http://localhost/x"):
                assert await status_of(address, endpoint, local, origin) == 403, origin
            assert await status_of(address, endpoint, "evil.example:80", None) == 403
            assert await status_of(address, endpoint, "localhost:99999", None) == 403
