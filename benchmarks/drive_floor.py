"""The worker's floor side (``matrix.FLOOR``): the least a transport costs, under ``trio.run``.

No library: a session here is a client that numbers its requests, sends each, and wakes the
caller whose id an answer carries, which is what any multiplexed JSON-RPC session must do, and
a server that answers each request with its fixed result (``servers/floor_answers.py``):

- in memory, request objects (dicts) go over a Trio memory channel to a server task, which
  hands the answer object (the request's id and a prebuilt result) straight back to the
  waiting caller; no encoding. Opening a session (``s100x20``) is a channel and a server task.
- over stdio, the session spawns ``python -m benchmarks.servers.floor_server`` (a bare line
  echo); requests are encoded from a template with their id and written by one writer task
  (whatever is queued in one write), answer lines are decoded with ``json.loads``.

Every answer is checked by the harness's checks, as the libraries' are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from . import REPO_ROOT
from .drive_trio import BACKEND, run
from .harness import (
    BenchSession,
    Call,
    OpenSession,
    check_add,
    check_blob,
    check_text_10k,
    check_tool_count,
)
from .matrix import FIXTURES, SWEEP_SIZES
from .servers.floor_answers import RESULT_BY_KEY
from .worker_runner import child_env

__all__ = ["BACKEND", "open_target", "run", "versions"]

SERVER_MODULE = "benchmarks.servers.floor_server"
#: Requests queued ahead of the writer (stdio) or the server task (in memory).
_QUEUE = 1024
_RECEIVE_SIZE = 1 << 16


def versions() -> dict[str, str]:
    return {"trio": trio.__version__}


def check_result(workload: str, result: dict[str, Any]) -> None:
    """The harness's check of ``workload``'s answer, on a result as the wire has it."""
    if workload == "list-50":
        check_tool_count(len(result["tools"]))
    elif workload in SWEEP_SIZES:
        check_blob(result["contents"][0].get("text"), workload)
    elif workload == "call-10k":
        check_text_10k(result["content"][0].get("text"))
    else:
        check_add(result["content"][0].get("text"))


class StdioFloorSession:
    """Requests numbered and sent by ``send``; answers handed to their caller by ``answered``
    (the reader task's, which reads every answer line)."""

    def __init__(self, send: Callable[[int, str], Awaitable[None]]) -> None:
        self._send = send
        self._next_id = 0
        self._waiting: dict[int, tuple[trio.Event, list[dict[str, Any]]]] = {}

    def answered(self, answer: dict[str, Any]) -> None:
        event, slot = self._waiting.pop(answer["id"])
        slot.append(answer)
        event.set()

    def caller(self, workload: str) -> Call:
        async def call() -> None:
            self._next_id += 1
            identifier = self._next_id
            event, slot = self._waiting[identifier] = (trio.Event(), [])
            await self._send(identifier, workload)
            await event.wait()
            check_result(workload, slot[0]["result"])

        return call


#: What goes over the in-memory floor's channel: the request, and where its answer goes.
_Delivery = tuple[dict[str, Any], trio.Event, list[dict[str, Any]]]


async def _in_memory_server(requests: trio.MemoryReceiveChannel[_Delivery]) -> None:
    async for request, answered, slot in requests:
        params = request["params"]
        key = params.get("name", params.get("uri", request["method"]))
        slot.append({"jsonrpc": "2.0", "id": request["id"], "result": RESULT_BY_KEY[key]})
        answered.set()


class InMemoryFloorSession:
    """Request objects over a memory channel to the server task; each answer handed straight
    back to its caller (two task switches a call: the least a call between two tasks takes)."""

    def __init__(self, requests: trio.MemorySendChannel[_Delivery]) -> None:
        self._requests = requests
        self._next_id = 0

    def caller(self, workload: str) -> Call:
        method, params = FIXTURES[workload]

        async def call() -> None:
            self._next_id += 1
            request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
            answered, slot = trio.Event(), []
            await self._requests.send((request, answered, slot))
            await answered.wait()
            check_result(workload, slot[0]["result"])

        return call


@asynccontextmanager
async def _in_memory_session() -> AsyncIterator[BenchSession]:
    to_server, requests = trio.open_memory_channel[_Delivery](_QUEUE)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_in_memory_server, requests)
        yield InMemoryFloorSession(to_server)
        nursery.cancel_scope.cancel()


def _request_template(workload: str) -> tuple[bytes, bytes]:
    """A request line of ``workload`` before and after its id (the id first, as the stdio floor
    expects)."""
    method, params = FIXTURES[workload]
    rest = json.dumps({"method": method, "params": params}, separators=(",", ":"))
    return b'{"jsonrpc":"2.0","id":', b"," + rest[1:].encode() + b"\n"


async def _write_lines(process: trio.Process, lines: trio.MemoryReceiveChannel[bytes]) -> None:
    assert process.stdin is not None
    async for line in lines:
        batch = [line]
        while True:
            try:
                batch.append(lines.receive_nowait())
            except trio.WouldBlock:
                break
        await process.stdin.send_all(b"".join(batch))


async def _read_answers(process: trio.Process, session: StdioFloorSession) -> None:
    assert process.stdout is not None
    pending = b""
    while chunk := await process.stdout.receive_some(_RECEIVE_SIZE):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            session.answered(json.loads(line))
    # The session cancels this task before it stops the process: an end of its output before
    # that is the floor dying, which must fail the run rather than leave its callers waiting.
    raise RuntimeError(f"the stdio floor exited (status {await process.wait()})")


@asynccontextmanager
async def _stdio_session() -> AsyncIterator[BenchSession]:
    to_writer, lines = trio.open_memory_channel[bytes](_QUEUE)
    templates = {workload: _request_template(workload) for workload in FIXTURES}

    async def send(identifier: int, workload: str) -> None:
        before, after = templates[workload]
        await to_writer.send(before + str(identifier).encode() + after)

    session = StdioFloorSession(send)
    async with trio.open_nursery() as nursery:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", SERVER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO_ROOT,
            env=child_env(),
        )
        nursery.start_soon(_write_lines, process, lines)
        nursery.start_soon(_read_answers, process, session)
        try:
            yield session
        finally:
            nursery.cancel_scope.cancel()
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()


@asynccontextmanager
async def open_target(lib: str, transport: str) -> AsyncIterator[OpenSession]:
    """A way to open floor sessions over ``transport``."""
    if transport == "in-memory":
        yield _in_memory_session
    elif transport == "stdio":
        yield _stdio_session
    else:
        raise ValueError(f"the floor has no worker for {transport!r}")
