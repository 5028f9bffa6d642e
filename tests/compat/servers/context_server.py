"""The official SDK's Context in tools: progress, logging, ids, capabilities."""

import os

if os.environ.get("COMPAT_UNDER") == "sdk":
    from mcp.server.mcpserver import Context, MCPServer
else:
    from mcptrio.compat.mcpserver import Context, MCPServer

mcp = MCPServer("context-demo")


@mcp.tool()
async def work(steps: int, ctx: Context) -> str:
    """Reports progress."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return "done"


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Logs at every level."""
    await ctx.debug("a debug line")
    await ctx.info("an info line")
    await ctx.warning("a warning line", logger_name="demo")
    await ctx.error({"detail": "an error line"})
    await ctx.log("notice", "a notice")
    return "logged"


@mcp.tool()
def about(ctx: Context) -> dict[str, object]:
    """What the context knows."""
    caps = ctx.client_capabilities
    return {
        "request_id_is_str": isinstance(ctx.request_id, str),
        "has_capabilities": caps is not None,
        "elicitation": caps is not None and caps.elicitation is not None,
    }


@mcp.tool()
async def changed(ctx: Context) -> str:
    """Publishes list changes."""
    await ctx.notify_tools_changed()
    await ctx.notify_prompts_changed()
    await ctx.notify_resources_changed()
    await ctx.notify_resource_updated("notes://a")
    return "published"


if __name__ == "__main__":
    mcp.run()
