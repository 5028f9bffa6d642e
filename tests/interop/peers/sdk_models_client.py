"""The official Python SDK's ``Client`` calling tests/interop/peers/mixed_models_server.py.

Run by tests/interop/test_sdk_client_pydantic.py as ``python sdk_models_client.py MODE COMMAND...``
(``MODE``: ``legacy`` for the handshake era, ``2026-07-28`` for the stateless one). The SDK
validates each ``structuredContent`` against the tool's ``outputSchema``; it prints one JSON
object with what it saw.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

GOOD = {
    "pet": {"name": "Rex ", "age": 3},
    "where": {"x": 1, "y": 2},
    "label": {"text": "front"},
    "extra": {"note": "calm"},
    "rooms": 2,
}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main(mode: str, command: list[str]) -> None:
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    seen: dict[str, Any] = {}
    async with Client(server, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
        seen["protocol_version"] = client.protocol_version
        tools = await client.list_tools()
        seen["tools"] = {
            tool.name: {"input": tool.input_schema, "output": tool.output_schema}
            for tool in tools.tools
        }
        good = await client.call_tool("admit", GOOD)
        seen["admit"] = {"structured": good.structured_content, "text": text_of(good)}
        bad = await client.call_tool("admit", {**GOOD, "pet": {"name": "Rex", "age": 99}})
        seen["refused"] = {"is_error": bad.is_error, "text": text_of(bad)}
        rooms = await client.call_tool("admit", {**GOOD, "rooms": 0})
        seen["rooms"] = {"is_error": rooms.is_error, "text": text_of(rooms)}
        ages = await client.call_tool("ages", {"pets": [{"name": "A", "age": 1}]})
        seen["ages"] = ages.structured_content
        spot = await client.call_tool("spot", {"x": 4, "y": 5})
        seen["spot"] = spot.structured_content
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:])
