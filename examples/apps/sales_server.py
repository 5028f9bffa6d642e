"""A sales server whose tool shows an interactive chart (MCP Apps, SEP-1865).

Run it with one command (Streamable HTTP on http://127.0.0.1:8000/mcp)::

    python examples/apps/sales_server.py

``show_sales`` names the view ``ui://sales/chart.html`` (``chart.html`` beside this file, read
from disk on every read). A host that renders MCP Apps shows the chart and hands it the tool's
result; each region button in the chart calls ``sales_data``, a tool only the view calls
(``visibility=["app"]``), and the chart redraws. A client without Apps gets the figures as text.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

import mcptrio
from mcptrio.protocol.types import CallToolResult, TextContent

SALES: dict[str, list[int]] = {
    "north": [120, 135, 160, 190],
    "south": [90, 80, 110, 140],
    "west": [60, 95, 130, 125],
}
VIEW = "ui://sales/chart.html"

server = mcptrio.Server("sales", instructions="Quarterly sales by region, with a chart.")


class Quarter(msgspec.Struct):
    quarter: str
    amount: int


class Report(msgspec.Struct):
    region: str
    quarters: list[Quarter]
    regions: list[str]


def report(region: str) -> Report:
    if region not in SALES:
        raise mcptrio.ToolError(f"Unknown region {region!r}: choose one of {', '.join(SALES)}")
    amounts = SALES[region]
    return Report(
        region=region,
        quarters=[Quarter(f"Q{i}", amount) for i, amount in enumerate(amounts, 1)],
        regions=list(SALES),
    )


def as_result(found: Report, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=text)], structured_content=msgspec.to_builtins(found)
    )


@server.tool(ui=VIEW)
def show_sales(region: str, ctx: mcptrio.Context) -> CallToolResult:
    """Show the quarterly sales of a region (north, south or west) as a chart."""
    found = report(region)
    figures = ", ".join(f"{q.quarter} {q.amount}" for q in found.quarters)
    text = f"Sales of {region} by quarter: {figures}."
    if mcptrio.client_supports_apps(ctx):
        text += " The chart shows them; its buttons switch region."
    return as_result(found, text)


@server.tool(ui=mcptrio.ToolUi(resource_uri=VIEW, visibility=["app"]))
def sales_data(region: str) -> CallToolResult:
    """The chart's data for a region (called by the chart's buttons)."""
    found = report(region)
    return as_result(found, f"Sales of {region}: {[q.amount for q in found.quarters]}")


server.add_resource(
    mcptrio.html_file(Path(__file__).with_name("chart.html")),
    VIEW,
    name="sales-chart",
    description="A bar chart of a region's quarterly sales",
    ui=mcptrio.ResourceUi(prefers_border=True),
)


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
