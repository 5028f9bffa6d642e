"""The worker's mcptrio side: ``mcptrio.open_client`` under ``trio.run``.

In memory the client runs the server in its own nursery (``open_client(server)``); over stdio
it spawns ``python -m benchmarks.servers.mcptrio_server``; over WebSocket the worker starts
that module with ``--websocket`` once and every session connects to its URL.

``mcptrio`` is the handshake era (``HANDSHAKE_ERA``: ``initialize``, then requests on the
session; the client's default would probe the stateless era first); ``mcptrio-stateless`` pins
revision 2026-07-28 (``Revisions(protocol_version=...)``):
one ``server/discover`` when the client opens, then every request carries the client's
``_meta``, and a server that does not speak the era is an error, not a fallback.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial

import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Revisions

from .drive_trio import BACKEND, run
from .harness import (
    BenchSession,
    Call,
    OpenSession,
    workload_caller,
)
from .matrix import STATELESS_LIBS, STATELESS_VERSION
from .servers.mcptrio_server import build_server

__all__ = ["BACKEND", "open_target", "run", "versions"]

SERVER_MODULE = "benchmarks.servers.mcptrio_server"
#: Seconds the WebSocket server process gets to print its URL.
SERVER_START_TIMEOUT = 30.0


def versions() -> dict[str, str]:
    return {"mcptrio": mcptrio.__version__, "trio": trio.__version__}


class McptrioSession:
    def __init__(self, client: mcptrio.Client) -> None:
        self.client = client

    def caller(self, workload: str) -> Call:
        return workload_caller(self.client, workload)


#: The stateless era, pinned: no probe fallback to ``initialize``.
STATELESS = Revisions(protocol_version=STATELESS_VERSION, supported=(STATELESS_VERSION,))


@asynccontextmanager
async def _session(
    target: mcptrio.Server | list[str] | str, revisions: Revisions
) -> AsyncIterator[BenchSession]:
    async with mcptrio.open_client(target, revisions=revisions) as client:
        yield McptrioSession(client)


@contextmanager
def websocket_server_process() -> Iterator[str]:
    """Start the WebSocket bench server process; yield its ``ws://`` URL; stop it."""
    process = subprocess.Popen(
        [sys.executable, "-m", SERVER_MODULE, "--websocket"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        # The server prints its URL once bound, or exits (end of file) if it cannot start.
        url = process.stdout.readline().strip()
        if not url.startswith("ws://"):
            raise RuntimeError(f"the WebSocket server did not start (exit {process.poll()})")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(SERVER_START_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@asynccontextmanager
async def open_target(lib: str, transport: str) -> AsyncIterator[OpenSession]:
    """A way to open sessions of the bench server over ``transport``."""
    revisions = STATELESS if lib in STATELESS_LIBS else HANDSHAKE_ERA
    if transport == "in-memory":
        server = build_server()
        yield partial(_session, server, revisions)
    elif transport == "stdio":
        yield partial(_session, [sys.executable, "-m", SERVER_MODULE], revisions)
    elif transport == "websocket":
        with websocket_server_process() as url:
            yield partial(_session, url, revisions)
    else:
        raise ValueError(f"mcptrio has no worker for {transport!r}")
