"""The gateway's upstream commands and its own identity: a command written as one string is a
configuration error that shows the split; a command that cannot start is said once and not
retried; a client sees the gateway's serverInfo, never an upstream's."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.client import Revisions, open_client, stdio
from mcptrio.gateway import Backoff, ConfigError, Gateway, Upstream, parse_config

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"


def test_a_whole_command_line_in_command_is_refused_with_the_split_to_write(
    tmp_path: Path,
) -> None:
    config = {"mcpServers": {"notes": {"command": "mcptrio run 'my notes.py'", "args": ["-v"]}}}
    with pytest.raises(ConfigError) as raised:
        parse_config(config, base=tmp_path)
    assert str(raised.value) == (
        "Server 'notes': \"command\" is a whole command line (\"mcptrio run 'my notes.py'\"):"
        ' give the program alone in "command" and its arguments in "args":'
        ' "command": "mcptrio", "args": ["run", "my notes.py", "-v"]'
    )


def test_a_program_whose_name_has_spaces_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "my server").write_text("#!/bin/sh\n")
    (upstream,) = parse_config({"mcpServers": {"s": {"command": "my server"}}}, base=tmp_path)
    assert upstream.target == stdio(["my server"], cwd=tmp_path)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (
            {"command": "no-such-mcp-server-anywhere"},
            "its command 'no-such-mcp-server-anywhere' is not a program on PATH",
        ),
        ({"command": "./missing.sh"}, "its command './missing.sh' is no such file"),
        ({"command": sys.executable, "cwd": "gone"}, "its folder {base}/gone does not exist"),
    ],
    ids=["not-on-path", "no-such-file", "no-such-folder"],
)
async def test_a_command_that_cannot_start_is_logged_once_and_not_retried(
    entry: dict[str, str], reason: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (upstream,) = parse_config({"mcpServers": {"notes": entry}}, base=tmp_path)
    gateway = Gateway(upstreams=[upstream], reconnect=Backoff(initial=0.01, maximum=0.01))
    caplog.set_level(logging.INFO, logger="mcptrio.gateway")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            # Ample time for dozens of retries at this backoff, were there any.
            await trio.sleep(0.3)
            nursery.cancel_scope.cancel()
    said = [record.getMessage() for record in caplog.records if record.name == "mcptrio.gateway"]
    assert said == [f"Upstream 'notes' cannot start: {reason.format(base=tmp_path)}; not retrying"]
    connection = gateway.upstreams["notes"]
    assert (connection.state, connection.connections) == ("down", 0)
    assert isinstance(connection.error, OSError)


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18", "2025-11-25", None])
async def test_clients_see_the_gateways_own_server_info_not_the_upstreams(
    revision: str | None,
) -> None:
    upstream = stdio([sys.executable, EVERYTHING])
    gateway = Gateway(upstreams=[Upstream(name="everything", target=upstream)])
    revisions = Revisions() if revision is None else Revisions(protocol_version=revision)
    with trio.fail_after(30):
        async with open_client(upstream) as direct:
            upstream_info = direct.server_info
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            assert gateway.upstreams["everything"].state == "up"
            base = await nursery.start(gateway.serve_http)
            async with open_client(f"{base}/mcp", revisions=revisions) as client:
                assert client.protocol_version == (revision or client.protocol_version)
                info = client.server_info
                tools = {tool.name async for tool in client.iter_tools()}
            nursery.cancel_scope.cancel()
    assert "everything_test_simple_text" in tools  # the upstream is really behind it
    assert upstream_info.name != "mcptrio-gateway"
    assert (info.name, info.version) == ("mcptrio-gateway", mcptrio.__version__)
