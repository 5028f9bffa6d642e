"""Tools in the official SDK's style: every kind of argument and result, errors, add/remove."""

import os
from typing import Annotated, Literal, TypedDict

from pydantic import BaseModel, Field

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Icon, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
else:
    from mcptrio.compat.mcpserver import Icon, MCPServer, ToolAnnotations
    from mcptrio.compat.mcpserver.exceptions import ToolError

mcp = MCPServer("tools-demo", instructions="Arithmetic and friends.", version="1.0")


class Point(BaseModel):
    x: int
    y: int = Field(0, description="The vertical axis")


class Stats(TypedDict):
    count: int
    mean: float


@mcp.tool()
def add(a: int, b: int = 2) -> int:
    """Add two integers."""
    return a + b


@mcp.tool(title="Shout", annotations=ToolAnnotations(read_only_hint=True))
async def shout(text: Annotated[str, Field(description="What to shout", max_length=20)]) -> str:
    """Upper-case the text."""
    return text.upper()


@mcp.tool()
def move(point: Point, by: int = 1) -> Point:
    """Move a point."""
    return Point(x=point.x + by, y=point.y + by)


@mcp.tool()
def stats(values: list[float]) -> Stats:
    """Count and mean."""
    return {"count": len(values), "mean": sum(values) / len(values)}


@mcp.tool()
def tally(words: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return counts


@mcp.tool()
def pick(mode: Literal["fast", "slow"] = "fast", label: str | None = None) -> list[str]:
    """Optional and literal arguments."""
    return [mode, label or "none"]


@mcp.tool(structured_output=False)
def plain(n: int) -> dict[str, int]:
    """Unstructured on purpose."""
    return {"n": n}


@mcp.tool()
def untyped(thing, times: int = 1):
    return str(thing) * times


@mcp.tool(icons=[Icon(src="https://example.com/i.png", mime_type="image/png")], meta={"k": 1})
def refuse(reason: str) -> str:
    """Fails on purpose."""
    raise ToolError(f"refused: {reason}")


@mcp.tool()
def crash() -> str:
    """Crashes."""
    raise RuntimeError("secret detail")


def later(n: int) -> int:
    """Added with add_tool."""
    return n * 10


def gone() -> str:
    return "never listed"


mcp.add_tool(later, name="times_ten")
mcp.add_tool(gone)
mcp.remove_tool("gone")

if __name__ == "__main__":
    mcp.run()
