"""The official Python SDK's ``Client`` (mcp 2.3.0) reading MCP Apps metadata from a server.

Run by tests/interop/test_sdk_apps_differential.py::

    python sdk_apps_client.py MODE APPS URL   # the mcptrio sample over Streamable HTTP
    python sdk_apps_client.py MODE APPS sdk   # the same server on mcp.server.apps, served
                                              # over Streamable HTTP (uvicorn) in this process

``MODE`` is the SDK's ``mode=`` (``legacy``: the handshake era; ``2026-07-28``: stateless);
``APPS`` is ``apps`` to declare the extension (with ``text/html;profile=mcp-app``) or ``plain``.
Prints one JSON object: the declared extensions, each tool's name, description and ``_meta``,
each resource's listing, each view's contents as read, and the text ``show_sales`` answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import types
from mcp.client.client import Client
from mcp.client.extension import ClientExtension
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

CHART = Path(__file__).resolve().parents[3] / "examples" / "apps" / "chart.html"
VIEW = "ui://sales/chart.html"
SALES = {"north": [120, 135, 160, 190], "south": [90, 80, 110, 140], "west": [60, 95, 130, 125]}


class AppsHost(ClientExtension):
    identifier = EXTENSION_ID

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


def sdk_sales_server() -> MCPServer:
    """examples/apps/sales_server.py written on the official SDK's mcp.server.apps."""
    apps = Apps()

    def result(region: str, text: str) -> types.CallToolResult:
        quarters = [{"quarter": f"Q{i}", "amount": a} for i, a in enumerate(SALES[region], 1)]
        data = {"region": region, "quarters": quarters, "regions": list(SALES)}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=data
        )

    @apps.tool(
        resource_uri=VIEW,
        description="Show the quarterly sales of a region (north, south or west) as a chart.",
    )
    def show_sales(region: str, ctx: Context) -> types.CallToolResult:
        figures = ", ".join(f"Q{i} {a}" for i, a in enumerate(SALES[region], 1))
        text = f"Sales of {region} by quarter: {figures}."
        if client_supports_apps(ctx):
            text += " The chart shows them; its buttons switch region."
        return result(region, text)

    @apps.tool(
        resource_uri=VIEW,
        visibility=["app"],
        description="The chart's data for a region (called by the chart's buttons).",
    )
    def sales_data(region: str) -> types.CallToolResult:
        return result(region, f"Sales of {region}: {SALES[region]}")

    apps.add_html_resource(
        VIEW,
        CHART.read_text(encoding="utf-8"),
        name="sales-chart",
        description="A bar chart of a region's quarterly sales",
        prefers_border=True,
    )
    return MCPServer("sales", extensions=[apps])


def dumped(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(mode: str, apps: str, target: str) -> None:
    if target != "sdk":
        await read_apps(mode, apps, target)
        return
    import socket

    import anyio
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    app = sdk_sales_server().streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    async with anyio.create_task_group() as group:
        group.start_soon(web.serve)
        # uvicorn says it is listening only through this flag (no event to wait on).
        while not web.started:  # noqa: ASYNC110
            await anyio.sleep(0.02)
        await read_apps(mode, apps, f"http://127.0.0.1:{port}/mcp")
        web.should_exit = True


async def read_apps(mode: str, apps: str, server: str) -> None:
    extensions = [AppsHost()] if apps == "apps" else None
    seen: dict[str, Any] = {}
    async with Client(
        server,
        mode=mode,  # type: ignore[arg-type]
        extensions=extensions,
        read_timeout_seconds=10,
    ) as client:
        seen["protocol_version"] = client.protocol_version
        capabilities = client.server_capabilities
        seen["extensions"] = (capabilities.extensions or {}) if capabilities else None
        listed = await client.list_tools()
        seen["tools"] = {
            tool.name: {"description": tool.description, "meta": tool.meta} for tool in listed.tools
        }
        resources = await client.list_resources()
        seen["resources"] = [dumped(r) for r in resources.resources]
        seen["contents"] = {}
        for resource in resources.resources:
            read = await client.read_resource(resource.uri)
            seen["contents"][resource.uri] = [dumped(c) for c in read.contents]
        shown = await client.call_tool("show_sales", {"region": "north"})
        seen["show_sales"] = [getattr(block, "text", None) for block in shown.content]
        seen["structured"] = shown.structured_content
    print(json.dumps(seen))


if __name__ == "__main__":
    import anyio

    anyio.run(main, *sys.argv[1:4])
