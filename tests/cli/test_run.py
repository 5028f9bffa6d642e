"""``mcptrio run``: a server file served over each transport, as a user starts it."""

from __future__ import annotations

import inspect
import socket
import sys
from pathlib import Path

import pytest
import trio
from cli_runner import EVERYTHING, mcptrio, mcptrio_env, served

import mcptrio as library


async def test_run_over_http_prints_its_url_and_serves_list_and_call() -> None:
    with trio.fail_after(90):
        async with served(EVERYTHING, "--transport", "http", "--port", "0") as url:
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            listed = await mcptrio("list", url)
            assert listed.code == 0, listed.stderr
            assert "test_simple_text" in [tool["name"] for tool in listed.json()["tools"]]
            called = await mcptrio("call", "--json", url, "test_simple_text")
            assert called.code == 0, called.stderr
            assert called.json()["content"] == [
                {"type": "text", "text": "This is a simple text response for testing."}
            ]


async def test_run_over_websocket_serves_a_websocket_url() -> None:
    with trio.fail_after(90):
        async with served(EVERYTHING, "--transport", "websocket", "--port", "0") as url:
            assert url.startswith("ws://127.0.0.1:") and url.endswith("/mcp")
            called = await mcptrio("call", "--json", url, "describe", '{"values": [1, 2, 3]}')
            assert called.code == 0, called.stderr
            assert called.json()["structuredContent"]["mean"] == 2


@pytest.mark.parametrize(
    "options",
    [
        ["--parser", "h11"],
        ["--parser", "httptools"],
        ["--front-end", "hypercorn"],
    ],
)
async def test_run_serves_on_each_parser_and_front_end(options: list[str]) -> None:
    with trio.fail_after(90):
        async with served(EVERYTHING, "--transport", "http", "--port", "0", *options) as url:
            called = await mcptrio("call", url, "test_simple_text")
            assert called.code == 0, called.stderr


async def test_run_serves_stdio_by_default() -> None:
    # The stdio server is `mcptrio run FILE` itself, started by the client after --.
    called = await mcptrio(
        "call",
        "--json",
        "--",
        sys.executable,
        "-m",
        "mcptrio",
        "run",
        EVERYTHING,
        "test_simple_text",
    )
    assert called.code == 0, called.stderr
    assert called.json()["content"][0]["text"].startswith("This is a simple text")


async def test_run_a_module_and_a_named_server(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "servers.py").write_text(
        "import mcptrio\n"
        "public = mcptrio.Server('public')\n"
        "admin = mcptrio.Server('admin')\n"
        "@admin.tool\n"
        "def shutdown() -> str:\n"
        "    return 'bye'\n"
    )
    with trio.fail_after(90):
        async with served(
            "shop.servers:admin", "--transport", "http", "--port", "0", cwd=tmp_path
        ) as url:
            called = await mcptrio("call", "--json", url, "shutdown")
            assert called.code == 0, called.stderr
            assert called.json()["content"] == [{"type": "text", "text": "bye"}]


async def test_run_on_a_port_in_use_says_so_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = await mcptrio("run", EVERYTHING, "--transport", "http", "--port", str(port))
    assert ran.code == 3
    assert ran.error_line == f"mcptrio: error: cannot serve on 127.0.0.1:{port}: the port is in use"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nothing.py", "no such file: nothing.py"),
        ("no_such_module_here", "no module named 'no_such_module_here'"),
        ("mcptrio/protocol/base.py", "mcptrio/protocol/base.py has no mcptrio.Server"),
        (f"{EVERYTHING}:missing", f"{EVERYTHING} has no attribute 'missing'"),
    ],
)
async def test_run_a_target_without_a_server_is_a_usage_error(target: str, message: str) -> None:
    ran = await mcptrio("run", target)
    assert ran.code == 2
    assert ran.error_line.startswith(f"mcptrio: error: {message}")


def test_the_default_port_is_documented_and_fixed() -> None:
    from mcptrio.server.running import DEFAULT_HOST, DEFAULT_PORT, run_server

    assert DEFAULT_PORT == 8000
    assert "8000" in (library.Server.run.__doc__ or "")
    # Server.run passes on only the options given: the defaults are run_server's.
    defaults = inspect.signature(run_server).parameters
    assert (defaults["host"].default, defaults["port"].default) == (DEFAULT_HOST, DEFAULT_PORT)


async def test_what_a_target_prints_while_it_loads_stays_off_the_stdio_channel(
    tmp_path: Path,
) -> None:
    (tmp_path / "chatty.py").write_text(
        "import mcptrio\nprint('loading chatty')\nserver = mcptrio.Server('chatty')\n"
    )
    # stdin is empty: the server loads, serves nothing and ends; stdout must stay clean.
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, "-m", "mcptrio", "run", "chatty.py"],
            cwd=tmp_path,
            env=mcptrio_env(),
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert done.stderr == b"loading chatty\n"
