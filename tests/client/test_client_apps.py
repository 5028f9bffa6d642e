"""MCP Apps (SEP-1865) on a client: declaring the extension, finding a tool's view and reading
it, in both eras, in memory and over Streamable HTTP; and the answers that are not views."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, ClientIdentity, Revisions
from mcptrio.client.apps import (
    AppViewError,
    declare_apps,
    read_app_view,
    server_supports_apps,
    tool_view,
)
from mcptrio.protocol.apps_extension import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    ResourceCsp,
    ResourceUi,
    ToolUi,
)
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import ClientCapabilities, ResourceContents
from mcptrio.server.apps import client_supports_apps
from mcptrio.testing import open_test_client

ERAS = {"stateless": Revisions(supported=SUPPORTED), "handshake": HANDSHAKE_ERA}
HOST = ClientIdentity(capabilities=declare_apps())
VIEW = "<!doctype html><p id=out>...</p>"
CSP = ResourceCsp(resource_domains=["https://cdn.example.com"])


def view_server() -> mcptrio.Server:
    server = mcptrio.Server("views")

    @server.tool(ui=ToolUi(resource_uri="ui://views/main.html", visibility=["model", "app"]))
    def show(ctx: mcptrio.Context) -> str:
        return "view" if client_supports_apps(ctx) else "words"

    @server.tool
    def plain() -> str:
        return "plain"

    server.add_resource(VIEW, "ui://views/main.html", ui=ResourceUi(csp=CSP, domain="v.example"))
    server.add_resource("<p>html</p>", "text://page.html", mime_type="text/html")
    server.add_resource(
        lambda: ResourceContents(
            uri="ui://views/blob.html",
            mime_type=APP_MIME_TYPE,
            blob=base64.b64encode(VIEW.encode()).decode(),
        ),
        "ui://views/blob.html",
    )
    return server


def test_declare_apps_adds_the_app_mime_type_and_keeps_what_was_declared() -> None:
    caps = ClientCapabilities(
        roots={"listChanged": True},
        extensions={EXTENSION_ID: {"mimeTypes": ["text/x"], "x": 1}, "other/ext": {}},
    )
    declared = declare_apps(declare_apps(caps))
    assert declared.extensions == {
        EXTENSION_ID: {"mimeTypes": ["text/x", APP_MIME_TYPE], "x": 1},
        "other/ext": {},
    }
    assert declared.roots == caps.roots


@pytest.mark.parametrize("era", sorted(ERAS))
async def test_host_negotiates_apps_finds_the_view_and_reads_it(era: str) -> None:
    with trio.fail_after(5):
        async with open_test_client(view_server(), revisions=ERAS[era], identity=HOST) as client:
            assert server_supports_apps(client)
            tools = {t.name: t for t in (await client.list_tools()).tools}
            view = await read_app_view(client, tools["show"])
            answer = await client.call_tool("show")
    assert tool_view(tools["show"]) == ToolUi(
        resource_uri="ui://views/main.html", visibility=["model", "app"]
    )
    assert tool_view(tools["plain"]) is None
    assert (view.uri, view.html) == ("ui://views/main.html", VIEW)
    assert view.ui == ResourceUi(csp=CSP, domain="v.example")
    assert view.meta == {
        "ui": {"csp": {"resourceDomains": ["https://cdn.example.com"]}, "domain": "v.example"}
    }
    assert answer.content[0].text == "view"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", sorted(ERAS))
async def test_host_reads_a_view_over_streamable_http(era: str) -> None:
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(view_server().serve_http, "127.0.0.1", 0)
            async with mcptrio.open_client(f"{url}/mcp", revisions=ERAS[era], identity=HOST) as c:
                view = await read_app_view(c, "ui://views/main.html")
                answer = await c.call_tool("show")
            nursery.cancel_scope.cancel()
    assert view.html == VIEW
    assert answer.content[0].text == "view"  # type: ignore[union-attr]


async def test_a_view_sent_as_base64_is_decoded() -> None:
    with trio.fail_after(5):
        async with open_test_client(view_server(), identity=HOST) as client:
            view = await read_app_view(client, "ui://views/blob.html")
    assert view.html == VIEW


async def test_client_that_does_not_declare_apps_gets_words() -> None:
    with trio.fail_after(5):
        async with open_test_client(view_server()) as client:
            answer = await client.call_tool("show")
    assert answer.content[0].text == "words"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("view", "message"),
    [
        ("text://page.html", "is at a ui:// URI"),
        ("plain", "names no MCP Apps view"),
    ],
)
async def test_what_is_not_a_view_is_refused(view: str, message: str) -> None:
    with trio.fail_after(5):
        async with open_test_client(view_server(), identity=HOST) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            target: Any = tools.get(view, view)
            with pytest.raises(AppViewError, match=message):
                await read_app_view(client, target)


async def test_a_ui_uri_answered_with_other_contents_is_refused() -> None:
    server = mcptrio.Server("odd")
    server.add_resource(
        lambda: ResourceContents(uri="ui://odd/other.html", mime_type=APP_MIME_TYPE, text="x"),
        "ui://odd/view.html",
    )
    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            with pytest.raises(AppViewError, match="holds no 'text/html;profile=mcp-app' contents"):
                await read_app_view(client, "ui://odd/view.html")


async def test_server_without_views_does_not_support_apps() -> None:
    server = mcptrio.Server("plain")
    server.add_resource("x", "text://x")
    with trio.fail_after(5):
        async with open_test_client(server, identity=HOST) as client:
            assert not server_supports_apps(client)
