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
    check_add,
    check_blob,
    check_text_10k,
    check_tool_count,
    fixture_params,
)
from .servers.fastmcp_server import build_server

__all__ = ["BACKEND", "open_target", "run", "versions"]

SERVER_MODULE = "benchmarks.servers.fastmcp_server"


def versions() -> dict[str, str]:
    return {"fastmcp": version("fastmcp"), "mcp": version("mcp"), "anyio": version("anyio")}


class FastMcpSession:
    def __init__(self, client: Client[Any]) -> None:
        self.client = client

    def caller(self, workload: str) -> Call:
        client = self.client
        params = fixture_params(workload)
        if workload == "call":
            arguments = params["arguments"]

            async def call() -> None:
                result = await client.call_tool("add", arguments)
                check_add(getattr(result.content[0], "text", None))

        elif workload == "call-10k":

            async def call() -> None:
                result = await client.call_tool("text_10k", {})
                check_text_10k(getattr(result.content[0], "text", None))

        elif workload == "list-50":

            async def call() -> None:
                check_tool_count(len(await client.list_tools()))

        elif workload == "read-100k":
            uri = params["uri"]

            async def call() -> None:
                contents = await client.read_resource(uri)
                check_blob(getattr(contents[0], "text", None))

        else:
            raise ValueError(f"unknown workload {workload!r}")
        return call


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
