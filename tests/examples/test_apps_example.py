"""The MCP Apps sample (``examples/apps/``): its tool names the chart view, the view is served
and calls a tool only it may call, a client without Apps gets the figures as text, in both
eras; and the one command of its docstring serves it over Streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import trio
from programs import ROOT, import_program

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, ClientIdentity, Revisions
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.testing import open_test_client

EXAMPLE = ROOT / "examples" / "apps" / "sales_server.py"
ERAS = {"stateless": Revisions(supported=SUPPORTED), "handshake": HANDSHAKE_ERA}
HOST = ClientIdentity(capabilities=mcptrio.declare_apps())
NORTH = "Sales of north by quarter: Q1 120, Q2 135, Q3 160, Q4 190."

example = import_program("apps_example", EXAMPLE)


@pytest.mark.parametrize("era", sorted(ERAS))
async def test_host_gets_the_chart_its_data_and_the_app_only_tool(era: str) -> None:
    with trio.fail_after(5):
        async with open_test_client(example.server, revisions=ERAS[era], identity=HOST) as host:
            tools = {t.name: t for t in (await host.list_tools()).tools}
            view = await mcptrio.read_app_view(host, tools["show_sales"])
            shown = await host.call_tool("show_sales", {"region": "north"})
            clicked = await host.call_tool("sales_data", {"region": "west"})
    assert mcptrio.tool_view(tools["sales_data"]) == mcptrio.ToolUi(
        resource_uri="ui://sales/chart.html", visibility=["app"]
    )
    assert view.uri == "ui://sales/chart.html"
    assert '"ui/initialize"' in view.html and '"tools/call"' in view.html
    assert view.ui == mcptrio.ResourceUi(prefers_border=True)
    assert shown.content[0].text == NORTH + " The chart shows them; its buttons switch region."  # type: ignore[union-attr]
    assert shown.structured_content is not None
    assert shown.structured_content["quarters"][0] == {"quarter": "Q1", "amount": 120}
    assert clicked.structured_content is not None
    assert clicked.structured_content["region"] == "west"


@pytest.mark.parametrize("era", sorted(ERAS))
async def test_client_without_apps_gets_the_figures_as_text(era: str) -> None:
    with trio.fail_after(5):
        async with open_test_client(example.server, revisions=ERAS[era]) as client:
            shown = await client.call_tool("show_sales", {"region": "north"})
            unknown = await client.call_tool("show_sales", {"region": "east"})
    assert shown.content[0].text == NORTH  # type: ignore[union-attr]
    assert unknown.is_error
    assert "choose one of north, south, west" in unknown.content[0].text  # type: ignore[union-attr]


async def test_the_one_command_serves_the_sample_over_http() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with trio.fail_after(10):
        process = await trio.lowlevel.open_process(
            [sys.executable, str(EXAMPLE), "0"], cwd=ROOT, env=env, stderr=subprocess.PIPE
        )
        try:
            assert process.stderr is not None
            line = b""
            while not line.endswith(b"\n"):
                chunk = await process.stderr.receive_some(1)
                assert chunk, f"the sample ended before serving: {line!r}"
                line += chunk
            assert line.startswith(b"Serving sales over http at "), line
            url = line.decode().split(" at ", 1)[1].strip()
            async with mcptrio.open_client(url, identity=HOST) as host:
                view = await mcptrio.read_app_view(host, "ui://sales/chart.html")
            assert "<title>Sales chart</title>" in view.html
        finally:
            process.kill()
            await process.wait()
