"""The 2026 input helpers in the official SDK's style: Resolve with Elicit, Sample, ListRoots."""

import os
from typing import Annotated

from pydantic import BaseModel

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import (
        Context,
        Elicit,
        ElicitationResult,
        ListRoots,
        MCPServer,
        Resolve,
        Sample,
    )
    from mcp.types import SamplingMessage, TextContent

    def user(text: str) -> SamplingMessage:
        return SamplingMessage(role="user", content=TextContent(type="text", text=text))
else:
    from mcptrio.compat.mcpserver import (
        Context,
        Elicit,
        ElicitationResult,
        ListRoots,
        MCPServer,
        Resolve,
        Sample,
    )
    from mcptrio.protocol.types import SamplingMessage, TextContent

    def user(text: str) -> SamplingMessage:
        return SamplingMessage(role="user", content=TextContent(text=text))


mcp = MCPServer("resolve-demo")


class Seats(BaseModel):
    count: int


class Confirm(BaseModel):
    ok: bool


def ask_seats(venue: str):
    return Elicit(f"How many seats at {venue}?", Seats)


async def confirm(seats: Annotated[Seats, Resolve(ask_seats)], ctx: Context):
    return Elicit(f"Confirm {seats.count} seats?", Confirm)


def ask_model(venue: str):
    return Sample([user(f"Describe {venue}")], max_tokens=50)


def roots():
    return ListRoots()


@mcp.tool()
async def reserve(
    venue: str,
    seats: Annotated[Seats, Resolve(ask_seats)],
    answer: Annotated[ElicitationResult[Confirm], Resolve(confirm)],
) -> str:
    """Reserves seats after asking twice."""
    if answer.action != "accept":
        return f"not confirmed ({answer.action})"
    return f"{seats.count} seats at {venue}, ok={answer.data.ok}"


@mcp.tool()
async def describe(venue: str, text: Annotated[object, Resolve(ask_model)]) -> str:
    """Samples the client's model."""
    return f"{venue}: {text.content.text}"


@mcp.tool()
async def where(found: Annotated[object, Resolve(roots)]) -> list[str]:
    """Lists the client's roots."""
    return [str(root.uri) for root in found.roots]


if __name__ == "__main__":
    mcp.run()
