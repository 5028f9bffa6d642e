"""``mcptrio run --workers 2 --redis URL``: a worker killed mid-run, with real processes.

Handshake-era (2025-11-25) sessions belong to the worker that answered their ``initialize``; a
request that lands on the other worker is forwarded to the owner through Redis. Every request
here goes on a connection of its own, so the kernel spreads it over both workers. When an owner
is killed, its sessions are adopted by a live worker once its liveness key expires: the same
session id goes on working, with its subscriptions, and the client never initializes again
(the call that was running on the killed worker loses its connection: its outcome is unknown);
the other worker's sessions go on as before.
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
from mcptrio.stores.redis_calls import open_redis
from mcptrio.stores.redis_session_records import RedisSessionRecords
from mcptrio.stores.session_directory import LIVENESS_TTL
from mcptrio.transports.http.client.streamable import StreamableHttpClientTransport
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.engine.client_pool import HttpClientPool
from mcptrio.transports.http.engine.client_wire import HttpConnectError, HttpProtocolError

HANDSHAKE = Revisions(supported=("2025-11-25",))
#: No call may take longer: a dead owner is noticed within its liveness TTL (5 s) plus a check.
CALL_DEADLINE = 15.0
RENEWAL_LOGGER = "mcptrio.transports.http.client.streamable"
NEWS = "worker://news"
#: Seconds past the liveness TTL within which every worker counts a killed one gone: its cached
#: liveness answer (0.5 s), and the call that was answered by it, with a margin.
NOTICED_WITHIN = 1.5


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


async def keep_news(watched: Watched, updates: list[float]) -> None:
    """Subscribe ``watched`` to ``worker://news``; note when each update comes."""
    async with watched.client.subscribe(NEWS) as news:
        async for _ in news:
            updates.append(trio.current_time())


async def test_killing_a_worker_has_its_sessions_adopted_and_leaves_the_others_alone(
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
            news: list[float] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(keep_news, victims[0], news)
                for w in watched:
                    nursery.start_soon(keep_calling, w, stop)
                await trio.sleep(1.5)
                # What the victims' sessions negotiated and subscribed to is in Redis (written
                # moments after each change: a change made in those moments before a crash can
                # be lost).
                await saved(redis_server.url, [w.first_id for w in victims], NEWS)
                killed_at = trio.current_time()
                os.kill(victim_pid, signal.SIGKILL)
                # Until every session of the killed worker answered again, from a live worker.
                with trio.fail_after(30):
                    while not all(adopted(w, victim_pid) for w in victims):  # noqa: ASYNC110
                        await trio.sleep(0.1)
                # Its subscription was adopted with it: an update reaches its GET stream.
                with trio.fail_after(30):
                    while not any(t > killed_at for t in news):
                        await survivors[0].client.call_tool("announce", {})
                        await trio.sleep(0.5)
                # And on, past the time a dead owner takes to be noticed.
                await trio.sleep(max(1.0, killed_at + 8 - trio.current_time()))
                stop.set()
                nursery.cancel_scope.cancel()
            ended_at = trio.current_time()

            # Requests naming a killed worker's session are served, on whichever worker now;
            # an id that was never issued is still 404.
            for w in victims:
                for _ in range(4):
                    status, _, _ = await raw_post(sup.url, PING, w.first_id)
                    assert status == 200
            never = victims[0].first_id[:-6] + "abcdef"
            assert (await raw_post(sup.url, PING, never))[0] == 404
            assert "worker w1 was killed by SIGKILL; restarting it" in sup.log

    report = describe(watched, killed_at)
    renewals = [r.getMessage() for r in caplog.records if r.name == RENEWAL_LOGGER]
    for w in watched:
        # No call hung: each was answered, or failed, within its deadline.
        assert not any(o.hung or o.took >= CALL_DEADLINE for o in w.outcomes), report
        assert any(o.answer is not None for o in w.outcomes if o.started < killed_at), report
        # No session was renewed: the same id throughout, never a 404.
        assert all(o.session_id == w.first_id for o in w.outcomes), report
        assert not any(w.first_id in message for message in renewals), renewals
    for w in victims:
        # A call that was on its way to the killed worker (running there, or forwarded to it
        # before every worker saw it gone) lost its connection: its outcome is unknown, and it
        # is not run again. Every call made once the death is noticed everywhere (its liveness
        # key expired, and each worker's cached answer with it) is answered by a live worker.
        noticed = killed_at + LIVENESS_TTL + NOTICED_WITHIN
        before = [o for o in w.outcomes if o.started < noticed]
        after = [o for o in w.outcomes if o.started >= noticed]
        assert after and all(o.answer and o.answer[1] != victim_pid for o in after), report
        assert all(o.error is None for o in before if o.started < killed_at - 1), report
        assert all(is_broken_connection(o.error) for o in before if o.error), report
    for w in survivors:
        # The other worker's sessions go on: every answer from their owner, also long after
        # the kill. The one thing they can see: a call that was on a connection the killed
        # worker held (it was forwarding the call, or had the connection in its accept queue)
        # loses that connection, as it would behind any proxy that dies; the client cannot
        # replay a call that may have run.
        assert all(o.answer in (None, ("w0", survivor_pid)) for o in w.outcomes), report
        failed = [o for o in w.outcomes if o.answer is None]
        assert all(is_broken_connection(o.error) for o in failed), report
        assert all(abs(o.started - killed_at) < 1 for o in failed), report
        assert any(o.started > killed_at + 6 for o in w.outcomes), report
    assert ended_at - killed_at < 60


def is_broken_connection(error: McpError | None) -> bool:
    """Whether ``error`` is a request's connection broken under it (by the killed worker), or
    refused as it died (a connection the kernel had handed to its queue)."""
    return isinstance(error, (HttpProtocolError, HttpConnectError))


async def saved(redis_url: str, session_ids: list[str], containing: str = "") -> None:
    """Until the record of every one of ``session_ids`` is in Redis, the first one's
    snapshot holding ``containing``."""
    async with open_redis(redis_url) as redis:
        records = RedisSessionRecords(redis)
        with trio.fail_after(10):
            for n, session_id in enumerate(session_ids):
                while True:
                    record = await records.load(session_id)
                    if record is not None and (n or containing.encode() in record.state):
                        break
                    await trio.sleep(0.05)


def adopted(watched: Watched, killed_pid: int) -> bool:
    """Whether a session of the worker ``killed_pid`` has been answered by a live worker (all
    its answers before the kill came from that one)."""
    return any(o.answer is not None and o.answer[1] != killed_pid for o in watched.outcomes)


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


async def test_a_request_for_a_killed_workers_session_is_served_by_another_within_seconds(
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
            await saved(redis_server.url, [session_id])
            os.kill(pids["w1"], signal.SIGKILL)
            await _gone(pids["w1"])
            started = trio.current_time()
            statuses: list[int | None] = []
            with trio.fail_after(LIVENESS_TTL + 10):
                while not statuses or statuses[-1] != 200:
                    try:
                        status, _, _ = await raw_post(sup.url, PING, session_id)
                    except (ValueError, IndexError, OSError):
                        status = None  # Dropped: it was forwarded to the dead worker.
                    statuses.append(status)
            waited = trio.current_time() - started
    # Never 404: at most the requests forwarded before the death was noticed were dropped.
    assert 404 not in statuses
    assert statuses[-1] == 200
    assert waited < LIVENESS_TTL + 5
