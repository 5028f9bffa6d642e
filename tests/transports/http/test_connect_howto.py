"""The how-to "Connect to a server over HTTP" runs as written, against mcptrio's own server."""

from __future__ import annotations

import re
from pathlib import Path

import trio
from programs import run_python

import mcptrio
from mcptrio.protocol.types import TextContent
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.http.serve import serve_http

HOWTO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "connect-over-http.md"


def test_connect_over_http_sample_runs(tmp_path: Path) -> None:
    text = HOWTO.read_text()
    (body,) = re.findall(r"```python\n# connect_http\.py\n(.*?)```", text, re.S)
    (tmp_path / "connect_http.py").write_text(body)
    done = run_python("connect_http.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["2026-07-28 5", "add"]


async def test_client_against_mcptrio_http_server_both_transports() -> None:
    server = mcptrio.Server("own", "1.0.0")

    @server.tool()
    async def countdown(ctx: mcptrio.Context, start: int) -> str:
        for step in range(start):
            await ctx.report_progress(step + 1, start)
        return "liftoff"

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(serve_http, server)
            for path, kind in (("/mcp", "streamable"), ("/sse", "legacy")):
                progress: list[float] = []
                async with (
                    open_http_client_transport(base + path, timeout=10) as transport,
                    mcptrio.open_client(transport) as client,
                ):
                    assert transport.kind == kind
                    result = await client.call_tool(
                        "countdown",
                        {"start": 3},
                        on_progress=lambda p, t, m, seen=progress: seen.append(p),
                    )
                    assert result.content == [TextContent(text="liftoff")]
                assert progress == [1, 2, 3]
            nursery.cancel_scope.cancel()
