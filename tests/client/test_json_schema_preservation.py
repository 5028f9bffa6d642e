"""A tool's JSON Schema 2020-12 ``inputSchema`` reaches the client's code exactly as listed.

The conformance suite's ``json-schema-2020-12-preservation`` (0.2) checks this by having the
client hand the schema back; these tests hold the client to it on every revision that has
tools, with the keywords a typed model would be tempted to drop or rewrite.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import trio
from eras import only

import mcptrio
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import TextContent

from conftest import open_recorded_client
from schema_validation import validate_exchange

RICH_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def schema_server() -> mcptrio.Server:
    server = mcptrio.Server("schemas")

    @server.tool(input_schema=copy.deepcopy(RICH_SCHEMA))
    def contact(phone: str | None = None, email: str | None = None) -> str:
        """A tool whose inputSchema uses 2020-12 keywords."""
        return phone or email or ""

    @server.tool()
    def echo_schema(schema: dict[str, Any]) -> str:
        """Answers with the schema it was given."""
        return json.dumps(schema)

    return server


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_listed_input_schema_keeps_every_2020_12_keyword(revision: str) -> None:
    with trio.fail_after(10):
        async with open_recorded_client(schema_server(), revisions=only(revision)) as (
            client,
            wire,
            _,
        ):
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["contact"].input_schema == RICH_SCHEMA
    # Same keys in the same order: nothing added, dropped or renamed (``$ref`` not resolved).
    assert json.dumps(tools["contact"].input_schema) == json.dumps(RICH_SCHEMA)
    assert validate_exchange(wire.client_to_server, wire.server_to_client, revision) > 0


async def test_input_schema_sent_back_as_an_argument_arrives_unchanged() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(schema_server()) as (client, _wire, _session):
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool(
                "echo_schema", {"schema": tools["contact"].input_schema}
            )
    assert result.is_error is not True
    [block] = result.content
    assert isinstance(block, TextContent)
    assert json.loads(block.text) == RICH_SCHEMA
