"""Every bad input gets its status code, and never disturbs a healthy session next to it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import trio
from http_client_for_tests import TestConnection, open_test_connection
from test_streamable_http import (
    ACCEPT_BOTH,
    JSON_BODY,
    POST_HEADERS,
    call_body,
    get_headers,
    initialize,
    initialize_body,
    make_server,
    serve,
    served_connection,
    session_headers,
    wait_until,
)

from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.security import HttpSecurity, Principal, Refusal
from mcptrio.transports.http.engine.exchange import HttpRequest, header


async def assert_healthy(conn: TestConnection, session_id: str, rid: int) -> None:
    headers = session_headers(session_id, "2025-11-25")
    response = await conn.request(
        "POST", "/mcp", headers=headers, body=call_body(rid, "add", {"a": rid, "b": 1})
    )
    assert response.status == 200
    assert response.json()["result"]["structuredContent"] == {"result": rid + 1}


BadRequest = Callable[[TestConnection, str], Awaitable[Any]]


def post(headers: list[tuple[str, str]], body: bytes) -> BadRequest:
    async def send(conn: TestConnection, session_id: str) -> Any:
        named = [(k, v.replace("{sid}", session_id)) for k, v in headers]
        return await conn.request("POST", "/mcp", headers=named, body=body)

    return send


def get(headers: list[tuple[str, str]]) -> BadRequest:
    async def send(conn: TestConnection, session_id: str) -> Any:
        named = [(k, v.replace("{sid}", session_id)) for k, v in headers]
        return await conn.request("GET", "/mcp", headers=named)

    return send


SID = ("mcp-session-id", "{sid}")
VERSION = ("mcp-protocol-version", "2025-11-25")
GOOD = [ACCEPT_BOTH, JSON_BODY, SID, VERSION]
CALL = call_body(50, "add", {"a": 1, "b": 2})

BAD_INPUTS: dict[str, tuple[BadRequest, int, int | None]] = {
    "malformed json": (post(GOOD, b'{"jsonrpc": "2.0", "id": 1,'), 400, -32700),
    "not a json-rpc message": (post(GOOD, b'{"hello": "world"}'), 400, -32600),
    "a json number": (post(GOOD, b"42"), 400, -32600),
    "null request id": (post(GOOD, b'{"jsonrpc":"2.0","id":null,"method":"ping"}'), 400, -32600),
    "wrong content type": (
        post([ACCEPT_BOTH, ("content-type", "text/plain"), SID, VERSION], CALL),
        415,
        None,
    ),
    "missing content type": (post([ACCEPT_BOTH, SID, VERSION], CALL), 415, None),
    "accept without event-stream": (
        post([("accept", "application/json"), JSON_BODY, SID, VERSION], CALL),
        406,
        None,
    ),
    "no accept": (post([JSON_BODY, SID, VERSION], CALL), 406, None),
    "oversized body": (post(GOOD, b" " * 5000 + CALL), 413, None),
    "missing session id": (post([ACCEPT_BOTH, JSON_BODY, VERSION], CALL), 400, None),
    "unknown session": (
        post([ACCEPT_BOTH, JSON_BODY, ("mcp-session-id", "f" * 32), VERSION], CALL),
        404,
        None,
    ),
    "unsupported protocol version": (
        post([ACCEPT_BOTH, JSON_BODY, SID, ("mcp-protocol-version", "1999-01-01")], CALL),
        400,
        None,
    ),
    "bad origin": (post([*GOOD, ("origin", "http://evil.example.com")], CALL), 403, None),
    "bad host": (post([*GOOD, ("host", "evil.example.com")], CALL), 403, None),
    "get without event-stream accept": (get([("accept", "application/json"), SID]), 406, None),
    "get with unknown last-event-id": (
        get([("accept", "text/event-stream"), SID, ("last-event-id", "77-1")]),
        400,
        None,
    ),
    "get with garbage last-event-id": (
        get([("accept", "text/event-stream"), SID, ("last-event-id", "\x7fnope")]),
        400,
        None,
    ),
    "get with bad origin": (
        get([("accept", "text/event-stream"), SID, ("origin", "http://evil.example.com")]),
        403,
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
async def test_bad_input_gets_its_status_and_a_neighbour_session_keeps_working(
    front_end: str, case: str
) -> None:
    bad, status, code = BAD_INPUTS[case]
    security = HttpSecurity(max_body_size=4096)
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with (
            served_connection(front_end, app) as (url, healthy),
            open_test_connection(url) as attacker,
        ):
            good_session = await initialize(healthy)
            victim_session = await initialize(attacker)
            await assert_healthy(healthy, good_session, 1)
            response = await bad(attacker, victim_session)
            assert response.status == status, response
            if code is not None:
                body = response.json()
                assert body["error"]["code"] == code
                assert "id" not in body
            await assert_healthy(healthy, good_session, 2)
            async with open_test_connection(url) as again:
                await assert_healthy(again, victim_session, 3)


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443", None],
)
async def test_loopback_origins_and_no_origin_are_allowed(
    front_end: str, origin: str | None
) -> None:
    headers = list(POST_HEADERS)
    if origin is not None:
        headers.append(("origin", origin))
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            response = await conn.request(
                "POST", "/mcp", headers=headers, body=initialize_body("2025-11-25")
            )
            assert response.status == 200


async def test_dns_rebinding_is_refused_on_every_endpoint(front_end: str) -> None:
    evil = [("host", "evil.example.com"), ("origin", "http://evil.example.com")]
    with trio.fail_after(10):
        async with served_connection(front_end) as (_, conn):
            for method, path in (("POST", "/mcp"), ("GET", "/sse"), ("POST", "/messages")):
                for bad in evil:
                    response = await conn.request(
                        method, path, headers=[*POST_HEADERS, bad], body=b"{}"
                    )
                    assert response.status == 403, (method, path, bad)


async def test_configured_hosts_and_origins_are_let_in(front_end: str) -> None:
    security = HttpSecurity(
        allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"]
    )
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with served_connection(front_end, app) as (_, conn):
            headers = [*POST_HEADERS, ("host", "mcp.example.com")]
            for origin, status in (("https://app.example.com", 200), ("http://localhost", 403)):
                with_origin = [*headers, ("origin", origin)]
                body = initialize_body("2025-11-25")
                response = await conn.request("POST", "/mcp", headers=with_origin, body=body)
                assert response.status == status, origin


class RefuseEverything(HttpSecurity):
    async def admit(self, request: HttpRequest) -> Refusal | Principal | None:
        return Refusal(403, "closed for maintenance")


async def test_a_security_subclass_admit_is_asked_without_an_authenticator(
    front_end: str,
) -> None:
    app = McpHttpApp(make_server(), security=RefuseEverything())
    with trio.fail_after(10):
        async with served_connection(front_end, app) as (_, conn):
            response = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body("2025-11-25")
            )
    assert response.status == 403
    assert b"closed for maintenance" in response.body


async def test_past_the_session_cap_initialize_gets_503_with_retry_after(front_end: str) -> None:
    security = HttpSecurity(max_sessions=2, retry_after=7)
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with served_connection(front_end, app) as (_, conn):
            first = await initialize(conn)
            await initialize(conn)
            refused = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body("2025-11-25")
            )
            assert refused.status == 503
            assert refused.header("retry-after") == b"7"
            await assert_healthy(conn, first, 1)
            deleted = await conn.request(
                "DELETE", "/mcp", headers=session_headers(first, "2025-11-25")
            )
            assert deleted.status == 204
            await initialize(conn)


async def test_idle_sessions_expire_and_then_get_404(front_end: str) -> None:
    security = HttpSecurity(session_idle_timeout=0.3)
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with served_connection(front_end, app) as (url, conn):
            idle = await initialize(conn)
            busy = await initialize(conn)
            # An open GET stream keeps a session alive however long it stays quiet.
            async with (
                open_test_connection(url) as listener,
                TestConnection.stream(
                    listener, "GET", "/mcp", headers=get_headers(busy, "2025-11-25")
                ) as events,
            ):
                assert events.status == 200
                await wait_until(lambda: app.session_count == 1)
            expired = session_headers(idle, "2025-11-25")
            response = await conn.request(
                "POST", "/mcp", headers=expired, body=call_body(1, "add", {"a": 1, "b": 1})
            )
            assert response.status == 404
            await assert_healthy(conn, busy, 2)


@dataclass(frozen=True)
class User:
    subject: str


class TokenAuthenticator:
    """Bearer tokens ``token-<name>`` for user ``<name>``."""

    async def authenticate(self, request: HttpRequest) -> User | None:
        value = header(request.headers, b"authorization")
        if value is None or not value.startswith(b"Bearer token-"):
            return None
        return User(value.removeprefix(b"Bearer token-").decode())

    def challenge(self, request: HttpRequest) -> bytes:
        return b'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'


async def test_requests_without_credentials_get_401_and_sessions_belong_to_their_principal(
    front_end: str,
) -> None:
    security = HttpSecurity(authenticator=TokenAuthenticator())
    alice = ("authorization", "Bearer token-alice")
    mallory = ("authorization", "Bearer token-mallory")
    app = McpHttpApp(make_server(), security=security)
    with trio.fail_after(10):
        async with served_connection(front_end, app) as (_, conn):
            anonymous = await conn.request(
                "POST", "/mcp", headers=POST_HEADERS, body=initialize_body("2025-11-25")
            )
            assert anonymous.status == 401
            assert anonymous.header(
                "www-authenticate",
            ).startswith(b"Bearer ")
            created = await conn.request(
                "POST", "/mcp", headers=[*POST_HEADERS, alice], body=initialize_body("2025-11-25")
            )
            assert created.status == 200
            session_id = created.header("mcp-session-id").decode()
            call = call_body(2, "add", {"a": 2, "b": 2})
            headers = session_headers(session_id, "2025-11-25")
            stolen = await conn.request("POST", "/mcp", headers=[*headers, mallory], body=call)
            assert stolen.status == 404
            deleted = await conn.request("DELETE", "/mcp", headers=[*headers, mallory])
            assert deleted.status == 404
            own = await conn.request("POST", "/mcp", headers=[*headers, alice], body=call)
            assert own.status == 200
            assert json.loads(own.body)["result"]["structuredContent"] == {"result": 4}


@pytest.mark.parametrize("front_end", ["builtin-h11", "hypercorn"])
async def test_websocket_upgrades_pass_the_same_checks(front_end: str) -> None:
    trio_websocket = pytest.importorskip("trio_websocket")
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server())) as url:
            ws_url = url.replace("http://", "ws://") + "/mcp"
            evil = [(b"origin", b"http://evil.example.com")]
            with pytest.raises(trio_websocket.ConnectionRejected) as refused:
                async with trio_websocket.open_websocket_url(
                    ws_url, subprotocols=["mcp"], extra_headers=evil
                ):
                    pass
            assert refused.value.status_code == 403
            with pytest.raises(trio_websocket.ConnectionRejected) as elsewhere:
                async with trio_websocket.open_websocket_url(
                    url.replace("http://", "ws://") + "/elsewhere", subprotocols=["mcp"]
                ):
                    pass
            assert elsewhere.value.status_code == 404
            async with trio_websocket.open_websocket_url(ws_url, subprotocols=["mcp"]) as ws:
                await ws.send_message(initialize_body("2025-11-25").decode())
                answer = json.loads(await ws.get_message())
                assert answer["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize("front_end", ["builtin-h11", "hypercorn"])
async def test_websocket_upgrade_without_credentials_gets_401_with_the_challenge(
    front_end: str,
) -> None:
    trio_websocket = pytest.importorskip("trio_websocket")
    security = HttpSecurity(authenticator=TokenAuthenticator())
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server(), security=security)) as url:
            ws_url = url.replace("http://", "ws://") + "/mcp"
            with pytest.raises(trio_websocket.ConnectionRejected) as refused:
                async with trio_websocket.open_websocket_url(ws_url, subprotocols=["mcp"]):
                    pass
            assert refused.value.status_code == 401
            challenge = dict(refused.value.headers or [])[b"www-authenticate"]
            assert challenge.startswith(b"Bearer ")
            token = [(b"authorization", b"Bearer token-alice")]
            async with trio_websocket.open_websocket_url(
                ws_url, subprotocols=["mcp"], extra_headers=token
            ) as ws:
                await ws.send_message(initialize_body("2025-11-25").decode())
                answer = json.loads(await ws.get_message())
                assert answer["result"]["protocolVersion"] == "2025-11-25"
