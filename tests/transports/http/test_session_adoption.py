"""A handshake-era session outlives its worker: when the worker that owns it stops, the next
request for it, on any other worker, adopts it there, with the revision, client, log level and
subscriptions it had; only for its principal, never for an id that was never issued."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from http_client_for_tests import open_test_connection
from relay_workers import Worker, open_workers
from test_http_security import TokenAuthenticator

import mcptrio
from mcptrio.server.context import Context
from mcptrio.transports.http.endpoints.security import HttpSecurity

Headers = list[tuple[str | bytes, str | bytes]]
URI = "res://counter"


def adoptable_server() -> mcptrio.Server:
    server = mcptrio.Server("adoption-test")

    @server.resource(URI)
    def counter() -> str:
        return "1"

    @server.tool()
    def whoami(ctx: Context) -> str:
        info = ctx.client_info
        capabilities = ctx.client_capabilities
        roots = capabilities is not None and capabilities.roots is not None
        return f"{ctx.revision} {info.name if info else None} roots={roots}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("an info line")
        await ctx.warning("a warning line")
        return "said"

    return server


def _headers(session_id: bytes | None = None, user: str | None = None) -> Headers:
    headers: Headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ]
    if session_id is not None:
        headers += [("mcp-session-id", session_id), ("mcp-protocol-version", "2025-06-18")]
    if user is not None:
        headers.append(("authorization", f"Bearer token-{user}"))
    return headers


def _message(id_: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def _messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a JSON or SSE body."""
    if body.startswith(b"{"):
        return [json.loads(body)]
    return [
        json.loads(line[5:])
        for line in body.split(b"\n")
        if line.startswith(b"data:") and line[5:].strip()
    ]


async def _post(worker: Worker, body: bytes, headers: Headers) -> tuple[int, list[dict[str, Any]]]:
    async with open_test_connection(f"http://127.0.0.1:{worker.port}") as conn:
        response = await conn.request("POST", "/mcp", headers=headers, body=body)
    return response.status, _messages(response.body) if response.body else []


async def _open_session(worker: Worker, user: str | None = None) -> bytes:
    """A 2025-06-18 session of a client with roots, at log level warning, subscribed to URI."""
    initialize = _message(
        1,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "adoptee", "version": "1"},
        },
    )
    async with open_test_connection(f"http://127.0.0.1:{worker.port}") as conn:
        response = await conn.request("POST", "/mcp", headers=_headers(user=user), body=initialize)
        assert response.status == 200
        session_id = response.header("mcp-session-id")
    assert session_id is not None
    headers = _headers(session_id, user)
    assert (await _post(worker, _message(None, "notifications/initialized"), headers))[0] == 202
    status, _ = await _post(worker, _message(2, "logging/setLevel", {"level": "warning"}), headers)
    assert status == 200
    status, _ = await _post(worker, _message(3, "resources/subscribe", {"uri": URI}), headers)
    assert status == 200
    return session_id


async def _stop(worker: Worker, *others: Worker) -> None:
    """Stop ``worker``; return once ``others`` count it gone (its liveness key expired)."""
    assert worker.app.relay is not None
    instance = worker.app.relay.instance
    worker.stop()
    for other in others:
        assert other.app.relay is not None
        while await other.app.relay.directory.is_alive(instance):  # noqa: ASYNC110
            await trio.sleep(0.1)


async def _saved(worker: Worker, session_id: bytes) -> None:
    """Until ``worker`` has written the session's record with its subscription."""
    keeping = worker.app.keeping
    assert keeping is not None
    while True:
        record = await keeping.records.load(session_id.decode())
        if record is not None and URI.encode() in record.state:
            return
        await trio.sleep(0.01)


async def test_a_stopped_workers_session_is_adopted_with_its_revision_log_level_and_subscriptions(
    redis_url: str,
) -> None:
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first)
            await _saved(first, session_id)
            await _stop(first, second)
            headers = _headers(session_id)
            call = _message(4, "tools/call", {"name": "whoami", "arguments": {}})
            status, messages = await _post(second, call, headers)
            assert status == 200, messages
            [answer] = messages
            assert answer["result"]["content"][0]["text"] == "2025-06-18 adoptee roots=True"
            assert second.app.keeping is not None and second.app.keeping.adopted == 1
            # The log level stays warning: the info line is not sent.
            call = _message(5, "tools/call", {"name": "chatty", "arguments": {}})
            status, messages = await _post(second, call, headers)
            logged = [m["params"]["data"] for m in messages if m.get("method")]
            assert logged == ["a warning line"]
            assert messages[-1]["result"]["content"][0]["text"] == "said"
            # The subscription feeds the session's GET stream on its new worker.
            async with (
                open_test_connection(f"http://127.0.0.1:{second.port}") as conn,
                conn.stream(
                    "GET", "/mcp", headers=[*headers, ("accept", "text/event-stream")]
                ) as stream,
            ):
                assert stream.status == 200
                received = b""
                while b"notifications/resources/updated" not in received:
                    second.server.notify_resource_updated(URI)
                    with trio.move_on_after(0.2):
                        chunk = await stream.next_chunk()
                        assert chunk is not None
                        received += chunk
            assert URI.encode() in received
            # Served here from now on: no second adoption, nothing forwarded.
            assert (await _post(second, _message(6, "ping"), headers))[0] == 200
            assert second.app.keeping.adopted == 1
            assert workers.forwarded() == 0


async def test_of_two_workers_asked_at_once_one_adopts_and_the_other_forwards_to_it(
    redis_url: str,
) -> None:
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url, count=3) as workers:
            first, second, third = workers.workers
            session_id = await _open_session(first)
            await _saved(first, session_id)
            await _stop(first, second, third)
            statuses: list[int] = []

            async def ping(worker: Worker, n: int) -> None:
                status, _ = await _post(worker, _message(10 + n, "ping"), _headers(session_id))
                statuses.append(status)

            async with trio.open_nursery() as nursery:
                for n in range(10):
                    nursery.start_soon(ping, (second, third)[n % 2], n)
    assert statuses == [200] * 10
    adopted = [w.app.keeping.adopted for w in (second, third) if w.app.keeping is not None]
    assert sorted(adopted) == [0, 1]


async def test_a_session_is_adopted_only_for_its_principal_and_an_unknown_id_stays_404(
    redis_url: str,
) -> None:
    security = HttpSecurity(authenticator=TokenAuthenticator())
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url, security=security) as workers:
            first, second = workers.workers
            session_id = await _open_session(first, user="alice")
            await _saved(first, session_id)
            await _stop(first, second)
            ping = _message(7, "ping")
            assert (await _post(second, ping, _headers(session_id, "mallory")))[0] == 404
            assert (await _post(second, ping, _headers(session_id)))[0] == 401
            never = session_id[:-4] + b"beef" if not session_id.endswith(b"beef") else b"x.y"
            assert (await _post(second, ping, _headers(never, "alice")))[0] == 404
            keeping = second.app.keeping
            assert keeping is not None and keeping.adopted == 0
            assert (await _post(second, ping, _headers(session_id, "alice")))[0] == 200
            assert keeping.adopted == 1
            # Adopted, it is still alice's only.
            assert (await _post(second, ping, _headers(session_id, "mallory")))[0] == 404


async def test_a_deleted_session_is_not_adopted(redis_url: str) -> None:
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first)
            await _saved(first, session_id)
            async with open_test_connection(f"http://127.0.0.1:{first.port}") as conn:
                response = await conn.request("DELETE", "/mcp", headers=_headers(session_id))
            assert response.status == 204
            keeping = first.app.keeping
            assert keeping is not None
            with trio.fail_after(5):
                while await keeping.records.load(session_id.decode()) is not None:  # noqa: ASYNC110
                    await trio.sleep(0.01)
            await _stop(first, second)
            assert (await _post(second, _message(8, "ping"), _headers(session_id)))[0] == 404


async def test_with_strict_sessions_a_stopped_workers_session_is_404_and_has_no_record(
    redis_url: str,
) -> None:
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url, adopt_sessions=False) as workers:
            first, second = workers.workers
            initialize = _message(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            )
            async with open_test_connection(f"http://127.0.0.1:{first.port}") as conn:
                response = await conn.request("POST", "/mcp", headers=_headers(), body=initialize)
            assert response.status == 200
            session_id = response.header("mcp-session-id")
            assert session_id is not None
            keeping = first.app.keeping
            assert keeping is not None and not keeping.adopt
            await trio.sleep(0.2)
            assert await keeping.records.load(session_id.decode()) is None
            await _stop(first, second)
            assert (await _post(second, _message(9, "ping"), _headers(session_id)))[0] == 404


async def test_two_requests_adopting_one_session_on_one_worker_adopt_it_once(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both requests find no adoption under way; the second reads the session's record once the
    # first has claimed it (the record names this worker now) and is adopting it: it must wait
    # for that adoption instead of starting its own.
    with trio.fail_after(30):
        async with open_workers(adoptable_server, redis_url) as workers:
            first, second = workers.workers
            session_id = await _open_session(first)
            await _saved(first, session_id)
            await _stop(first, second)
            keeping = second.app.keeping
            assert keeping is not None
            second_reading, adopting, read_late = trio.Event(), trio.Event(), trio.Event()
            load, claim, adopt = keeping.records.load, keeping.records.claim, keeping.registry.adopt
            loads = 0

            async def load_late(*args: Any) -> Any:
                nonlocal loads
                loads += 1
                if loads != 2:
                    return await load(*args)
                second_reading.set()
                await adopting.wait()
                record = await load(*args)
                read_late.set()
                return record

            async def claim_late(*args: Any) -> Any:
                await second_reading.wait()
                return await claim(*args)

            async def adopt_slowly(*args: Any, **kwargs: Any) -> Any:
                adopting.set()
                await read_late.wait()
                await trio.sleep(0.2)
                return await adopt(*args, **kwargs)

            monkeypatch.setattr(keeping.records, "load", load_late)
            monkeypatch.setattr(keeping.records, "claim", claim_late)
            monkeypatch.setattr(keeping.registry, "adopt", adopt_slowly)
            statuses: list[int] = []

            async def ping(n: int) -> None:
                status, _ = await _post(second, _message(20 + n, "ping"), _headers(session_id))
                statuses.append(status)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ping, 0)
                nursery.start_soon(ping, 1)
    assert statuses == [200, 200]
    assert keeping.adopted == 1
