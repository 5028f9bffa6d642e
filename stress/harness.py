"""What every attack shares: the server child process, its peak RSS, raw HTTP, the probe."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio
import wsproto
import wsproto.events as ws_events

ROOT = Path(__file__).resolve().parent.parent
#: The well-behaved client connects from here, so per-address limits on 127.0.0.1 (the
#: attacker) do not apply to it; Linux routes all of 127/8 to loopback.
PROBE_ADDRESS = "127.0.0.2"
REVISION = "2025-06-18"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def peak_rss_mb(pid: int, field: str = "VmHWM") -> float:
    """The process's peak resident set (``VmHWM``; ``VmRSS``: now) in MB; 0 once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class ServerChild:
    process: trio.Process
    url: str = ""
    peak_mb: float = 0.0

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def sample(self) -> float:
        self.peak_mb = max(self.peak_mb, peak_rss_mb(self.process.pid))
        return self.peak_mb

    @property
    def host_port(self) -> tuple[str, int]:
        parts = urlsplit(self.url)
        return parts.hostname or "127.0.0.1", parts.port or 80


@asynccontextmanager
async def open_server(
    mode: str, *limits: str, options: Sequence[str] = ()
) -> AsyncIterator[ServerChild]:
    """Start ``python -m stress.server MODE`` (with ``options``, such as ``--skill-mib``);
    yields once it serves (HTTP: its URL is known)."""
    args = [sys.executable, "-m", "stress.server", mode, *options]
    for limit in limits:
        args += ["--limit", limit]
    stdio = mode == "stdio"
    process = await trio.lowlevel.open_process(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
        cwd=ROOT,
    )
    child = ServerChild(process)
    try:
        if not stdio:
            assert process.stdout is not None
            with trio.fail_after(20):
                line = b""
                while not line.endswith(b"\n"):
                    data = await process.stdout.receive_some(1024)
                    if not data:
                        raise RuntimeError(f"the {mode} server ended before serving")
                    line += data
            child.url = line.decode().strip()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_rss, child)
            yield child
            nursery.cancel_scope.cancel()
        child.sample()
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()


async def _watch_rss(child: ServerChild) -> None:
    while child.alive:
        child.sample()
        await trio.sleep(0.05)


# -- raw HTTP ------------------------------------------------------------------------------------


def http_request(
    method: str,
    target: str,
    host: str,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"host: {host}"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body or method == "POST":
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def mcp_headers(session_id: str | None = None, revision: str = REVISION) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": revision,
    }
    if session_id:
        headers["mcp-session-id"] = session_id
    return headers


def rpc(method: str, params: dict[str, Any] | None = None, rid: int | str | None = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if rid is not None:
        message["id"] = rid
    return json.dumps(message).encode()


INITIALIZE_PARAMS = {
    "protocolVersion": REVISION,
    "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "stress", "version": "1"},
}


@dataclass
class HttpAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


async def read_answer(stream: trio.abc.Stream, *, whole: bool = True) -> HttpAnswer:
    """One response (``Content-Length`` or until close); ``whole=False`` stops after the head."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = await stream.receive_some(65536)
        if not piece:
            raise trio.BrokenResourceError(f"closed before a response head: {data[:80]!r}")
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if whole:
        length = int(headers.get("content-length", "-1"))
        # Pieces joined once: adding each to the body would copy a large body once per piece.
        pieces, received = [body], len(body)
        while length < 0 or received < length:
            piece = await stream.receive_some(1 << 20)
            if not piece:
                break
            pieces.append(piece)
            received += len(piece)
        body = b"".join(pieces)
    return HttpAnswer(status, headers, body)


async def connect(host: str, port: int, local: str | None = None) -> trio.SocketStream:
    return await trio.open_tcp_stream(host, port, local_address=local)


async def open_websocket(host: str, port: int) -> tuple[trio.SocketStream, wsproto.WSConnection]:
    """A WebSocket connection to ``/mcp`` (subprotocol ``mcp``), once the server accepted it."""
    stream = await connect(host, port)
    ws = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    await stream.send_all(
        ws.send(ws_events.Request(host=f"{host}:{port}", target="/mcp", subprotocols=["mcp"]))
    )
    accepted = False
    while not accepted:
        ws.receive_data(await stream.receive_some(65536))
        accepted = any(isinstance(e, ws_events.AcceptConnection) for e in ws.events())
    return stream, ws


async def websocket_texts(
    stream: trio.SocketStream, ws: wsproto.WSConnection
) -> AsyncIterator[str]:
    """The text messages the server sends on ``stream``, until it closes."""
    while True:
        data = await stream.receive_some(1 << 20)
        if not data:
            return
        ws.receive_data(data)
        for event in ws.events():
            if isinstance(event, ws_events.TextMessage):
                yield event.data


async def open_http_session(
    host: str, port: int, local: str | None = None, revision: str = REVISION
) -> str:
    """Initialize a Streamable HTTP session (at ``revision``); its id."""
    netloc = f"{host}:{port}"
    stream = await connect(host, port, local)
    async with stream:
        params = dict(INITIALIZE_PARAMS, protocolVersion=revision)
        await stream.send_all(
            http_request(
                "POST",
                "/mcp",
                netloc,
                body=rpc("initialize", params),
                headers=mcp_headers(revision=revision),
            )
        )
        answer = await read_answer(stream)
        if answer.status != 200:
            raise RuntimeError(f"initialize got {answer.status}: {answer.body[:200]!r}")
        sid = answer.headers["mcp-session-id"]
    # A connection per request: a server short of slots may close an idle keep-alive one.
    stream = await connect(host, port, local)
    async with stream:
        await stream.send_all(
            http_request(
                "POST",
                "/mcp",
                netloc,
                body=rpc("notifications/initialized", rid=None),
                headers=mcp_headers(sid, revision),
            )
        )
        await read_answer(stream)
    return sid


# -- the well-behaved client ---------------------------------------------------------------------


@dataclass
class ProbeResult:
    calls: int = 0
    failures: int = 0
    latencies: list[float] = field(default_factory=list)

    @property
    def worst(self) -> float:
        return max(self.latencies, default=float("inf"))

    def summary(self) -> dict[str, Any]:
        return {
            "probe_calls": self.calls,
            "probe_failures": self.failures,
            "probe_median_s": round(statistics.median(self.latencies), 3)
            if self.latencies
            else None,
            "probe_worst_s": round(self.worst, 3),
            "probe_ok": self.calls > 0 and self.failures == 0 and self.worst < 1.0,
        }


async def probe_http(child: ServerChild, stop: trio.Event, every: float = 0.2) -> ProbeResult:
    """A well-behaved client on other connections: a new connection from another address for
    each ``tools/call`` (so that it needs a free connection slot every time), each measured from
    connect to answer; a call with no answer in 5 s counts as a failure."""
    host, port = child.host_port
    result = ProbeResult()
    with trio.fail_after(10):
        sid = await open_http_session(host, port, PROBE_ADDRESS)
    body = rpc("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, rid=7)
    request = http_request("POST", "/mcp", f"{host}:{port}", body=body, headers=mcp_headers(sid))
    while not stop.is_set():
        started = trio.current_time()
        result.calls += 1
        ok = False
        with trio.move_on_after(5):
            try:
                stream = await connect(host, port, PROBE_ADDRESS)
                async with stream:
                    await stream.send_all(request)
                    answer = await read_answer(stream)
                    ok = answer.status == 200 and b'"text":"3"' in answer.body.replace(b" ", b"")
            except OSError:
                ok = False
        result.latencies.append(trio.current_time() - started)
        if not ok:
            result.failures += 1
        with trio.move_on_after(every):
            await stop.wait()
    return result
