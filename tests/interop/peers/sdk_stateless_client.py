"""The official Python SDK's ``Client`` against an mcptrio server, in the stateless era.

Run by tests/interop/test_sdk_client_stateless.py::

    python sdk_stateless_client.py MODE stdio COMMAND...     # the server over stdio
    python sdk_stateless_client.py MODE URL                  # the server over Streamable HTTP

``MODE`` is the SDK's ``mode=``: ``auto`` (probe with server/discover, fall back to initialize)
or a pinned revision. It exercises the features of the issue's Done-when list and prints one
JSON object with what it saw.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="test"
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    return types.ElicitResult(action="accept", content={"name": "Alice"})


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main(mode: str, target: list[str]) -> None:
    server: Any
    if target[0] == "stdio":
        # The SDK gives the server a minimal environment: pass on where mcptrio is.
        env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        server = StdioServerParameters(command=target[1], args=target[2:], env=env)
    else:
        server = target[0]
    seen: dict[str, Any] = {}
    async with Client(
        server,
        mode=mode,  # type: ignore[arg-type]
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        read_timeout_seconds=10,
    ) as client:
        seen["protocol_version"] = client.protocol_version
        seen["server_name"] = client.server_info.name if client.server_info else None
        tools = await client.list_tools()
        seen["tools"] = sorted(tool.name for tool in tools.tools)
        described = await client.call_tool("describe", {"values": [1, 2, 3]})
        seen["structured"] = described.structured_content
        resource = await client.read_resource("test://static-text")
        seen["resource"] = getattr(resource.contents[0], "text", None)
        prompt = await client.get_prompt("test_simple_prompt")
        seen["prompt_messages"] = len(prompt.messages)
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": ""},
        )
        seen["completion"] = completion.completion.values
        elicited = await client.call_tool("test_input_required_result_elicitation", {})
        seen["elicitation"] = text_of(elicited)
        sampled = await client.call_tool("test_input_required_result_sampling", {})
        seen["sampling"] = text_of(sampled)
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("test_trigger_tool_change", {})
            with anyio.fail_after(5):
                event = await subscription.__anext__()
            seen["listen_event"] = type(event).__name__
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("countdown", {"seconds": 30})
        seen["cancelled"] = scope.cancelled_caught
        after = await client.call_tool("test_simple_text", {})
        seen["after_cancel"] = text_of(after)
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:])
