"""Resources and templates in the official SDK's style, read directly and from a tool."""

import os

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
else:
    from mcptrio.compat.mcpserver import Context, MCPServer
    from mcptrio.compat.mcpserver.exceptions import ResourceError, ResourceNotFoundError

mcp = MCPServer("resources-demo")
NOTES = {"a": "first note", "b": "second note"}


@mcp.resource("config://app", title="App config")
def config() -> dict[str, object]:
    """The app's settings."""
    return {"debug": False, "level": 3}


@mcp.resource("text://hello", mime_type="text/markdown")
def hello() -> str:
    return "# Hello"


@mcp.resource("data://blob")
def blob() -> bytes:
    """Some bytes."""
    return b"\x00\x01\x02"


@mcp.resource("notes://{name}")
async def note(name: str, ctx: Context) -> str:
    """A note by name."""
    if name not in NOTES:
        raise ResourceNotFoundError(f"No note {name!r}")
    return NOTES[name]


@mcp.resource("grid://{row}/{col}", mime_type="application/json")
def cell(row: int, col: int) -> list[int]:
    return [row, col, row * col]


@mcp.resource("broken://{what}")
def broken(what: str) -> str:
    if what == "foreseen":
        raise ResourceError("broken on purpose")
    raise RuntimeError("secret detail")


@mcp.tool()
async def read_note(name: str, ctx: Context) -> str:
    """Read a note through the context."""
    contents = list(await ctx.read_resource(f"notes://{name}"))
    return f"{contents[0].content} ({contents[0].mime_type})"


if __name__ == "__main__":
    mcp.run()
