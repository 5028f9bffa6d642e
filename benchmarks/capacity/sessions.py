"""Memory per live session, and the latency of opening one, against a server process."""

from __future__ import annotations

import json
import math
import select
import socket
import time
from dataclasses import dataclass, field

from .http_client import Connection, OpenedSession, open_get_stream
from .server_process import ServerProcess, settled_rss_kib

__all__ = [
    "MemoryPerSession",
    "memory_per_session",
    "open_latency_us",
    "percentile",
    "session_alive",
]

_PING = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
#: Sessions pinged after the readings to check the server still holds them.
_PROBES = 10


@dataclass(slots=True)
class MemoryPerSession:
    kib_per_session: float
    before_kib: int
    after_kib: int
    #: Sessions the server no longer answered (or streams it closed) after the readings.
    lost: list[str] = field(default_factory=list)


def session_alive(conn: Connection, session: OpenedSession) -> bool:
    """Whether the server still answers ``session``'s ``ping``."""
    headers = (
        f"Mcp-Session-Id: {session.session_id}\r\n"
        f"MCP-Protocol-Version: {session.protocol_version}\r\n"
    )
    return conn.post(_PING, headers).status == 200


def _closed_streams(streams: list[socket.socket]) -> int:
    """How many of the GET streams the server has closed (a readable socket reading EOF)."""
    closed = 0
    # poll, not select: select takes no descriptor past FD_SETSIZE (1,024), which thousands of
    # open streams pass.
    poller = select.poll()
    by_fd = {sock.fileno(): sock for sock in streams}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    for fd, _ in poller.poll(0):
        sock = by_fd[fd]
        sock.setblocking(False)
        try:
            while data := sock.recv(65536):
                del data
            closed += 1
        except BlockingIOError:
            pass
        finally:
            sock.setblocking(True)
    return closed


def memory_per_session(
    server: ServerProcess, sessions: int, *, get_stream: bool, pause_s: float, max_wait_s: float
) -> MemoryPerSession:
    """(RSS after ``sessions`` more sessions - RSS after the first one) / ``sessions``, in KiB.

    Every session is opened (``initialize`` + ``notifications/initialized``) over one keep-alive
    connection and, with ``get_stream``, opens its GET SSE stream on a connection of its own;
    all stay open until both readings and the liveness checks are done.
    """
    conn = Connection(server.port)
    streams: list[socket.socket] = []
    opened: list[OpenedSession] = []
    try:
        first = conn.open_session()
        opened.append(first)
        if get_stream:
            streams.append(open_get_stream(server.port, first))
        before = settled_rss_kib(server.pid, pause_s=pause_s, max_wait_s=max_wait_s)
        for _ in range(sessions):
            session = conn.open_session()
            opened.append(session)
            if get_stream:
                streams.append(open_get_stream(server.port, session))
        after = settled_rss_kib(server.pid, pause_s=pause_s, max_wait_s=max_wait_s)
        lost: list[str] = []
        step = max(1, len(opened) // _PROBES)
        dead = sum(not session_alive(conn, s) for s in opened[::step])
        if dead:
            lost.append(f"{dead} of {len(opened[::step])} probed sessions gone")
        if closed := _closed_streams(streams):
            lost.append(f"{closed} of {len(streams)} GET streams closed by the server")
        return MemoryPerSession((after - before) / sessions, before, after, lost)
    finally:
        conn.close()
        for sock in streams:
            sock.close()


def open_latency_us(server: ServerProcess, count: int) -> list[float]:
    """Microseconds to open each of ``count`` sessions, one after the other on a warm server.

    One opening is the ``initialize`` POST up to its answer with the session id, then the
    ``notifications/initialized`` POST up to its 202, over a keep-alive connection.
    """
    conn = Connection(server.port)
    try:
        conn.open_session()  # connects, and warms the server's session path
        samples: list[float] = []
        for _ in range(count):
            start = time.perf_counter_ns()
            conn.open_session()
            samples.append((time.perf_counter_ns() - start) / 1000)
        return samples
    finally:
        conn.close()


def percentile(samples: list[float], p: float) -> float:
    """The nearest-rank ``p``-th percentile (0 < p <= 100)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]
