"""The worker's FastMCP side: ``fastmcp.Client`` against ``FastMCP``, under ``anyio.run``.

In memory ``Client(server)`` (FastMCP's in-memory transport); over stdio a ``StdioTransport``
spawning ``python -m benchmarks.servers.fastmcp_server`` (not kept alive past the session).
The client's defaults otherwise (``mode="auto"``, no response cache).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from . import REPO_ROOT
from .drive_anyio import BACKEND, run, server_env
from .harness import (
    BenchSession,
    Call,
    OpenSession,
    workload_caller,
)
from .servers.fastmcp_server import build_server

__all__ = ["BACKEND", "open_target", "run", "versions"]

SERVER_MODULE = "benchmarks.servers.fastmcp_server"


def versions() -> dict[str, str]:
    return {"fastmcp": version("fastmcp"), "mcp": version("mcp"), "anyio": version("anyio")}


def _itself(result: Any) -> Any:
    return result


class FastMcpSession:
    def __init__(self, client: Client[Any]) -> None:
        self.client = client

    def caller(self, workload: str) -> Call:
        # FastMCP's list_tools and read_resource return the lists themselves.
        return workload_caller(self.client, workload, listed_tools=_itself, read_contents=_itself)


def _opener(make_target: Callable[[], Any]) -> OpenSession:
    @asynccontextmanager
    async def open_session() -> AsyncIterator[BenchSession]:
        async with Client(make_target()) as client:
            yield FastMcpSession(client)

    return open_session


def _stdio_transport() -> StdioTransport:
    return StdioTransport(
        command=sys.executable,
        args=["-m", SERVER_MODULE],
        env=server_env(),
        cwd=str(REPO_ROOT),
        keep_alive=False,
    )


@asynccontextmanager
async def open_target(lib: str, transport: str) -> AsyncIterator[OpenSession]:
    """A way to open sessions of the bench server over ``transport``."""
    if transport == "in-memory":
        server = build_server()
        yield _opener(lambda: server)
    elif transport == "stdio":
        yield _opener(_stdio_transport)
    else:
        raise ValueError(f"FastMCP has no worker for {transport!r}")
