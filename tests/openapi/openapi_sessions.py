"""An OpenAPI server served over Streamable HTTP, with the official SDK's client on it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.transports.http.endpoints.security import HttpSecurity

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def sdk_session(
    server: mcptrio.Server,
    *,
    security: HttpSecurity | None = None,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """``server`` over Streamable HTTP (with ``security``), and the official SDK's client
    session on it, initialized (sending ``headers`` with every request)."""
    import httpx2

    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            lambda task_status: server.serve_http(security=security, task_status=task_status)
        )
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        nursery.cancel_scope.cancel()


def text_of(result: Any) -> str:
    """The text of a result's single text block."""
    assert len(result.content) == 1, result.content
    text: str = result.content[0].text
    return text


def json_of(result: Any) -> Any:
    """A successful call's answer, read from its text (and equal to its structured content
    when that is an object)."""
    assert not result.is_error, text_of(result)
    value = json.loads(text_of(result))
    if isinstance(value, dict):
        assert result.structured_content == value
    return value
