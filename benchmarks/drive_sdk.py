"""The worker's official-SDK side: ``mcp.Client`` against ``MCPServer``, under ``anyio.run``.

``sdk`` uses the client's default ``mode="auto"`` (in memory it calls the server's handlers
directly, over stdio it negotiates the 2026-07-28 revision); ``sdk-legacy`` uses
``mode="legacy"`` (the initialize handshake; in memory, JSON-RPC message objects on memory
streams). ``sdk-stateless`` pins ``mode="2026-07-28"``: no ``server/discover`` probe when the
client opens, and otherwise the very path ``auto`` settles on (in memory the direct dispatcher,
over stdio 2026-07-28 requests with their ``_meta``), so in those two transports it measures
what ``sdk`` does; it is there to complete the stateless era's row. See ``matrix.LIBS``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from importlib.metadata import version
from typing import Any

from mcp import Client, StdioServerParameters

from . import REPO_ROOT
from .drive_anyio import BACKEND, run, server_env
from .harness import (
    BenchSession,
    Call,
    OpenSession,
    workload_caller,
)
from .matrix import STATELESS_VERSION
from .servers.sdk_server import build_server

__all__ = ["BACKEND", "open_target", "run", "versions"]

SERVER_MODULE = "benchmarks.servers.sdk_server"


def versions() -> dict[str, str]:
    return {"mcp": version("mcp"), "anyio": version("anyio")}


class SdkSession:
    def __init__(self, client: Client) -> None:
        self.client = client

    def caller(self, workload: str) -> Call:
        return workload_caller(self.client, workload)


@asynccontextmanager
async def _session(target: Any, mode: str) -> AsyncIterator[BenchSession]:
    async with Client(target, mode=mode) as client:
        yield SdkSession(client)


@asynccontextmanager
async def open_target(lib: str, transport: str) -> AsyncIterator[OpenSession]:
    """A way to open sessions of the bench server over ``transport``."""
    mode = {"sdk-legacy": "legacy", "sdk-stateless": STATELESS_VERSION}.get(lib, "auto")
    if transport == "in-memory":
        yield partial(_session, build_server(), mode)
    elif transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", SERVER_MODULE], cwd=REPO_ROOT, env=server_env()
        )
        yield partial(_session, params, mode)
    else:
        raise ValueError(f"the SDK has no worker for {transport!r}")
