"""Every sample of examples/multiplexed/ runs as its README says, and serves what it says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio
from client.real_servers import EVERYTHING_SERVER, NODE_BIN, require_interop, require_module
from processes import stop_process

import mcptrio
from mcptrio.client import stdio
from mcptrio.protocol.types import TextContent

require_interop(EVERYTHING_SERVER, NODE_BIN / "node")
require_module("mcp")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "multiplexed"


def commands_in_readme() -> list[str]:
    return re.findall(r"^    (python .+)$", (SAMPLES / "README.md").read_text(), re.M)


def test_the_readme_names_one_command_per_sample() -> None:
    assert commands_in_readme() == [
        "python examples/multiplexed/by_path.py",
        "python examples/multiplexed/mounted.py",
        "python examples/multiplexed/gateway_demo.py",
        "python -m mcptrio.gateway examples/multiplexed/gateway.json",
    ]
    for name in ("by_path.py", "mounted.py", "gateway_demo.py"):
        docstring = (SAMPLES / name).read_text()
        assert f"python examples/multiplexed/{name}" in docstring


@contextmanager
def running(
    *args: str, lines: int = 0, until: str = "", stream: str = "stdout"
) -> Iterator[list[str]]:
    """Run a sample from the checkout's root on free ports; yield the first ``lines`` lines it
    printed, or (``until``) those up to the first that holds ``until``."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        # "python" in gateway.json is this one, which has the official SDK.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    process = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # Reading blocks: a process that prints nothing within the deadline is killed.
    watchdog = threading.Timer(30, process.kill)
    watchdog.start()
    try:
        out = process.stdout if stream == "stdout" else process.stderr
        assert out is not None
        printed = [out.readline().decode().strip() for _ in range(lines)]
        while until and not (printed and until in printed[-1]) and (line := out.readline()):
            printed.append(line.decode().strip())
        watchdog.cancel()
        assert all(printed), process.stderr.read().decode() if process.stderr else ""
        yield printed
    finally:
        watchdog.cancel()
        stop_process(process)


def url_in(line: str) -> str:
    return line.rsplit(" ", 1)[1]


def text(result: mcptrio.protocol.types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


async def test_by_path_serves_each_server_at_its_own_path() -> None:
    with running("examples/multiplexed/by_path.py", "--port", "0", lines=2) as printed:
        with trio.fail_after(20):
            async with mcptrio.open_client(url_in(printed[0])) as weather:
                assert weather.server_info.name == "weather"
                assert text(await weather.call_tool("forecast", {"city": "Oslo"})) == "Oslo: snow"
            async with mcptrio.open_client(url_in(printed[1])) as notes:
                assert notes.server_info.name == "notes"
                assert [t.name for t in (await notes.list_tools()).tools] == ["add_note"]


async def test_mounted_merges_the_servers_into_one() -> None:
    with running("examples/multiplexed/mounted.py", "--port", "0", lines=1) as printed:
        with trio.fail_after(20):
            async with mcptrio.open_client(url_in(printed[0])) as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                assert names == ["notes_add_note", "ping", "weather_forecast"]
                result = await client.call_tool("weather_forecast", {"city": "Lyon"})
                assert text(result) == "Lyon: sun"
                read = await client.read_resource("notes://welcome")
                assert read.contents[0].text == "Hello from the notes server."


async def test_the_gateway_demo_fronts_three_servers_over_streamable_http() -> None:
    args = ("examples/multiplexed/gateway_demo.py", "--port", "0", "--notes-port", "0")
    with running(*args, lines=4) as printed:
        assert printed[1:] == ["everything: up", "sdk: up", "notes: up"]
        with trio.fail_after(30):
            async with mcptrio.open_client(url_in(printed[0])) as client:
                names = {t.name async for t in client.iter_tools()}
                assert {"everything_echo", "sdk_add", "remember"} <= names
                assert not any(name.startswith("everything_toggle") for name in names)
                echo = await client.call_tool("everything_echo", {"message": "hi"})
                assert text(echo) == "Echo: hi"
                assert text(await client.call_tool("sdk_add", {"a": 1, "b": 2})) == "3"
                saved = await client.call_tool("remember", {"name": "x", "text": "y"})
                assert text(saved) == "saved x"


async def test_python_m_mcptrio_gateway_serves_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "gateway.json"
    sdk = {"command": "python", "args": [str(SAMPLES / "sdk_server.py")]}
    config.write_text(json.dumps({"mcpServers": {"sdk": sdk}}))
    args = ("-m", "mcptrio.gateway", str(config), "--port", "0")
    # It logs each upstream's connection, then says where it serves. (A loaded machine may
    # start the SDK's server too slowly for the era probe: the client's log of the late answer
    # then comes first.)
    with running(*args, until="serving at", stream="stderr") as printed:
        assert any("Upstream 'sdk' connected" in line for line in printed[:-1]), printed
        with trio.fail_after(20):
            async with mcptrio.open_client(url_in(printed[-1])) as client:
                assert text(await client.call_tool("sdk_add", {"a": 2, "b": 2})) == "4"


async def test_python_m_mcptrio_gateway_serves_over_stdio(tmp_path: Path) -> None:
    config = tmp_path / "gateway.json"
    sdk = {"command": sys.executable, "args": [str(SAMPLES / "sdk_server.py")]}
    config.write_text(json.dumps({"mcpServers": {"sdk": sdk}}))
    command = [sys.executable, "-m", "mcptrio.gateway", str(config), "--stdio"]
    target = stdio(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    with trio.fail_after(30):
        async with mcptrio.open_client(target) as client:
            assert client.server_info.name == "mcptrio-gateway"
            assert text(await client.call_tool("sdk_add", {"a": 20, "b": 22})) == "42"
