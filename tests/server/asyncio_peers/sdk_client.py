"""The official Python SDK's ``Client`` calling asyncio_server.py, run by
tests/server/test_asyncio_handlers.py as ``python sdk_client.py MODE COMMAND...`` (``legacy``
for the handshake era, ``2026-07-28`` for the stateless one); prints one JSON object with what it
saw."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main(mode: str, command: list[str]) -> None:
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    seen: dict[str, Any] = {}
    async with Client(server, mode=mode, read_timeout_seconds=20) as client:  # type: ignore[arg-type]
        seen["protocol_version"] = client.protocol_version
        fetched = await client.call_tool("fetch", {"path": "hello"})
        seen["fetch"] = {"is_error": fetched.is_error, "text": text_of(fetched)}
        cats = await client.call_tool("pets", {"species": "cat"})
        seen["pets"] = {"is_error": cats.is_error, "texts": [c.text for c in cats.content]}
        missing = await client.call_tool("fetch", {"path": "missing"})
        seen["missing"] = {"is_error": missing.is_error, "text": text_of(missing)}
        read = await client.read_resource("pets://dog")
        seen["resource"] = [getattr(c, "text", None) for c in read.contents]
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        seen["prompt"] = [getattr(m.content, "text", None) for m in prompt.messages]
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:])
