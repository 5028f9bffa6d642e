"""MCP Apps (SEP-1865) on a server, in both eras over memory (every message checked against the
revision's schema): a tool's ``_meta.ui``, ``ui://`` views from a string, a file and a bundle
folder, the declared extension, the text a client without Apps gets, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, ClientIdentity, Revisions
from mcptrio.protocol.apps_extension import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    ResourceCsp,
    ResourceUi,
    ToolUi,
)
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import ClientCapabilities
from mcptrio.server.apps import client_supports_apps, html_bundle, html_file
from mcptrio.testing import open_test_client

ERAS = {"stateless": Revisions(supported=SUPPORTED), "handshake": HANDSHAKE_ERA}
HOST = ClientIdentity(
    capabilities=ClientCapabilities(extensions={EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}})
)
VIEW = "<!doctype html><html><body><div id=out></div></body></html>"


def chart_server() -> mcptrio.Server:
    server = mcptrio.Server("charts")

    @server.tool(ui="ui://charts/view.html")
    def sales(region: str, ctx: mcptrio.Context) -> str:
        """Sales of a region."""
        if client_supports_apps(ctx):
            return f"Sales of {region}: shown in the chart."
        return f"Sales of {region}: Q1 10, Q2 12, Q3 15."

    @server.tool(ui=ToolUi(resource_uri="ui://charts/view.html", visibility=["app"]))
    def refresh(region: str) -> str:
        """Fresh figures for the view."""
        return f"{region}: 10,12,15"

    server.add_resource(
        VIEW,
        "ui://charts/view.html",
        ui=ResourceUi(
            csp=ResourceCsp(connect_domains=["https://api.example.com"]),
            permissions={"clipboardWrite": {}},
            prefers_border=True,
        ),
    )
    return server


@pytest.fixture(params=sorted(ERAS))
def revisions(request: pytest.FixtureRequest) -> Revisions:
    return ERAS[request.param]


async def test_tool_names_its_view_and_the_server_declares_the_extension(
    revisions: Revisions,
) -> None:
    with trio.fail_after(5):
        async with open_test_client(chart_server(), revisions=revisions, identity=HOST) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert client.server_capabilities.extensions == {EXTENSION_ID: {}}
    assert tools["sales"].meta == {"ui": {"resourceUri": "ui://charts/view.html"}}
    assert tools["refresh"].meta == {
        "ui": {"resourceUri": "ui://charts/view.html", "visibility": ["app"]}
    }


async def test_view_is_served_as_an_app_with_its_ui_meta_listed_and_read(
    revisions: Revisions,
) -> None:
    ui = {
        "csp": {"connectDomains": ["https://api.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
    with trio.fail_after(5):
        async with open_test_client(chart_server(), revisions=revisions, identity=HOST) as client:
            (listed,) = (await client.list_resources()).resources
            (contents,) = (await client.read_resource("ui://charts/view.html")).contents
    assert (listed.uri, listed.mime_type, listed.meta) == (
        "ui://charts/view.html",
        APP_MIME_TYPE,
        {"ui": ui},
    )
    assert (contents.mime_type, contents.text, contents.meta) == (APP_MIME_TYPE, VIEW, {"ui": ui})


async def test_client_without_apps_gets_the_text_fallback_and_a_host_the_view_text(
    revisions: Revisions,
) -> None:
    with trio.fail_after(5):
        async with open_test_client(chart_server(), revisions=revisions) as plain:
            fallback = await plain.call_tool("sales", {"region": "north"})
        async with open_test_client(chart_server(), revisions=revisions, identity=HOST) as host:
            with_view = await host.call_tool("sales", {"region": "north"})
    assert [block.text for block in fallback.content] == ["Sales of north: Q1 10, Q2 12, Q3 15."]  # type: ignore[union-attr]
    assert [block.text for block in with_view.content] == ["Sales of north: shown in the chart."]  # type: ignore[union-attr]


async def test_a_declaration_without_the_app_mime_type_is_not_apps_support() -> None:
    other = ClientIdentity(
        capabilities=ClientCapabilities(extensions={EXTENSION_ID: {"mimeTypes": ["text/x"]}})
    )
    with trio.fail_after(5):
        async with open_test_client(chart_server(), identity=other) as client:
            result = await client.call_tool("sales", {"region": "south"})
    assert result.content[0].text == "Sales of south: Q1 10, Q2 12, Q3 15."  # type: ignore[union-attr]


async def test_server_without_views_declares_no_apps_extension() -> None:
    server = mcptrio.Server("plain")
    server.add_resource("hello", "text://hello")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            assert EXTENSION_ID not in (client.server_capabilities.extensions or {})


async def test_view_from_a_file_is_read_from_disk_on_every_read(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>one</p>")
    server = mcptrio.Server("files")
    server.add_resource(html_file(page), "ui://files/view.html")
    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            first = (await client.read_resource("ui://files/view.html")).contents[0]
            page.write_text("<p>two</p>")
            second = (await client.read_resource("ui://files/view.html")).contents[0]
            (listed,) = (await client.list_resources()).resources
    assert (first.text, second.text) == ("<p>one</p>", "<p>two</p>")
    assert first.mime_type == listed.mime_type == APP_MIME_TYPE
    assert client.server_capabilities.extensions == {EXTENSION_ID: {}}


def write_bundle(root: Path) -> None:
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "app.js").write_text("document.body.dataset.ready = '</script>';")
    (root / "assets" / "app.css").write_text("body { color: red }")
    (root / "index.html").write_text(
        "<html><head>"
        '<script type="module" crossorigin src="./assets/app.js"></script>'
        '<link rel="stylesheet" crossorigin href="/assets/app.css">'
        '<script src="https://cdn.example.com/lib.js"></script>'
        "</head><body></body></html>"
    )


async def test_view_from_a_bundle_folder_has_its_local_assets_inline(tmp_path: Path) -> None:
    write_bundle(tmp_path / "dist")
    server = mcptrio.Server("bundle")
    server.add_resource(html_bundle(tmp_path / "dist"), "ui://bundle/app.html")
    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            (contents,) = (await client.read_resource("ui://bundle/app.html")).contents
    assert contents.text == (
        "<html><head>"
        "<script type=\"module\" crossorigin>document.body.dataset.ready = '<\\/script>';"
        "</script>"
        "<style>body { color: red }</style>"
        '<script src="https://cdn.example.com/lib.js"></script>'
        "</head><body></body></html>"
    )


async def test_bundle_naming_a_file_outside_its_folder_is_an_error_answer(
    tmp_path: Path,
) -> None:
    (tmp_path / "secret.js").write_text("leak()")
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text('<script src="../secret.js"></script>')
    server = mcptrio.Server("bundle")
    server.add_resource(html_bundle(dist), "ui://bundle/app.html")
    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            with pytest.raises(mcptrio.McpError):
                await client.read_resource("ui://bundle/app.html")


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (lambda s: s.add_tool(lambda: "", name="t", ui="https://x/y"), "must be at a ui:// URI"),
        (lambda s: s.add_tool(lambda: "", name="t", ui="ui://"), "must be at a ui:// URI"),
        (
            lambda s: s.add_tool(lambda: "", name="t", ui="ui://a", meta={"ui": {}}),
            "leave 'ui' out of meta=",
        ),
        (
            lambda s: s.add_tool(
                lambda: "",
                name="t",
                ui=ToolUi(resource_uri="ui://a", visibility=["user"]),  # type: ignore[list-item]
            ),
            "visibility holds 'model' and 'app' only",
        ),
        (
            lambda s: s.add_resource("<p/>", "ui://a", mime_type="text/html"),
            "is served as 'text/html;profile=mcp-app'",
        ),
        (
            lambda s: s.add_resource("<p/>", "https://a/b", ui=ResourceUi(domain="a")),
            "must be at a ui:// URI",
        ),
    ],
)
def test_misdeclared_views_are_refused_at_registration(register: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        register(mcptrio.Server("bad"))


def test_missing_view_files_are_refused_at_registration(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        html_file(tmp_path / "nope.html")
    with pytest.raises(FileNotFoundError, match=r"no index\.html in that folder"):
        html_bundle(tmp_path)
