"""Images, audio and content blocks from tools, in the official SDK's style."""

import os

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Audio, Image, MCPServer
else:
    from mcptrio.compat.mcpserver import Audio, Image, MCPServer

mcp = MCPServer("media-demo")


@mcp.tool()
def dot() -> Image:
    """A tiny image."""
    return Image(data=b"\x89PNG\r\n", format="png")


@mcp.tool()
def beep() -> Audio:
    return Audio(data=b"RIFF", format="wav")


@mcp.tool()
def both(caption: str) -> list:
    """Text and an image."""
    return [caption, Image(data=b"GIF89a", format="gif")]


@mcp.tool()
def nothing() -> None:
    return None


if __name__ == "__main__":
    mcp.run()
