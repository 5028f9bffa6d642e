"""Prompts in the official SDK's style: strings, messages, media, dicts, missing arguments."""

import os
from typing import Annotated

from pydantic import Field

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import AssistantMessage, Image, MCPServer, UserMessage
else:
    from mcptrio.compat.mcpserver import AssistantMessage, Image, MCPServer, UserMessage

mcp = MCPServer("prompts-demo")


@mcp.prompt()
def review(code: str, language: Annotated[str, Field(description="The language")] = "python"):
    """Review some code."""
    return f"Please review this {language}:\n{code}"


@mcp.prompt(title="Conversation")
async def debug(error: str) -> list:
    return [
        UserMessage(f"I see: {error}"),
        AssistantMessage("Let me look."),
        UserMessage(content="Thanks"),
    ]


@mcp.prompt()
def picture() -> list:
    """An image prompt."""
    return [UserMessage(Image(data=b"\x89PNG", format="png")), "Describe it."]


@mcp.prompt(name="as-dict")
def as_dict(topic: str):
    return {"role": "assistant", "content": f"About {topic}"}


@mcp.prompt()
def count(times: int) -> str:
    """Validated arguments."""
    return "x" * times


@mcp.prompt()
def failing() -> str:
    raise ValueError("prompt failed")


if __name__ == "__main__":
    mcp.run()
