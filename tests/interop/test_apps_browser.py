"""MCP Apps in a real browser: headless Chromium (the system's ``chromium``), driven by
puppeteer-core (``interop/apps/browser_check.mjs``), loads a minimal host page built on
``@modelcontextprotocol/ext-apps``' ``AppBridge`` (``interop/apps/host.js``) that connects to an
mcptrio server over Streamable HTTP from the page, renders the tool's view in a sandboxed
iframe, and checks that the view shows the tool's result, that a click in the view calls a
server tool through the host and the view updates, and saves a screenshot of it.

The page is served at the MCP server's own origin (the browser's requests for it are answered
by the driver), so the MCP requests carry that Origin and mcptrio's Origin check admits them as
it admits any same-origin page. A page of another origin the check lets in (another loopback
name) talks to the endpoint through CORS: the browser's preflights are answered, and the page
reads the session id. A page served at a public origin is refused by that check (403, logged).

Run against the sample served directly, and through the gateway fronting the sample and the
npm reference app server ``@modelcontextprotocol/server-basic-vanillajs`` (over stdio). The
screenshots go to ``$MCPTRIO_ARTIFACTS/apps-browser/`` (``.ci/run`` sets and prints it), or to
pytest's temporary folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from client.real_servers import INTEROP, LOCALHOST_ONLY, node, require_interop
from programs import ROOT, import_program

import mcptrio
from mcptrio.gateway import Gateway, Upstream

CHECK = INTEROP / "apps" / "browser_check.mjs"
PACKAGES = INTEROP / "node_modules" / "@modelcontextprotocol"
BASIC_APP = PACKAGES / "server-basic-vanillajs" / "dist" / "index.js"
require_interop(
    PACKAGES / "ext-apps",
    BASIC_APP,
    INTEROP / "node_modules" / "puppeteer-core",
    INTEROP / "node_modules" / "esbuild",
)
CHROMIUM = shutil.which("chromium") or ""
require_interop(Path(CHROMIUM or "/usr/bin/chromium"))
SAMPLE = ROOT / "examples" / "apps" / "sales_server.py"
# The sample's view: the title shows the region; the last region button shows "west".
SALES = ("show_sales", {"region": "north"}, "#title", "#regions button:last-child")


def artifacts(tmp_path: Path) -> Path:
    base = os.environ.get("MCPTRIO_ARTIFACTS")
    folder = Path(base) / "apps-browser" if base else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def browse(
    url: str, tool: str, arguments: dict[str, Any], text: str, click: str, *more: str
) -> dict[str, Any]:
    """Run the driver (``more``: the screenshot's path, and the page's origin if not the
    server's) on the MCP endpoint at ``url``; what it saw."""
    base, _, path = url.rpartition("/")
    command = [node(), str(CHECK), CHROMIUM, base, f"/{path}", tool, json.dumps(arguments)]
    result = await trio.run_process(
        [*command, text, click, *more], capture_stdout=True, capture_stderr=True
    )
    seen: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen


async def in_the_browser(
    url: str, tool: str, arguments: dict[str, Any], text: str, click: str, screenshot: Path
) -> dict[str, Any]:
    """What the browser saw of ``tool``'s view on the server at ``url`` (its MCP endpoint)."""
    seen = await browse(url, tool, arguments, text, click, str(screenshot))
    assert seen["error"] is None, seen
    assert seen["steps"] == ["connected", "view-read", "view-initialized", "result-sent"]
    assert (await trio.Path(seen["screenshot"]).stat()).st_size > 0
    return seen


@asynccontextmanager
async def served(server: mcptrio.Server) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        yield f"{url}/mcp"
        nursery.cancel_scope.cancel()


async def test_the_sample_in_a_browser(tmp_path: Path) -> None:
    server = import_program("apps_browser_sample", SAMPLE).server
    with trio.fail_after(60):
        async with served(server) as url:
            seen = await in_the_browser(url, *SALES, artifacts(tmp_path) / "sample.png")
    assert seen["shown"] == "Sales of north, by quarter"
    assert seen["clicked"] == "Sales of west, by quarter"


async def test_the_sample_and_the_npm_reference_app_through_the_gateway(tmp_path: Path) -> None:
    sample = import_program("apps_browser_gateway_sample", SAMPLE).server
    basic = [node(), "--require", str(LOCALHOST_ONLY), str(BASIC_APP), "--stdio"]
    gateway = Gateway(
        upstreams=[
            Upstream(name="shop", target=sample, in_process=False),
            Upstream(name="basic", target=basic),
        ]
    )
    folder = artifacts(tmp_path)
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            await nursery.start(gateway.serve_upstreams)
            async with served(gateway) as url:
                tool, arguments, text, click = SALES
                shop = await in_the_browser(
                    url, f"shop_{tool}", arguments, text, click, folder / "gateway-sample.png"
                )
                basic_seen = await in_the_browser(
                    url,
                    "basic_get-time",
                    {},
                    "#server-time",
                    "#get-time-btn",
                    folder / "gateway-basic-vanillajs.png",
                )
            nursery.cancel_scope.cancel()
    assert shop["shown"] == "Sales of north, by quarter"
    assert shop["clicked"] == "Sales of west, by quarter"
    # The reference app shows the server's time (ISO 8601), and a click asks it again.
    assert basic_seen["shown"].startswith("20") and basic_seen["shown"].endswith("Z")
    assert basic_seen["clicked"].startswith("20") and basic_seen["clicked"] != basic_seen["shown"]


async def test_a_page_of_another_allowed_origin_reaches_the_server_through_cors(
    tmp_path: Path,
) -> None:
    server = import_program("apps_browser_cors_sample", SAMPLE).server
    with trio.fail_after(60):
        async with served(server) as url:
            # The server is at 127.0.0.1; the page at localhost, on the same port: another
            # origin, and a loopback one, which the Origin check lets in by default.
            page = "http://localhost:" + url.split(":")[2].split("/")[0]
            shot = artifacts(tmp_path) / "cross-origin.png"
            seen = await browse(url, *SALES, str(shot), page)
    assert seen["error"] is None, seen
    assert seen["steps"] == ["connected", "view-read", "view-initialized", "result-sent"]
    assert seen["shown"] == "Sales of north, by quarter"
    assert seen["clicked"] == "Sales of west, by quarter"


async def test_a_page_of_another_origin_is_refused_by_the_origin_check(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcptrio.http")
    server = import_program("apps_browser_origin_sample", SAMPLE).server
    with trio.fail_after(60):
        async with served(server) as url:
            seen = await browse(
                url, *SALES, str(tmp_path / "refused.png"), "http://apps-host.example"
            )
    assert seen["steps"] == []
    assert "Failed to fetch" in seen["error"]
    assert "refused a request with Origin 'http://apps-host.example'" in caplog.text
