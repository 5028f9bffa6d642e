"""Attacks on the HTTP server (Streamable HTTP, legacy SSE, WebSocket on one port), each with a
well-behaved client (:func:`~stress.harness.probe_http`) on other connections throughout."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio
import wsproto
import wsproto.events as ws_events

from .harness import (
    INITIALIZE_PARAMS,
    ROOT,
    ServerChild,
    child_env,
    connect,
    http_request,
    mcp_headers,
    open_http_session,
    open_server,
    open_websocket,
    read_answer,
    rpc,
)

Attack = Callable[[ServerChild, trio.Event], Awaitable[dict[str, Any]]]


async def under_attack(
    mode: str, attack: Attack, seconds: float, *limits: str, options: Sequence[str] = ()
) -> dict[str, Any]:
    """Run ``attack`` against a fresh server (started with ``options``) for ``seconds`` with
    the probe alongside; the attack's figures, the server's peak RSS and the probe's verdict."""
    async with open_server(mode, *limits, options=options) as child:
        stop = trio.Event()
        figures: dict[str, Any] = {}
        probe: dict[str, Any] = {}

        async def attacker() -> None:
            figures.update(await attack(child, stop))

        async def prober() -> None:
            # Give the attack a head start: the probe measures the server once it is loaded.
            delay = min(1.0, seconds / 4)
            await trio.sleep(delay)
            command = [sys.executable, "-m", "stress.probe", child.url, str(seconds - delay)]
            done = await trio.run_process(
                command, capture_stdout=True, env=child_env(), cwd=ROOT, check=False
            )
            lines = done.stdout.decode().strip().splitlines()
            failed = {"probe_calls": 0, "probe_failures": 1, "probe_ok": False}
            probe.update(json.loads(lines[-1]) if lines else failed)

        with trio.move_on_after(seconds + 15):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(attacker)
                nursery.start_soon(prober)
                await trio.sleep(seconds)
                stop.set()
        child.sample()
        if not probe:
            probe = {"probe_calls": 0, "probe_failures": 1, "probe_ok": False}
        return {"peak_rss_mb": round(child.peak_mb, 1), **figures, **probe, "alive": child.alive}


# -- WebSocket: a flood of pings (MCP and WebSocket ones) from a peer that never reads ---------


async def _ws_open(child: ServerChild) -> tuple[trio.SocketStream, wsproto.WSConnection]:
    stream, ws = await open_websocket(*child.host_port)
    await stream.send_all(
        ws.send(ws_events.TextMessage(rpc("initialize", INITIALIZE_PARAMS).decode()))
    )
    return stream, ws


async def ws_ping_flood(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
    stream, ws = await _ws_open(child)
    ping = ws.send(ws_events.TextMessage(rpc("ping", rid=1).decode()))
    frame_ping = ws.send(ws_events.Ping(b"x" * 100))
    burst = (ping * 50 + frame_ping * 50) * 10
    sent = 0

    async def flood() -> None:
        # Never cut a write short and go on: a frame cut in the middle is a protocol error,
        # which the server rightly answers by closing.
        nonlocal sent
        while True:
            await stream.send_all(burst)
            sent += len(burst)

    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        await stop.wait()
        nursery.cancel_scope.cancel()
    return {"flood_mb_taken": round(sent / 1e6, 1)}


# -- legacy SSE: a reader at 4 KiB/s, a flood of POSTs ------------------------------------------


async def sse_slow_reader(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
    host, port = child.host_port
    netloc = f"{host}:{port}"
    stream = await connect(host, port)
    await stream.send_all(
        http_request("GET", "/sse", netloc, headers={"accept": "text/event-stream"})
    )
    data = b""
    while b"session_id=" not in data or b"\n\n" not in data.split(b"session_id=", 1)[1]:
        data += await stream.receive_some(4096)
    endpoint = data.split(b"data: ", 1)[1].split(b"\n", 1)[0].decode().strip()
    posted = 0

    async def read_slowly() -> None:
        while True:
            await stream.receive_some(4096)
            await trio.sleep(1)

    async def post_flood() -> None:
        nonlocal posted
        conn = await connect(host, port)
        async with conn:
            number = 0
            while not stop.is_set():
                number += 1
                body = (
                    rpc("initialize", INITIALIZE_PARAMS) if number == 1 else rpc("ping", rid=number)
                )
                await conn.send_all(
                    http_request("POST", endpoint, netloc, body=body, headers=mcp_headers())
                )
                await read_answer(conn)
                posted += 1

    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(read_slowly)
        for _ in range(8):
            nursery.start_soon(post_flood)
        await stop.wait()
        nursery.cancel_scope.cancel()
    return {"posts_taken": posted}


# -- a tool that elicits (or one that takes long), the socket closed at once ---------------------


def call_and_leave(count: int, tool: str, arguments: dict[str, Any]) -> Attack:
    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        host, port = child.host_port
        netloc = f"{host}:{port}"
        sid = await open_http_session(host, port)
        params = {"name": tool, "arguments": arguments}
        sent = 0
        while not stop.is_set():
            for _ in range(count):
                # Each its own id: a reused one would be refused at once (400) and run nothing.
                body = rpc("tools/call", params, rid=sent + 1)
                request = http_request("POST", "/mcp", netloc, body=body, headers=mcp_headers(sid))
                with trio.move_on_after(1):
                    try:
                        stream = await connect(host, port)
                        await stream.send_all(request)
                        await stream.aclose()
                        sent += 1
                    except OSError:
                        pass
            await trio.sleep(0.5)
        return {"posts_abandoned": sent}

    return attack


async def run_holders(count: int, hold: Callable[[], Awaitable[None]], stop: trio.Event) -> None:
    """Run ``count`` copies of ``hold`` (each holding what it can of the server) until
    ``stop``."""
    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(hold)
        await stop.wait()
        nursery.cancel_scope.cancel()


# -- idle sockets, re-opened as soon as the server closes them ----------------------------------


def idle_sockets(count: int) -> Attack:
    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        host, port = child.host_port
        opened = 0

        async def hold() -> None:
            nonlocal opened
            while not stop.is_set():
                try:
                    stream = await connect(host, port)
                except OSError:
                    await trio.sleep(0.1)
                    continue
                opened += 1
                async with stream:
                    try:
                        # A byte now and then: a head that never ends.
                        await stream.send_all(b"G")
                        while await stream.receive_some(4096):
                            pass
                    except trio.BrokenResourceError:
                        pass

        await run_holders(count, hold, stop)
        return {"sockets_opened": opened}

    return attack


# -- streams held open --------------------------------------------------------------------------


@dataclass
class HeldStreams:
    """How many streamed answers an attack's holders got (200) and were refused."""

    held: int = 0
    refused: int = 0


async def hold_stream(host: str, port: int, request: bytes, counts: HeldStreams) -> None:
    """Send ``request`` on a new connection and hold its streamed answer until the server ends
    it; a refused one (not 200) is counted and followed by a pause."""
    try:
        stream = await connect(host, port)
    except OSError:
        await trio.sleep(0.1)
        return
    async with stream:
        try:
            await stream.send_all(request)
            answer = await read_answer(stream, whole=False)
            if answer.status != 200:
                counts.refused += 1
                await trio.sleep(0.5)
                return
            counts.held += 1
            while await stream.receive_some(4096):
                pass
        except trio.BrokenResourceError:
            pass


def get_streams(count: int) -> Attack:
    async def attack(child: ServerChild, stop: trio.Event) -> dict[str, Any]:
        host, port = child.host_port
        netloc = f"{host}:{port}"
        counts = HeldStreams()

        async def hold() -> None:
            # A session of its own: a session may have only so many GET streams.
            sid = None
            while sid is None and not stop.is_set():
                try:
                    sid = await open_http_session(host, port)
                except (OSError, RuntimeError, KeyError, trio.BrokenResourceError):
                    counts.refused += 1
                    await trio.sleep(0.5)
            headers = mcp_headers(sid)
            headers["accept"] = "text/event-stream"
            request = http_request("GET", "/mcp", netloc, headers=headers)
            while not stop.is_set():
                await hold_stream(host, port, request, counts)

        await run_holders(count, hold, stop)
        return {"streams_opened": counts.held, "streams_refused": counts.refused}

    return attack


# -- the attacks as the runner sees them ----------------------------------------------------------


async def ws_ping_flood_attack(short: bool) -> dict[str, Any]:
    """A WebSocket peer sends MCP and WebSocket pings without end and never reads."""
    return await under_attack("http-httptools", ws_ping_flood, 2.5 if short else 20)


async def sse_slow_reader_attack(short: bool) -> dict[str, Any]:
    """A legacy SSE client reads its stream at 4 KiB/s and floods POSTs."""
    return await under_attack("http-httptools", sse_slow_reader, 2.5 if short else 40)


async def elicit_close_attack(short: bool) -> dict[str, Any]:
    """POSTs of a tool that elicits, each socket closed at once (1,000; 200 with 200 slots)."""
    ask = call_and_leave(250 if short else 1000, "ask", {})
    if short:
        return await under_attack("http-httptools", ask, 2.5, "max_connections=200")
    return await under_attack("http-httptools", ask, 20)


async def slow_json_close_attack(short: bool) -> dict[str, Any]:
    """POSTs of a tool that sleeps 10 minutes and answers as JSON (nothing streams), each
    socket closed at once: the departure watch gives their slots back."""
    sleep = call_and_leave(100 if short else 250, "sleep", {"seconds": 600})
    if short:
        return await under_attack("http-httptools", sleep, 4, "max_connections=200")
    return await under_attack("http-httptools", sleep, 20)


async def idle_sockets_attack(short: bool) -> dict[str, Any]:
    """Idle sockets re-opened whenever the server closes one (2,000; 300 against 200 slots)."""
    if short:
        return await under_attack(
            "http-httptools", idle_sockets(300), 2.5, "max_connections=200", "header_timeout=1.0"
        )
    return await under_attack("http-httptools", idle_sockets(2000), 25)


async def get_streams_attack(short: bool) -> dict[str, Any]:
    """GET streams held open (1,000; 250 against 200 slots)."""
    if short:
        return await under_attack("http-httptools", get_streams(250), 2.5, "max_connections=200")
    return await under_attack("http-httptools", get_streams(1000), 20)


# -- framing -------------------------------------------------------------------------------------

SMUGGLE = (
    b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 40\r\n"
    b"transfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    b"GET /smuggled HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"
)


async def smuggling_attack(short: bool) -> dict[str, Any]:
    """Content-Length with Transfer-Encoding and a request hidden after the body, on each front
    end: how many responses came back (2 means the hidden request ran)."""
    figures: dict[str, Any] = {}
    ran = False
    for mode in ("http-h11", "http-httptools", "hypercorn"):
        async with open_server(mode) as child:
            stream = await connect(*child.host_port)
            async with stream:
                await stream.send_all(SMUGGLE)
                data = b""
                with trio.move_on_after(5):
                    while piece := await stream.receive_some(65536):
                        data += piece
            statuses = [
                line.split(b" ")[1].decode()
                for line in data.split(b"\r\n")
                if line.startswith(b"HTTP/1.1 ")
            ]
            figures[mode] = statuses
            ran = ran or len(statuses) > 1
    return {"responses": figures, "smuggled_request_ran": ran, "holds": not ran}


async def batch_garbage_attack(short: bool) -> dict[str, Any]:
    """A 2025-03-26 batch of 100,000 garbage items: how big the answer is, against the request."""
    async with open_server("http-httptools") as child:
        host, port = child.host_port
        netloc = f"{host}:{port}"
        stream = await connect(host, port)
        async with stream:
            params = dict(INITIALIZE_PARAMS, protocolVersion="2025-03-26")
            headers = mcp_headers()
            headers["mcp-protocol-version"] = "2025-03-26"
            await stream.send_all(
                http_request(
                    "POST", "/mcp", netloc, body=rpc("initialize", params), headers=headers
                )
            )
            sid = (await read_answer(stream)).headers["mcp-session-id"]
            headers["mcp-session-id"] = sid
            await stream.send_all(
                http_request(
                    "POST",
                    "/mcp",
                    netloc,
                    body=rpc("notifications/initialized", rid=None),
                    headers=headers,
                )
            )
            await read_answer(stream)
            body = b"[" + b",".join([b"1"] * 100_000) + b"]"
            await stream.send_all(http_request("POST", "/mcp", netloc, body=body, headers=headers))
            answer = await read_answer(stream)
        child.sample()
        ratio = len(answer.body) / len(body)
        return {
            "peak_rss_mb": round(child.peak_mb, 1),
            "status": answer.status,
            "answer_to_request_ratio": round(ratio, 3),
            "holds": ratio <= 1.0,
        }


# -- subscriptions ------------------------------------------------------------------------------


async def subscriptions_attack(short: bool) -> dict[str, Any]:
    """``resources/subscribe`` to distinct URIs of a template, over stdio (176,800; 5,000)."""
    from .attacks_stdio import _handshake

    total = 5_000 if short else 176_800
    async with open_server("stdio") as child:
        await _handshake(child)
        stdin, stdout = child.process.stdin, child.process.stdout
        assert stdin is not None and stdout is not None
        refused = answered = 0

        async def read_all() -> None:
            nonlocal refused, answered
            buffer = b""
            while answered < total:
                buffer += await stdout.receive_some(1 << 20)
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    message = json.loads(line)
                    if "id" in message:
                        answered += 1
                        refused += "error" in message

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_all)
            batch = []
            for n in range(total):
                batch.append(rpc("resources/subscribe", {"uri": f"item://{n}"}, rid=n) + b"\n")
                if len(batch) == 500:
                    await stdin.send_all(b"".join(batch))
                    batch = []
            if batch:
                await stdin.send_all(b"".join(batch))
        child.sample()
        return {
            "peak_rss_mb": round(child.peak_mb, 1),
            "subscribes_sent": total,
            "refused": refused,
            "alive_and_answering": child.alive and answered == total,
        }
