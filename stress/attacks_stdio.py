"""Attacks on a stdio server: a peer that floods and never reads its answers."""

from __future__ import annotations

import json
import os
from typing import Any

import trio

from .harness import INITIALIZE_PARAMS, ServerChild, open_server, rpc


async def _handshake(child: ServerChild) -> None:
    stdin, stdout = child.process.stdin, child.process.stdout
    assert stdin is not None and stdout is not None
    await stdin.send_all(rpc("initialize", INITIALIZE_PARAMS, rid="init") + b"\n")
    data = b""
    while b"\n" not in data:
        data += await stdout.receive_some(65536)
    assert json.loads(data.split(b"\n", 1)[0])["id"] == "init"
    await stdin.send_all(rpc("notifications/initialized", rid=None) + b"\n")


async def _flood(child: ServerChild, line: bytes, seconds: float) -> tuple[int, bytes]:
    """Write ``line`` (numbered) for ``seconds`` without reading; the bytes the server took,
    and what is left of the line the flood stopped in (to finish before anything else).

    Written with ``os.write`` on the non-blocking pipe, not ``send_all``: a cancelled
    ``send_all`` does not say how much of its data went out, and a line cut at an unknown place
    would swallow the next one."""
    stdin = child.process.stdin
    assert isinstance(stdin, trio.lowlevel.FdStream)
    fd = stdin.fileno()
    sent = 0
    number = 0
    pending = b""
    deadline = trio.current_time() + seconds
    while trio.current_time() < deadline:
        if not pending:
            pending = b"".join(
                line.replace(b'"id": 0', b'"id": %d' % (number + i)) for i in range(200)
            )
            number += 200
        try:
            written = os.write(fd, pending)
        except BlockingIOError:
            with trio.move_on_at(deadline):
                await trio.lowlevel.wait_writable(fd)
            continue
        sent += written
        pending = pending[written:]
        await trio.lowlevel.checkpoint()
    cut = pending.find(b"\n")
    return sent, pending[: cut + 1]


async def _still_answers(child: ServerChild, rest: bytes) -> bool:
    """After the flood: drain its answers, then a ping is answered (within 10 s)."""
    stdin, stdout = child.process.stdin, child.process.stdout
    assert stdin is not None and stdout is not None
    found = False
    with trio.move_on_after(10):
        async with trio.open_nursery() as nursery:

            async def drain() -> None:
                nonlocal found
                tail = b""
                while True:
                    data = await stdout.receive_some(1 << 20)
                    if not data:
                        return
                    # The whole chunk is searched: the ping is answered by the protocol layer at
                    # once, so its answer may come before many of the flood's, in one chunk.
                    # Only the last bytes are kept, for an answer split between two chunks.
                    if b'"id":"last"' in (tail + data).replace(b" ", b""):
                        found = True
                        return
                    tail = bytes(data[-64:])

            nursery.start_soon(drain)
            await stdin.send_all(rest + rpc("ping", rid="last") + b"\n")
    return found


async def stdio_flood(method: str, params: dict[str, Any] | None, seconds: float) -> dict[str, Any]:
    line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}).encode()
    line = line.replace(b', "params": null', b"") + b"\n"
    async with open_server("stdio") as child:
        await _handshake(child)
        sent, rest = await _flood(child, line, seconds)
        answered = await _still_answers(child, rest)
        child.sample()
        return {
            "peak_rss_mb": round(child.peak_mb, 1),
            "flood_mb_taken": round(sent / 1e6, 1),
            "alive_and_answering": answered and child.alive,
        }


async def stdio_ping_flood(short: bool) -> dict[str, Any]:
    """A stdio client sends ``ping`` without end and never reads."""
    return await stdio_flood("ping", None, 2 if short else 15)


async def stdio_call_flood(short: bool) -> dict[str, Any]:
    """A stdio client sends ``tools/call`` without end and never reads."""
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    return await stdio_flood("tools/call", params, 2 if short else 15)
