"""The official Python SDK's client (mcp 2.3.0) sees the same MCP Apps metadata from mcptrio's
sample (``examples/apps/sales_server.py``) as from the same server written on the SDK's own
``mcp.server.apps``, both over Streamable HTTP, in both eras (``legacy``: 2025-11-25; ``auto``:
2026-07-28 after ``server/discover``), declaring the extension or not: the declared extension,
each tool's description and ``_meta.ui``, the ``ui://`` resource's listing, its contents as
read (type, ``_meta``, HTML) and the text a tool answers (the fallback included). The SDK client
runs in its own process (it is asyncio): ``peers/sdk_apps_client.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from programs import ROOT, import_program

PEER = str(Path(__file__).parent / "peers" / "sdk_apps_client.py")
EXAMPLE = ROOT / "examples" / "apps" / "sales_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
FIGURES = "Sales of north by quarter: Q1 120, Q2 135, Q3 160, Q4 190."


async def seen_by_the_sdk(mode: str, apps: str, target: str) -> dict[str, Any]:
    result = await trio.run_process(
        [sys.executable, PEER, mode, apps, target],
        capture_stdout=True,
        capture_stderr=True,
        env=ENV,
    )
    seen: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize("apps", ["apps", "plain"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_sees_the_same_apps_metadata_as_from_mcp_server_apps(
    mode: str, apps: str
) -> None:
    server = import_program("apps_differential", EXAMPLE).server
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            ours = await seen_by_the_sdk(mode, apps, f"{url}/mcp")
            nursery.cancel_scope.cancel()
        theirs = await seen_by_the_sdk(mode, apps, "sdk")
    assert ours["protocol_version"] == theirs["protocol_version"]
    assert ours["protocol_version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    for key in ("tools", "resources", "contents", "show_sales", "structured"):
        assert ours[key] == theirs[key], key
    # The one difference, a decision (docs/explanation/apps.md): in the handshake era the SDK's
    # server leaves `extensions` out of its initialize answer (the 2025-11-25 schema has no such
    # member); mcptrio declares it there as SEP-2133's own example does.
    assert ours["extensions"] == {"io.modelcontextprotocol/ui": {}}
    assert theirs["extensions"] == ({} if mode == "legacy" else ours["extensions"])
    # What the comparison covers, spelled out (so a shared mistake cannot pass unseen).
    assert ours["tools"]["sales_data"]["meta"] == {
        "ui": {"resourceUri": "ui://sales/chart.html", "visibility": ["app"]}
    }
    (listed,) = ours["resources"]
    assert listed["mimeType"] == "text/html;profile=mcp-app"
    assert listed["_meta"] == {"ui": {"prefersBorder": True}}
    (contents,) = ours["contents"]["ui://sales/chart.html"]
    assert contents["_meta"] == {"ui": {"prefersBorder": True}}
    fallback = apps == "plain"
    assert ours["show_sales"] == [
        FIGURES if fallback else FIGURES + " The chart shows them; its buttons switch region."
    ]
