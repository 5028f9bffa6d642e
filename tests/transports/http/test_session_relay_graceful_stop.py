"""A worker that stops gracefully (a rolling restart's SIGTERM) loses no request of its
handshake-era sessions that another worker forwarded to it: those it serves finish, those that
come once it stops are declined unrun and served again, by the worker that adopts the session.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio
from http_client_for_tests import open_test_connection
from test_session_relay import _open_session, _session_headers

import mcptrio
from mcptrio.server.scale_out import open_scale_out
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.engine.server_limits import ServerLimits
from mcptrio.transports.http.serve import serve_http


@dataclass
class StoppableWorker:
    app: McpHttpApp
    port: int
    shutdown: trio.Event
    stopped: trio.Event


def ledger_server(ledger: list[str]) -> mcptrio.Server:
    server = mcptrio.Server("graceful")

    @server.tool()
    async def charge(call: str, seconds: float) -> str:
        await trio.sleep(seconds)
        ledger.append(call)
        return f"charged {call}"

    return server


async def _run_worker(
    server: mcptrio.Server, redis_url: str, prefix: str, *, task_status: trio.TaskStatus[Any]
) -> None:
    shutdown, stopped = trio.Event(), trio.Event()
    async with open_scale_out(server, redis_url, prefix=prefix) as options:
        app = McpHttpApp(server, **options)
        # Closing its listener as soon as it stops: the forwarded request below arrives while
        # the app itself drains (the listening a balancer needs is tested on its own).
        limits = ServerLimits(stop_listening_after=0.0)
        serve = partial(serve_http, app, "127.0.0.1", 0, limits=limits, shutdown=shutdown)
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve)
            task_status.started(StoppableWorker(app, int(url.rsplit(":", 1)[1]), shutdown, stopped))
    stopped.set()


def _charge(request_id: int, call: str, seconds: float) -> bytes:
    arguments = {"call": call, "seconds": seconds}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "charge", "arguments": arguments},
        }
    ).encode()


async def _call_through(port: int, session_id: bytes, body: bytes) -> tuple[int, str]:
    async with open_test_connection(f"http://127.0.0.1:{port}", timeout=60) as conn:
        response = await conn.request(
            "POST", "/mcp", headers=_session_headers(session_id), body=body
        )
    return response.status, response.body.decode()


async def test_a_stopping_owner_finishes_forwarded_calls_and_declines_later_ones_unrun(
    redis_url: str,
) -> None:
    ledger: list[str] = []
    prefix = f"test{secrets.token_hex(4)}:"
    answers: dict[str, tuple[int, str]] = {}

    async def call(port: int, session_id: bytes, rid: int, name: str, seconds: float) -> None:
        answers[name] = await _call_through(port, session_id, _charge(rid, name, seconds))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            owner = await nursery.start(_run_worker, ledger_server(ledger), redis_url, prefix)
            other = await nursery.start(_run_worker, ledger_server(ledger), redis_url, prefix)
            session_id = await _open_session(owner.port)
            async with trio.open_nursery() as calls:
                # Running on the owner, forwarded by the other worker, when the owner stops.
                calls.start_soon(call, other.port, session_id, 1, "running", 1.0)
                while owner.app.relay.serving == 0:  # noqa: ASYNC110 (a counter, no event)
                    await trio.sleep(0.01)
                owner.shutdown.set()
                # The owner has no connection of its own to drain: it stops at once.
                await trio.sleep(0.2)
                # Forwarded to the owner while it stops: declined, then served by the other.
                calls.start_soon(call, other.port, session_id, 2, "later", 0.1)
            await owner.stopped.wait()
            nursery.cancel_scope.cancel()
    assert answers["running"][0] == 200 and "charged running" in answers["running"][1]
    assert answers["later"][0] == 200 and "charged later" in answers["later"][1]
    assert sorted(ledger) == ["later", "running"]
    assert other.app.keeping is not None and other.app.keeping.adopted == 1
