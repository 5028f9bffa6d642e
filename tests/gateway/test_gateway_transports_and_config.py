"""The gateway's upstreams over every network transport, its log forwarding, and its config."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import HttpTarget, NotificationCallbacks, StdioTarget, WebSocketTarget
from mcptrio.gateway import ConfigError, Gateway, Upstream, parse_config
from mcptrio.protocol.types import LoggingMessageNotification, TextContent
from mcptrio.server.context import Context


def echo_server() -> mcptrio.Server:
    server = mcptrio.Server("echo")

    @server.tool
    async def echo(text: str, ctx: Context) -> str:
        await ctx.warning(f"echoing {text}")
        return text

    return server


@pytest.mark.parametrize("kind", ["streamable-http", "legacy-sse", "websocket"])
async def test_upstreams_over_every_network_transport(kind: str) -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(echo_server().serve_http)
            target = {
                "streamable-http": f"{base}/mcp",
                "legacy-sse": f"{base}/sse",
                "websocket": base.replace("http://", "ws://") + "/mcp",
            }[kind]
            gateway = Gateway(upstreams=[Upstream(name="up", target=target)])
            await nursery.start(gateway.serve_upstreams)
            assert gateway.upstreams["up"].state == "up", gateway.upstreams["up"].error
            async with mcptrio.open_client(gateway) as client:
                result = await client.call_tool("up_echo", {"text": kind})
                assert result.content[0].text == kind
            nursery.cancel_scope.cancel()


async def test_an_upstreams_log_messages_reach_the_client_waiting_on_it() -> None:
    logs: list[LoggingMessageNotification] = []
    gateway = Gateway(
        upstreams=[
            Upstream(name="up", target=echo_server(), in_process=False, revisions=HANDSHAKE_ERA)
        ]
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(
                gateway,
                revisions=HANDSHAKE_ERA,
                notifications=NotificationCallbacks(on_log=logs.append),
            ) as client:
                await client.call_tool("up_echo", {"text": "hi"})
                while not logs:  # noqa: ASYNC110
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert logs[0].data == "echoing hi"
    assert logs[0].level == "warning"
    assert logs[0].logger == "up"


def test_the_config_reads_commands_and_urls(tmp_path: Path) -> None:
    upstreams = parse_config(
        {
            "mcpServers": {
                "local": {"command": "node", "args": ["s.js"], "env": {"K": "v"}, "cwd": "sub"},
                "remote": {"url": "https://example.com/mcp", "headers": {"A": "b"}},
                "legacy": {"url": "http://127.0.0.1:9/sse", "type": "sse"},
                "live": {"url": "ws://127.0.0.1:9/mcp", "exclude": ["x*"], "namespace": "ws"},
                "off": {"command": "nothing", "disabled": True},
            }
        },
        base=tmp_path,
    )
    by_name: dict[str, Any] = {u.name: u for u in upstreams}
    assert sorted(by_name) == ["legacy", "live", "local", "remote"]
    local = by_name["local"].target
    assert isinstance(local, StdioTarget)
    assert local.command == ("node", "s.js")
    assert local.cwd == tmp_path / "sub"
    assert (
        local.env is not None and local.env["K"] == "v" and local.env["PATH"] == os.environ["PATH"]
    )
    assert isinstance(by_name["remote"].target, HttpTarget)
    assert by_name["remote"].target.headers == {"A": "b"}
    assert isinstance(by_name["live"].target, WebSocketTarget)
    assert by_name["live"].exposed("tool") == "ws_tool"
    assert not by_name["live"].wants("xyz")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "a", "url": "http://x"}, "not both"),
        ({"args": []}, 'needs a "command" or a "url"'),
        ({"command": "a", "colour": "red"}, "unknown key"),
        ({"command": "a", "type": "sse"}, 'needs a "url"'),
        ({"command": ["a"]}, "wrong type"),
        ({"url": "http://x", "protocolVersion": "1999-01-01"}, "protocolVersion"),
        ({"url": "http://x", "include": "a*"}, "wrong type"),
    ],
)
def test_a_bad_config_entry_is_an_error_naming_it(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config({"mcpServers": {"bad": entry}})
    assert "'bad'" in str(info.value)


def test_a_config_without_servers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mcpServers"):
        parse_config({"servers_typo": {}})
    from mcptrio.gateway import load_config

    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.json")


async def test_a_call_an_http_upstream_cannot_carry_is_a_tool_error_naming_the_failure() -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            upstream_scope = trio.CancelScope()

            async def serve_upstream(*, task_status: trio.TaskStatus[str]) -> None:
                with upstream_scope:
                    await echo_server().serve_http(task_status=task_status)

            base = await nursery.start(serve_upstream)
            gateway = Gateway(upstreams=[Upstream(name="up", target=f"{base}/mcp")])
            await nursery.start(gateway.serve_upstreams)
            async with mcptrio.open_client(gateway) as client:
                assert (await client.call_tool("up_echo", {"text": "x"})).content[0].text == "x"
                upstream_scope.cancel()
                await trio.sleep(0.1)
                result = await client.call_tool("up_echo", {"text": "y"})
            nursery.cancel_scope.cancel()
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    assert block.text.startswith("The upstream server 'up' could not carry this call:")
