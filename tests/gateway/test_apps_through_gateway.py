"""MCP Apps through the gateway and ``mount``: an upstream app server's tools keep their
``_meta.ui`` with the view namespaced as the tools are (``ui://<namespace>/...``), the view is
read there, a view's calls of its server's tools by their own names reach that upstream, in
both eras on either side, and two upstreams whose views call alike are told apart or refused."""

from __future__ import annotations

import pytest
import trio
from eras import HANDSHAKE_ERA
from programs import ROOT, import_program

import mcptrio
from mcptrio.client import ClientIdentity, Revisions
from mcptrio.gateway import Gateway, Upstream
from mcptrio.protocol.apps_extension import EXTENSION_ID
from mcptrio.testing import open_test_client

STATELESS = Revisions(protocol_version="2026-07-28")
ERAS = {"handshake": HANDSHAKE_ERA, "stateless": STATELESS}
UPSTREAM_ERAS = {**ERAS, "mounted": None}
HOST = ClientIdentity(capabilities=mcptrio.declare_apps())
SAMPLE = ROOT / "examples" / "apps" / "sales_server.py"


def sample() -> mcptrio.Server:
    return import_program("apps_gateway_sample", SAMPLE).server  # type: ignore[no-any-return]


def other_app() -> mcptrio.Server:
    """Another app server whose view has the sample's URI and calls a tool of the same name."""
    server = mcptrio.Server("other")

    @server.tool(ui="ui://sales/chart.html")
    def sales_data(region: str) -> str:
        return f"other {region}"

    server.add_resource("<p>other</p>", "ui://sales/chart.html")
    return server


def upstream(era: str, name: str, target: mcptrio.Server) -> Upstream:
    return Upstream(
        name=name, target=target, revisions=UPSTREAM_ERAS[era], in_process=era == "mounted"
    )


@pytest.mark.parametrize("upstream_era", list(UPSTREAM_ERAS))
@pytest.mark.parametrize("downstream_era", list(ERAS))
async def test_views_and_their_calls_cross_the_gateway(
    upstream_era: str, downstream_era: str
) -> None:
    gateway = Gateway(upstreams=[upstream(upstream_era, "shop", sample())])
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_test_client(
                gateway, revisions=ERAS[downstream_era], identity=HOST
            ) as host:
                assert host.server_capabilities.extensions == {EXTENSION_ID: {}}
                tools = {t.name: t for t in (await host.list_tools()).tools}
                (listed,) = (await host.list_resources()).resources
                view = await mcptrio.read_app_view(host, tools["shop_show_sales"])
                shown = await host.call_tool("shop_show_sales", {"region": "north"})
                # What the view's button sends, through the host: the upstream's own name.
                clicked = await host.call_tool("sales_data", {"region": "west"})
                listed_call = await host.call_tool("shop_sales_data", {"region": "south"})
            nursery.cancel_scope.cancel()
    assert sorted(tools) == ["shop_sales_data", "shop_show_sales"]
    assert tools["shop_sales_data"].meta == {
        "ui": {"resourceUri": "ui://shop/sales/chart.html", "visibility": ["app"]}
    }
    assert mcptrio.tool_view(tools["shop_show_sales"]) == mcptrio.ToolUi(
        resource_uri="ui://shop/sales/chart.html"
    )
    assert (listed.uri, listed.mime_type, listed.meta) == (
        "ui://shop/sales/chart.html",
        "text/html;profile=mcp-app",
        {"ui": {"prefersBorder": True}},
    )
    assert view.uri == "ui://shop/sales/chart.html"
    assert "<title>Sales chart</title>" in view.html
    assert view.ui == mcptrio.ResourceUi(prefers_border=True)
    # The gateway hands views on, so it declares Apps upstream: the host's text.
    assert shown.content[0].text.endswith("its buttons switch region.")  # type: ignore[union-attr]
    assert clicked.structured_content is not None
    assert clicked.structured_content["region"] == "west"
    assert listed_call.structured_content is not None
    assert listed_call.structured_content["region"] == "south"


async def test_mount_namespaces_views_and_routes_a_views_calls() -> None:
    parent = mcptrio.Server("parent")
    child = sample()
    parent.mount(child, "shop")
    with trio.fail_after(5):
        async with open_test_client(parent, identity=HOST) as host:
            tools = {t.name: t for t in (await host.list_tools()).tools}
            view = await mcptrio.read_app_view(host, tools["shop_show_sales"])
            clicked = await host.call_tool("sales_data", {"region": "north"})
            child.add_resource("<p>two</p>", "ui://sales/other.html")
            uris = [r.uri for r in (await host.list_resources()).resources]
    assert view.uri == "ui://shop/sales/chart.html"
    assert clicked.structured_content is not None
    assert clicked.structured_content["region"] == "north"
    assert uris == ["ui://shop/sales/chart.html", "ui://shop/sales/other.html"]


async def test_two_upstreams_with_alike_views_are_apart_and_their_calls_refused() -> None:
    gateway = Gateway(
        upstreams=[upstream("handshake", "eu", sample()), upstream("mounted", "us", other_app())]
    )
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with open_test_client(gateway, identity=HOST) as host:
                eu = await mcptrio.read_app_view(host, "ui://eu/sales/chart.html")
                us = await mcptrio.read_app_view(host, "ui://us/sales/chart.html")
                with pytest.raises(mcptrio.InvalidParams, match="'eu_sales_data', 'us_sales_data'"):
                    await host.call_tool("sales_data", {"region": "north"})
                by_name = await host.call_tool("us_sales_data", {"region": "north"})
                only_eu = await host.call_tool("show_sales", {"region": "north"})
            nursery.cancel_scope.cancel()
    assert "<title>Sales chart</title>" in eu.html
    assert us.html == "<p>other</p>"
    assert by_name.content[0].text == "other north"  # type: ignore[union-attr]
    assert only_eu.structured_content is not None


async def test_an_unknown_tool_of_a_server_without_views_stays_unknown() -> None:
    plain = mcptrio.Server("plain")

    @plain.tool
    def add(a: int, b: int) -> int:
        return a + b

    parent = mcptrio.Server("parent")
    parent.mount(plain, "math")
    with trio.fail_after(5):
        async with open_test_client(parent, identity=HOST) as host:
            with pytest.raises(mcptrio.InvalidParams, match="add"):
                await host.call_tool("add", {"a": 1, "b": 2})
            assert EXTENSION_ID not in (host.server_capabilities.extensions or {})
