"""The official Python SDK's ``Client`` through an mcptrio gateway fronting server-everything
(namespace ``everything``) and an official-SDK server (namespace ``sdk``).

    python sdk_gateway_client.py MODE URL

``MODE`` is the SDK's ``mode=`` (``auto`` probes the stateless era). Prints one JSON object with
what it saw; the test (tests/gateway/test_gateway_real_upstreams.py) checks it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import types
from mcp.client.client import Client


async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    return types.ElicitResult(
        action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7}
    )


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main(mode: str, url: str) -> None:
    seen: dict[str, Any] = {}
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(
        url,
        mode=mode,
        elicitation_callback=elicitation,
        read_timeout_seconds=30,  # type: ignore[arg-type]
    ) as client:
        seen["protocol_version"] = client.protocol_version
        seen["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
        echo = await client.call_tool("everything_echo", {"message": "through"})
        seen["echo"] = text_of(echo)
        added = await client.call_tool("sdk_add", {"a": 2, "b": 40})
        seen["add"] = text_of(added)
        await client.call_tool("sdk_countdown", {"start": 3}, progress_callback=on_progress)
        seen["progress"] = progress
        read = await client.read_resource("notes://today")
        seen["read"] = read.contents[0].text
        prompt = await client.get_prompt("everything_args-prompt", {"city": "Lyon"})
        seen["prompt"] = prompt.messages[0].content.text
        try:
            elicited = await client.call_tool("everything_trigger-elicitation-request", {})
            seen["elicitation"] = text_of(elicited)
        except Exception as exc:  # a refusal is reported, for the test to check
            seen["elicitation_error"] = str(exc)
        try:
            await client.call_tool("sdk_slow", {}, read_timeout_seconds=1)
            seen["slow"] = "finished"
        except Exception as exc:
            seen["slow"] = type(exc).__name__
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
