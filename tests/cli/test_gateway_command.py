"""``mcptrio gateway CONFIG``: a gateway over the servers of an ``mcpServers`` file, served over
HTTP, reached with ``mcptrio list`` and ``mcptrio call``; a bad file is one line and exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import trio
from cli_runner import EVERYTHING, announced_url, mcptrio, mcptrio_env, served
from test_run_serving_options import discover


def write_config(folder: Path) -> Path:
    config = folder / "gateway.json"
    servers = {"everything": {"command": sys.executable, "args": [str(EVERYTHING)]}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return config


async def test_the_gateway_serves_its_upstreams_tools_namespaced(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    async with served(config, "--port", "0", command="gateway") as url:
        listed = await mcptrio("list", url)
        assert listed.code == 0, listed.stderr
        names = {tool["name"] for tool in listed.json()["tools"]}
        assert "everything_test_simple_text" in names
        called = await mcptrio("call", "--json", url, "everything_test_simple_text")
        assert called.code == 0, called.stderr
        assert called.json()["content"][0]["type"] == "text"


async def test_a_config_that_is_not_json_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "gateway.json"
    config.write_text("{not json", encoding="utf-8")
    ran = await mcptrio("gateway", config, "--port", "0")
    assert ran.code == 2
    assert ran.error_line.startswith("mcptrio: error: ")
    assert "gateway.json" in ran.error_line


async def test_a_missing_config_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    ran = await mcptrio("gateway", tmp_path / "nowhere.json")
    assert ran.code == 2
    assert "nowhere.json" in ran.error_line


async def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    ran = await mcptrio("gateway", write_config(tmp_path), "--port", "70000")
    assert ran.code == 2
    assert "--port 70000" in ran.error_line


async def test_the_gateway_takes_the_serving_options_and_stops_on_sigterm(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    command = [sys.executable, "-m", "mcptrio", "gateway", str(config), "--port", "0"]
    options = ["--path", "/gateway", "--allow-host", "gateway.example.com"]
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*command, *options],
            env=mcptrio_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        try:
            received = b""
            while (url := announced_url(received)) is None:
                chunk = await process.stderr.receive_some()
                assert chunk, received.decode()
                received += chunk
            assert url.endswith("/gateway")
            allowed = await discover(url, host="gateway.example.com")
            refused = await discover(url, host="elsewhere.example.com")
            process.send_signal(signal.SIGTERM)
            with trio.fail_after(10):
                assert await process.wait() == 0
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()
    assert allowed[0] == 200
    assert refused[0] == 403


async def test_the_gateway_takes_auth_dev_and_call_login_uses_it(tmp_path: Path) -> None:
    from programs import free_port
    from test_login import User

    user = User(tmp_path)
    port = str(free_port())
    async with served(
        write_config(tmp_path), "--port", port, "--auth", "dev", command="gateway"
    ) as url:
        assert url == f"http://127.0.0.1:{port}/mcp"
        status, _, _ = await discover(url)
        assert status == 401
        called = await user.mcptrio("call", url, "everything_test_simple_text", "--login")
        assert called.code == 0, called.stderr
