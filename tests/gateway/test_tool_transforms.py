"""Tool transformation in the gateway's configuration, against a real upstream (the everything
server as a stdio subprocess): renamed, re-described, hidden, arguments fixed; and the one-line
errors of a configuration that cannot be right."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcptrio.client import open_client
from mcptrio.gateway import ConfigError, Gateway, parse_config
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.types import TextContent

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"


def config(tools: dict[str, Any]) -> dict[str, Any]:
    return {
        "mcpServers": {
            "everything": {"command": sys.executable, "args": [str(EVERYTHING)], "tools": tools}
        }
    }


async def test_each_transformation_is_what_the_client_sees_and_calls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    upstreams = parse_config(
        config(
            {
                "add_note": {
                    "name": "jot",
                    "description": "Write in the inbox.",
                    "fixed": {"name": "inbox"},
                },
                "test_error_handling": {"hidden": True},
                "countdown": {"fixed": {"seconds": 600}},
                "describe": {"fixed": {"no_such_argument": 1}},
                "no_such_tool": {"description": "nothing"},
            }
        ),
        base=tmp_path,
    )
    caplog.set_level(logging.WARNING, logger="mcptrio.gateway")
    gateway = Gateway(upstreams=upstreams)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_client(gateway) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                jot = tools["jot"]
                assert jot.description == "Write in the inbox."
                assert jot.title == "Add a note"
                assert set(jot.input_schema["properties"]) == {"text"}
                assert jot.input_schema["required"] == ["text"]
                assert "everything_add_note" not in tools
                # Hidden; a fixed value its schema refuses; a fixed argument it does not have.
                assert "everything_test_error_handling" not in tools
                assert "everything_countdown" not in tools
                assert "everything_describe" not in tools
                assert "everything_test_simple_text" in tools

                result = await client.call_tool("jot", {"text": "hello", "name": "elsewhere"})
                assert result.content == [TextContent(text="Saved note 'inbox'")]
                with pytest.raises(InvalidParams, match="Unknown tool"):
                    await client.call_tool("everything_test_error_handling", {})
            nursery.cancel_scope.cancel()
    warnings = [r.getMessage() for r in caplog.records]
    assert (
        "Upstream 'everything', tool 'countdown': the fixed argument 'seconds': 600 is greater"
        " than the maximum of 60; the tool is left out"
    ) in warnings
    assert (
        "Upstream 'everything', tool 'describe': the fixed argument 'no_such_argument' is not"
        " one of its arguments; the tool is left out"
    ) in warnings
    assert "Upstream 'everything' lists no tool 'no_such_tool' to transform or rename" in warnings


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            {"add_note": {"rename": "jot"}},
            "Server 'everything': tool 'add_note': unknown key(s) 'rename'"
            " (known: description, fixed, hidden, name)",
        ),
        (
            {"add_note": {"hidden": "yes"}},
            "Server 'everything': tool 'add_note': 'hidden' must be a boolean",
        ),
        (
            {"add_note": {"fixed": ["name"]}},
            "Server 'everything': tool 'add_note': 'fixed' must be a JSON object",
        ),
        (["add_note"], "Server 'everything': 'tools' must be an object of tool names"),
    ],
    ids=["unknown-key", "hidden-not-boolean", "fixed-not-object", "tools-not-object"],
)
def test_a_transformation_that_cannot_be_right_is_one_line_naming_server_and_tool(
    tools: Any, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(config(tools), base=tmp_path)
    assert str(raised.value) == message


def test_a_transformation_renaming_into_another_servers_namespace_is_refused(
    tmp_path: Path,
) -> None:
    entry = config({"add_note": {"name": "notes_add"}})
    entry["mcpServers"]["notes"] = {"command": sys.executable, "args": [str(EVERYTHING)]}
    with pytest.raises(ConfigError) as raised:
        parse_config(entry, base=tmp_path)
    assert str(raised.value) == (
        "Upstream 'everything' renames 'add_note' to 'notes_add', a name in the namespace"
        " 'notes' of upstream 'notes'"
    )
