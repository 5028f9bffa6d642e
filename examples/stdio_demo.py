"""Spawn the demo server over stdio, exercise it with a client, and print what happened.

python examples/stdio_demo.py
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import trio

import mcptrio

SERVER = Path(__file__).with_name("demo_server.py")


async def main() -> None:
    async with mcptrio.open_client([sys.executable, str(SERVER)]) as client:
        info = client.server_info
        print(f"connected to {info.name} {info.version} over stdio")
        print(f"  negotiated protocol revision {client.protocol_version}")
        print(f"  instructions: {client.instructions}")

        tools = (await client.list_tools()).tools
        print(f"  {len(tools)} tools: {', '.join(t.name for t in tools)}")

        result = await client.call_tool("add", {"a": 2, "b": 40})
        print(f"add(2, 40) -> {result.content[0].text}")  # type: ignore[union-attr]

        result = await client.call_tool("shout", {"text": "trio", "times": 3})
        print(f"shout('trio', 3) -> {result.content[0].text}")  # type: ignore[union-attr]

        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            print(f"  progress {progress:g}/{total:g}: {message}")

        result = await client.call_tool("countdown", {"start": 3}, on_progress=on_progress)
        print(f"countdown(3) -> {result.content[0].text}")  # type: ignore[union-attr]

        result = await client.call_tool("add", {"a": "two", "b": 40})
        print(f"add('two', 40) -> error result: {result.content[0].text}")  # type: ignore[union-attr]

        try:
            await client.call_tool("divide", {"a": 1})
        except mcptrio.McpError as exc:
            print(f"divide -> protocol error {exc.code}: {exc.message}")

        with trio.move_on_after(0.2) as scope:
            await client.call_tool("countdown", {"start": 100, "pause": 1.0})
        if scope.cancelled_caught:
            print("countdown(100) -> cancelled by the client after 0.2 s (the server was told)")

        await client.ping()
        print("ping -> pong")
    print("server shut down; done")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s", stream=sys.stdout)
    # The server's stderr is forwarded to this logger line by line; show it.
    logging.getLogger("mcptrio.stdio.server_stderr").setLevel(logging.INFO)
    trio.run(main)
