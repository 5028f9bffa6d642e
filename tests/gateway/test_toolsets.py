"""Toolsets, against a real upstream (the everything server, a stdio subprocess) and a client
over Streamable HTTP in either era: a client switches its toolsets with the gateway's tools, is
told its list changed, sees and may call only what its toolsets show; another client keeps its
own toolsets."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

from mcptrio.client import Client, NotificationCallbacks, Revisions, open_client, stdio
from mcptrio.gateway import ConfigError, Gateway, Toolset, Upstream, parse_gateway_options
from mcptrio.gateway.toolsets import tool_tags
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.types import Tool, ToolAnnotations

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": Revisions()}
OWN = {"gateway_list_toolsets", "gateway_enable_toolset", "gateway_disable_toolset"}

TOOLSETS = [
    Toolset(name="everything", description="All of it", upstreams=["everything"]),
    Toolset(name="notes", tools=["everything_*note*"]),
    Toolset(name="read-only", tags=["read-only"]),
]


async def names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


class Changes:
    """Counts the client's tools list-changed notifications, and waits for the next one."""

    def __init__(self) -> None:
        self.count = 0
        self._event = trio.Event()

    def __call__(self, kind: str) -> None:
        if kind == "tools":
            self.count += 1
            self._event.set()
            self._event = trio.Event()

    async def next(self) -> None:
        await self._event.wait()


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_client_switches_its_toolsets_and_is_told_its_list_changed(era: str) -> None:
    gateway = Gateway(
        upstreams=[Upstream(name="everything", target=stdio([sys.executable, EVERYTHING]))],
        toolsets=TOOLSETS,
    )
    changes = Changes()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            base = await nursery.start(gateway.serve_http)
            async with open_client(
                f"{base}/mcp",
                revisions=ERAS[era],
                notifications=NotificationCallbacks(on_list_changed=changes),
            ) as client:
                assert await names(client) == OWN
                with pytest.raises(InvalidParams) as hidden:
                    await client.call_tool("everything_describe", {"values": [1, 2]})
                assert str(hidden.value) == (
                    "Tool 'everything_describe' is in no enabled toolset;"
                    " gateway_enable_toolset one of: 'everything', 'read-only'"
                )

                told = changes.count
                result = await client.call_tool("gateway_enable_toolset", {"name": "read-only"})
                assert not result.is_error
                await changes.next()
                assert changes.count > told
                assert await names(client) == OWN | {"everything_describe"}
                described = await client.call_tool("everything_describe", {"values": [1, 3]})
                assert described.structured_content == {"count": 2, "mean": 2.0, "stdev": 1.0}

                await client.call_tool("gateway_enable_toolset", {"name": "notes"})
                await changes.next()
                assert await names(client) == OWN | {"everything_describe", "everything_add_note"}

                listed = await client.call_tool("gateway_list_toolsets", {})
                assert listed.structured_content is not None
                by_name = {t["name"]: t for t in listed.structured_content["toolsets"]}
                assert [by_name[n]["enabled"] for n in ("everything", "notes", "read-only")] == [
                    False,
                    True,
                    True,
                ]
                assert by_name["notes"]["tools"] == ["everything_add_note"]
                assert by_name["everything"]["description"] == "All of it"
                assert len(by_name["everything"]["tools"]) > 10

                await client.call_tool("gateway_disable_toolset", {"name": "read-only"})
                await changes.next()
                assert await names(client) == OWN | {"everything_add_note"}

                if era == "handshake":
                    # Another session keeps its own toolsets, and hears nothing of these.
                    async with open_client(f"{base}/mcp", revisions=ERAS[era]) as other:
                        assert await names(other) == OWN
                        await other.call_tool("gateway_enable_toolset", {"name": "everything"})
                        assert "everything_countdown" in await names(other)
                    assert "everything_countdown" not in await names(client)
            nursery.cancel_scope.cancel()


async def test_enabling_an_unknown_toolset_names_the_known_ones() -> None:
    gateway = Gateway(toolsets=TOOLSETS)
    with trio.fail_after(10):
        async with open_client(gateway) as client:
            with pytest.raises(InvalidParams) as raised:
                await client.call_tool("gateway_enable_toolset", {"name": "mail"})
    assert str(raised.value) == (
        "No toolset 'mail' (the toolsets: 'everything', 'notes', 'read-only')"
    )


def test_a_tools_tags_are_its_meta_tags_fastmcps_and_its_true_hints() -> None:
    tool = Tool(
        name="t",
        input_schema={"type": "object"},
        meta={"tags": ["mail", 3], "_fastmcp": {"tags": ["inbox"]}},
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False),
    )
    assert tool_tags(tool) == {"mail", "inbox", "read-only"}


@pytest.mark.parametrize(
    ("toolsets", "message"),
    [
        ({"mail": {"upstreams": ["inbox"]}}, "Toolset 'mail': no server 'inbox' in mcpServers"),
        ({"mail": {"tools": "mail_*"}}, "Toolset 'mail': 'tools' must be a list of strings"),
        (
            {"mail": {"tag": ["x"]}},
            "Toolset 'mail': unknown key(s) 'tag' (known: description, enabled, tags, tools,"
            " upstreams)",
        ),
    ],
    ids=["unknown-upstream", "tools-not-list", "unknown-key"],
)
def test_a_toolset_that_cannot_be_right_is_one_line_naming_it(
    toolsets: Any, message: str, tmp_path: Path
) -> None:
    config = {
        "mcpServers": {"everything": {"command": sys.executable, "args": [str(EVERYTHING)]}},
        "toolsets": toolsets,
    }
    with pytest.raises(ConfigError) as raised:
        parse_gateway_options(config, base=tmp_path)
    assert str(raised.value) == message


def test_toolsets_are_read_from_the_configuration(tmp_path: Path) -> None:
    config = {
        "mcpServers": {"everything": {"command": sys.executable, "args": [str(EVERYTHING)]}},
        "toolsets": {"notes": {"tools": ["everything_*note*"], "enabled": True}},
    }
    options = parse_gateway_options(config, base=tmp_path)
    assert options["toolsets"] == [
        Toolset(name="notes", tools=("everything_*note*",), enabled=True)
    ]
