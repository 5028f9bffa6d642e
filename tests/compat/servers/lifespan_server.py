"""A lifespan, server metadata, icons and a completion handler, in the official SDK's style."""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Context, Icon, MCPServer
    from mcp.types import Completion, PromptReference, ResourceTemplateReference
else:
    from mcptrio.compat.mcpserver import (
        Completion,
        Context,
        Icon,
        MCPServer,
        PromptReference,
        ResourceTemplateReference,
    )


@dataclass
class Database:
    rows: dict[str, str]


@asynccontextmanager
async def lifespan(server: "MCPServer") -> AsyncIterator[Database]:
    yield Database(rows={"server": server.name})


mcp = MCPServer(
    "lifespan-demo",
    title="Lifespan demo",
    description="Shows a lifespan",
    instructions="Use lookup.",
    website_url="https://example.com",
    icons=[Icon(src="https://example.com/icon.svg", mime_type="image/svg+xml")],
    version="2.0.0",
    lifespan=lifespan,
)

LANGUAGES = ["python", "perl", "rust"]


@mcp.tool()
def lookup(key: str, ctx: Context) -> str:
    """Reads the lifespan's database."""
    return ctx.request_context.lifespan_context.rows.get(key, "missing")


@mcp.prompt()
def greet(language: str) -> str:
    return f"Hello in {language}"


@mcp.resource("code://{language}/sample")
def sample(language: str) -> str:
    return f"sample in {language}"


@mcp.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and argument.name == "language":
        return Completion(values=[v for v in LANGUAGES if v.startswith(argument.value)])
    if isinstance(ref, ResourceTemplateReference):
        return Completion(values=["python"], total=1, has_more=False)
    return None


if __name__ == "__main__":
    mcp.run()
