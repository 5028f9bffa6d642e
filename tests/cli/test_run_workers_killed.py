"""``mcptrio run --workers 2 --redis URL``: a worker killed mid-run, with real processes.

Handshake-era (2025-11-25) sessions belong to the worker that answered their ``initialize``; a
request that lands on the other worker is forwarded to the owner through Redis. Every request
here goes on a connection of its own, so the kernel spreads it over both workers. When an owner
is killed, its sessions' requests are answered 404 once its liveness key expires, and mcptrio's
client starts a new session by itself; the other worker's sessions go on as before.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
import trio
from redis_servers import RedisServer
from test_run_workers import _gone, answering_workers, supervised

import mcptrio
from mcptrio.client import Revisions
from mcptrio.protocol.errors import McpError
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.streamable import StreamableHttpClientTransport
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.engine.client_pool import HttpClientPool
from mcptrio.transports.http.engine.client_wire import HttpProtocolError

HANDSHAKE = Revisions(supported=("2025-11-25",))
#: No call may take longer: a dead owner is noticed within its liveness TTL (5 s) plus a check.
CALL_DEADLINE = 15.0
RENEWAL_LOGGER = "mcptrio.transports.http.client.streamable"


@dataclass(frozen=True)
class Outcome:
    """One ``whoami`` call of a session: when it started, how long it took, the session id
    after it, and the answer (worker id, pid) or the error."""

    started: float
    took: float
    session_id: str
    answer: tuple[str, int] | None
    error: McpError | None
    hung: bool = False


@dataclass
class Watched:
    """A client session over fresh connections, and what its calls got."""

    client: mcptrio.Client
    transport: StreamableHttpClientTransport
    first_id: str
    owner: str
    pid: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        session_id = self.transport.session_id
        assert session_id is not None
        return session_id


async def call_whoami(client: mcptrio.Client) -> tuple[str, int]:
    result = await client.call_tool("whoami", {"delay": 0.0})
    assert not result.is_error, result
    [content] = result.content
    assert isinstance(content, TextContent)
    worker_id, _, pid = content.text.partition(" ")
    return worker_id, int(pid)


@asynccontextmanager
async def open_watched(url: str) -> AsyncIterator[Watched]:
    """A handshake-era session whose every request goes on a new connection."""
    async with (
        open_http_client_transport(url, pool=HttpClientPool(max_idle=0)) as transport,
        mcptrio.open_client(transport, revisions=HANDSHAKE) as client,
    ):
        inner = transport.inner
        assert isinstance(inner, StreamableHttpClientTransport)
        assert inner.session_id is not None
        owner, pid = await call_whoami(client)
        # The session's id names its owner; a forwarded call runs there, so the call says it.
        assert inner.session_id.startswith(f"{owner}_"), (inner.session_id, owner)
        yield Watched(client, inner, inner.session_id, owner, pid)


async def keep_calling(watched: Watched, stop: trio.Event) -> None:
    """Call ``whoami`` until ``stop``, one call at a time, each within ``CALL_DEADLINE``."""
    while not stop.is_set():
        started = trio.current_time()
        answer: tuple[str, int] | None = None
        error: McpError | None = None
        hung = False
        try:
            with trio.fail_after(CALL_DEADLINE):
                answer = await call_whoami(watched.client)
        except trio.TooSlowError:
            hung = True
        except McpError as exc:
            error = exc
        took = trio.current_time() - started
        watched.outcomes.append(Outcome(started, took, watched.session_id, answer, error, hung))
        await trio.sleep(0.02)


async def raw_post(
    url: str, body: bytes, session_id: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` on a new connection (closed after the response): status, headers, body."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n"
    )
    if session_id is not None:
        head += f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    async with stream:
        await stream.send_all(head.encode() + b"\r\n" + body)
        received = b""
        while chunk := await stream.receive_some():
            received += chunk
    head_bytes, _, rest = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, rest


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }
).encode()
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'


async def open_raw_session(url: str) -> str:
    """``initialize`` and ``notifications/initialized``, each on a new connection; the id."""
    status, headers, _ = await raw_post(url, INITIALIZE)
    assert status == 200
    session_id = headers["mcp-session-id"]
    status, _, _ = await raw_post(url, INITIALIZED, session_id)
    assert status == 202
    return session_id


async def test_killing_a_worker_renews_its_sessions_and_leaves_the_others_alone(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=RENEWAL_LOGGER)
    with trio.fail_after(120):
        async with (
            supervised("--workers", "2", "--redis", redis_server.url, "--grace", "2") as sup,
            AsyncExitStack() as sessions,
        ):
            watched: list[Watched] = []
            for _ in range(24):
                if all(sum(w.owner == o for w in watched) >= 2 for o in ("w0", "w1")):
                    break
                watched.append(await sessions.enter_async_context(open_watched(sup.url)))
            victims = [w for w in watched if w.owner == "w1"]
            survivors = [w for w in watched if w.owner == "w0"]
            assert len(victims) >= 2 and len(survivors) >= 2, [w.owner for w in watched]
            victim_pid = victims[0].pid
            survivor_pid = survivors[0].pid
            assert {w.pid for w in victims} == {victim_pid}
            assert {w.pid for w in survivors} == {survivor_pid}

            stop = trio.Event()
            async with trio.open_nursery() as nursery:
                for w in watched:
                    nursery.start_soon(keep_calling, w, stop)
                await trio.sleep(1.5)
                killed_at = trio.current_time()
                os.kill(victim_pid, signal.SIGKILL)
                # Until every session of the killed worker answered on a new session.
                with trio.fail_after(30):
                    while not all(renewed(w, victim_pid) for w in victims):  # noqa: ASYNC110
                        await trio.sleep(0.1)
                # And on, past the time a dead owner takes to be noticed.
                await trio.sleep(max(1.0, killed_at + 8 - trio.current_time()))
                stop.set()
            ended_at = trio.current_time()

            # Requests naming a killed worker's session are 404 on whichever worker now.
            for w in victims:
                for _ in range(4):
                    status, _, _ = await raw_post(sup.url, PING, w.first_id)
                    assert status == 404
            assert "worker w1 was killed by SIGKILL; restarting it" in sup.log

    report = describe(watched, killed_at)
    for w in watched:
        # No call hung: each was answered, or failed, within its deadline.
        assert not any(o.hung or o.took >= CALL_DEADLINE for o in w.outcomes), report
        assert any(o.answer is not None for o in w.outcomes if o.started < killed_at), report
    renewals = [r.getMessage() for r in caplog.records if r.name == RENEWAL_LOGGER]
    for w in victims:
        # The client got a 404 for its session, and started a new one by itself.
        assert f"the server ended session {w.first_id}; starting a new one" in renewals
        assert w.session_id != w.first_id
        # A call running on the killed worker itself lost its connection, or (sent again on
        # the new session) was told its outcome is unknown: never run twice. Every call made
        # after the kill was answered by a live worker.
        renewal = next(o for o in w.outcomes if o.session_id != w.first_id)
        after = w.outcomes[w.outcomes.index(renewal) :]
        unanswered = [o for o in after if o.answer is None]
        assert all(is_outcome_unknown(o.error) for o in unanswered), report
        assert all(o.started < killed_at + 1 for o in unanswered), report
        assert all(o.answer[1] != victim_pid for o in after if o.answer), report
        assert all(o.session_id.startswith(f"{o.answer[0]}_") for o in after if o.answer)
        before = w.outcomes[: w.outcomes.index(renewal)]
        assert all(o.error is None for o in before if o.started < killed_at - 1), report
        assert all(is_broken_connection(o.error) for o in before if o.error), report
    for w in survivors:
        # The other worker's sessions go on: the same session throughout, never renewed, every
        # answer from their owner, also long after the kill. The one thing they can see: a call
        # that was on a connection the killed worker held (it was forwarding the call, or had
        # the connection in its accept queue) loses that connection, as it would behind any
        # proxy that dies; the client cannot replay a call that may have run.
        assert all(o.session_id == w.first_id for o in w.outcomes), report
        assert not any(w.first_id in message for message in renewals), renewals
        assert all(o.answer in (None, ("w0", survivor_pid)) for o in w.outcomes), report
        failed = [o for o in w.outcomes if o.answer is None]
        assert all(is_broken_connection(o.error) for o in failed), report
        assert all(abs(o.started - killed_at) < 1 for o in failed), report
        assert any(o.started > killed_at + 6 for o in w.outcomes), report
    assert ended_at - killed_at < 40


def is_broken_connection(error: McpError | None) -> bool:
    """Whether ``error`` is a request's connection broken under it (by the killed worker)."""
    return isinstance(error, HttpProtocolError)


def is_outcome_unknown(error: McpError | None) -> bool:
    """Whether ``error`` says a call may have run and was not sent again."""
    return error is not None and "is unknown" in str(error)


def renewed(watched: Watched, killed_pid: int) -> bool:
    """Whether ``watched`` has answered on a new session, from a live worker."""
    return any(
        o.answer is not None and o.answer[1] != killed_pid and o.session_id != watched.first_id
        for o in watched.outcomes
    )


def describe(watched: list[Watched], killed_at: float) -> str:
    """What each session's calls got, relative to the kill, for failure messages."""
    lines = []
    for w in watched:
        lines.append(f"session {w.first_id} (owner {w.owner}, pid {w.pid}):")
        shown: tuple[str, int] | None = (w.owner, w.pid)
        for o in w.outcomes:
            if o.error is not None or o.hung or o.took > 0.5 or o.answer != shown:
                shown = o.answer
                got = "HUNG" if o.hung else repr(o.answer or o.error)
                lines.append(
                    f"  at {o.started - killed_at:+.2f}s took {o.took:.2f}s {o.session_id} {got}"
                )
        lines.append(f"  {len(w.outcomes)} calls")
    return "\n".join(lines)


async def test_a_request_for_a_killed_workers_session_is_404_within_seconds(
    redis_server: RedisServer,
) -> None:
    with trio.fail_after(90):
        async with supervised("--workers", "2", "--redis", redis_server.url, "--grace", "2") as sup:
            pids = await answering_workers(sup.url, 2)
            session_id = await open_raw_session(sup.url)
            while not session_id.startswith("w1_"):
                session_id = await open_raw_session(sup.url)
            status, _, _ = await raw_post(sup.url, PING, session_id)
            assert status == 200
            os.kill(pids["w1"], signal.SIGKILL)
            await _gone(pids["w1"])
            started = trio.current_time()
            with trio.fail_after(10):
                status, _, _ = await raw_post(sup.url, PING, session_id)
            waited = trio.current_time() - started
    assert status == 404
    assert waited < 10
