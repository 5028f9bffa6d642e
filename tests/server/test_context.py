"""The one context type: what a handler learns about its request through ``Context``, and the
requests and notifications it sends through it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import Handlers, NotificationCallbacks
from mcptrio.protocol.types import ListRootsRequest, LoggingMessageNotification, Root
from mcptrio.server.context import Context


async def test_the_context_carries_the_request_and_its_arguments() -> None:
    seen: dict[str, Any] = {}
    server = mcptrio.Server("context")

    @server.tool
    async def echo(ctx: Context, text: str, times: int = 1) -> str:
        seen["tool"] = (ctx.method, dict(ctx.arguments), ctx.progress_token, ctx.request_id)
        return text * times

    @server.prompt
    def greet(ctx: Context, name: str) -> str:
        seen["prompt"] = (ctx.method, dict(ctx.arguments))
        return f"Hello, {name}"

    @server.resource("note://one")
    def note(ctx: Context) -> str:
        seen["resource"] = (ctx.method, dict(ctx.arguments))
        return "one"

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            await client.call_tool("echo", {"text": "a", "extra": "kept"})
            await client.get_prompt("greet", {"name": "Ada"})
            await client.read_resource("note://one")
    method, arguments, token, request_id = seen["tool"]
    # The arguments as the client sent them: before conversion, unknown keys included.
    assert (method, arguments, token) == ("tools/call", {"text": "a", "extra": "kept"}, None)
    assert isinstance(request_id, int)
    assert seen["prompt"] == ("prompts/get", {"name": "Ada"})
    assert seen["resource"] == ("resources/read", {})


async def test_the_arguments_are_read_only() -> None:
    server = mcptrio.Server("context")
    arguments: list[Mapping[str, Any]] = []

    @server.tool
    def keep(ctx: Context, n: int) -> str:
        arguments.append(ctx.arguments)
        return ""

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            await client.call_tool("keep", {"n": 1})
    with pytest.raises(TypeError):
        arguments[0]["n"] = 2  # type: ignore[index]


async def test_the_progress_token_is_the_callers() -> None:
    server = mcptrio.Server("context")
    tokens: list[int | str | None] = []

    @server.tool
    async def work(ctx: Context) -> str:
        tokens.append(ctx.progress_token)
        await ctx.report_progress(1, 1)
        return "done"

    progress: list[float] = []
    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            await client.call_tool("work", on_progress=lambda p, t, m: progress.append(p))
    assert tokens[0] is not None
    assert progress == [1]


async def test_any_notification_and_request_go_through_the_context() -> None:
    server = mcptrio.Server("context")

    @server.tool
    async def forward(ctx: Context) -> str:
        await ctx.notify(LoggingMessageNotification(level="info", data="hi"))
        roots = await ctx.send_request(ListRootsRequest(), timeout=5)
        return ",".join(root.uri for root in roots.roots)

    logged: list[Any] = []
    with trio.fail_after(10):
        async with mcptrio.open_client(
            server,
            handlers=Handlers(roots=[Root(uri="file:///a")]),
            notifications=NotificationCallbacks(on_log=logged.append),
            revisions=HANDSHAKE_ERA,
        ) as client:
            result = await client.call_tool("forward")
    assert result.content[0].text == "file:///a"  # type: ignore[union-attr]
    assert [message.data for message in logged] == ["hi"]
