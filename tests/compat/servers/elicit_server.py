"""Elicitation (form and URL) in the official SDK's style."""

import os

from pydantic import BaseModel, Field

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Context, MCPServer
else:
    from mcptrio.compat.mcpserver import Context, MCPServer

mcp = MCPServer("elicit-demo")


class Booking(BaseModel):
    date: str = Field(description="The date")
    guests: int = 2
    vegetarian: bool | None = None


@mcp.tool()
async def book(ctx: Context) -> str:
    """Asks for booking details."""
    answer = await ctx.elicit("When?", Booking)
    if answer.action == "accept":
        return f"booked {answer.data.date} for {answer.data.guests}"
    return answer.action


@mcp.tool()
async def login(ctx: Context) -> str:
    """Sends the user to a URL."""
    answer = await ctx.elicit_url("Log in", "https://example.com/login", "e-1")
    return answer.action


if __name__ == "__main__":
    mcp.run()
