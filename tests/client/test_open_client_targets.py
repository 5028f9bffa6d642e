"""open_client's target: told apart by its type, never by guessing; each transport's options
travel in its target and reach the transport."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import (
    HttpTarget,
    InMemoryTarget,
    SessionServer,
    StdioTarget,
    WebSocketTarget,
    http,
    in_memory,
    stdio,
    websocket,
)
from mcptrio.client.targets import resolve_target
from mcptrio.runtime.transport import Transport
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.memory import memory_transport_pair

from conftest import ForwardingTransport

# A stdio server that reports where it runs and what it was given.
REPORTER = """
import os
import mcptrio

server = mcptrio.Server("reporter")


@server.tool()
def where() -> str:
    return os.getcwd() + "|" + os.environ.get("MCPTRIO_TEST_MARK", "-")


server.run_stdio()
"""


def adder() -> mcptrio.Server:
    server = mcptrio.Server("adder")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


def text(result: mcptrio.protocol.types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcptrio.protocol.types.TextContent)
    return block.text


# ------------------------------------------------------------------ strings are URLs or errors


@pytest.mark.parametrize("command", ["touch {marker}", "{marker}", "python -c 'print(1)'"])
async def test_a_string_that_is_not_a_url_is_refused_and_never_run(
    tmp_path: Path, command: str
) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match=r"not an http\(s\):// or ws\(s\):// URL") as caught:
        async with mcptrio.open_client(command.format(marker=marker)):
            pytest.fail("the block must not run")  # pragma: no cover
    assert "list of arguments" in str(caught.value)
    assert "stdio(" in str(caught.value)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:1/mcp", HttpTarget),
        ("HTTPS://example.test/mcp", HttpTarget),
        ("ws://127.0.0.1:1/mcp", WebSocketTarget),
        ("wss://example.test/mcp", WebSocketTarget),
    ],
)
def test_a_url_string_is_told_apart_by_its_scheme(url: str, kind: type) -> None:
    target = resolve_target(url)
    assert isinstance(target, kind)
    assert target.url == url


@pytest.mark.parametrize("target", [42, b"python server.py", Path("server.py"), {"cmd": "x"}, None])
async def test_anything_else_is_a_type_error_naming_every_accepted_form(target: Any) -> None:
    with pytest.raises(TypeError) as caught:
        async with mcptrio.open_client(target):
            pytest.fail("the block must not run")  # pragma: no cover
    message = str(caught.value)
    for form in ("list of arguments", "stdio(", "http(s)://", "ws(s)://", "serve_session"):
        assert form in message
    assert "Transport" in message


# ------------------------------------------------------------------ stdio


@pytest.mark.parametrize(
    ("command", "error", "match"),
    [
        ("python server.py", TypeError, r"list of arguments, not the string"),
        ([], ValueError, "non-empty"),
        (["python", 3], TypeError, "must be a string"),
    ],
)
def test_a_stdio_command_must_be_a_non_empty_list_of_strings(
    command: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        stdio(command)


def test_a_list_and_stdio_of_it_are_the_same_target() -> None:
    command = (sys.executable, "server.py")
    assert resolve_target(list(command)) == stdio(command) == StdioTarget(list(command))
    assert stdio(list(command)).command == command  # kept as a tuple: the record is frozen


async def test_stdio_options_reach_the_process(tmp_path: Path) -> None:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    env = {**os.environ, "MCPTRIO_TEST_MARK": "marked"}
    with trio.fail_after(20):
        # A path in the command is taken as the program would take it.
        async with mcptrio.open_client(stdio([sys.executable, script], env=env, cwd=folder)) as c:
            where = text(await c.call_tool("where"))
        async with mcptrio.open_client([sys.executable, str(script)]) as client:
            default = text(await client.call_tool("where"))
    assert where == f"{folder}|marked"
    assert default == f"{os.getcwd()}|-"


# ------------------------------------------------------------------ HTTP and WebSocket


@pytest.mark.parametrize(
    ("make", "url"),
    [(http, "ws://127.0.0.1/mcp"), (http, "127.0.0.1:80/mcp"), (websocket, "http://x/mcp")],
)
def test_a_transport_target_refuses_a_url_of_another_scheme(make: Any, url: str) -> None:
    with pytest.raises(ValueError, match="needs a URL starting with"):
        make(url)


async def test_http_and_websocket_targets_connect_with_their_options() -> None:
    server = adder()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(serve_http, server)
            targets: Sequence[Any] = [
                base + "/mcp",
                http(base + "/mcp", headers={"X-Trace": "1"}, timeout=5, max_concurrent_posts=2),
                base.replace("http://", "ws://") + "/mcp",
                websocket(base.replace("http://", "ws://") + "/mcp", connect_timeout=5),
            ]
            for target in targets:
                async with mcptrio.open_client(target) as client:
                    assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
            nursery.cancel_scope.cancel()


async def test_an_http_targets_frame_limit_applies() -> None:
    server = mcptrio.Server("big")

    @server.tool()
    def blob() -> str:
        return "x" * 5000

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(serve_http, server)
            async with mcptrio.open_client(http(base + "/mcp", max_frame_size=2000)) as client:
                with pytest.raises(mcptrio.McpError):
                    await client.call_tool("blob")
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ in memory and transports


class Wrapped:
    """Not a mcptrio.Server: anything with serve_session can be served in memory."""

    def __init__(self, server: mcptrio.Server) -> None:
        self.server = server
        self.sessions = 0

    async def serve_session(
        self, transport: Transport, *, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED
    ) -> None:
        self.sessions += 1
        await self.server.serve_session(transport, task_status=task_status)


async def test_any_object_with_serve_session_is_served_in_memory() -> None:
    wrapped = Wrapped(adder())
    assert isinstance(mcptrio.Server("x"), SessionServer)
    assert isinstance(resolve_target(wrapped), InMemoryTarget)
    with trio.fail_after(10):
        async with mcptrio.open_client(wrapped) as client:
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
    assert wrapped.sessions == 1


async def test_in_memory_takes_a_frame_limit_and_refuses_what_cannot_serve() -> None:
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            async with in_memory(adder(), max_frame_size=2000).open(nursery) as transport:
                assert getattr(transport, "max_frame_size", None) == 2000
            nursery.cancel_scope.cancel()
    with pytest.raises(TypeError, match="serve_session"):
        in_memory(object())  # type: ignore[arg-type]


class Closes(ForwardingTransport):
    """A transport that counts how often it is closed."""

    def __init__(self, transport: Transport) -> None:
        super().__init__(transport)
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1
        await super().aclose()


async def test_an_open_transport_is_used_as_it_is_and_closed_with_the_block() -> None:
    client_end, server_end = memory_transport_pair()
    transport = Closes(client_end)
    assert resolve_target(transport) is transport
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(adder().serve_session, server_end)
            async with mcptrio.open_client(transport) as client:
                assert text(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
                assert transport.closed == 0
            assert transport.closed >= 1
            nursery.cancel_scope.cancel()


def test_importing_the_client_does_not_import_the_server() -> None:
    code = (
        "import sys, mcptrio.client;"
        " assert not [m for m in sys.modules if m.startswith('mcptrio.server')], 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
