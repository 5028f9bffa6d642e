"""A routing header sent twice is refused, on every front end (issue 38, item 11).

An intermediary may route on the last value of ``Mcp-Name``, ``Mcp-Method``,
``MCP-Protocol-Version`` or an ``Mcp-Param-*`` header, and this server checks the first against
the body: with two values, the one checked would not be the one routed on. So two of any of them
are answered 400, whatever the values, as two ``Host`` or ``Origin`` headers are.
"""

from __future__ import annotations

import pytest
import trio
from http_client_for_tests import open_test_connection
from test_stateless_era_edges import make_server, post
from test_stateless_era_http import headers, message, meta
from test_streamable_http import get_headers, initialize, request_body, serve, session_headers

from mcptrio.transports.http.endpoints.app import McpHttpApp

_LOCATE = {"_meta": meta(), "name": "locate", "arguments": {"target": {"zone": "eu-1"}}}


@pytest.mark.parametrize(
    ("name", "second"),
    [
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-method", "tools/list"),
        ("mcp-name", "admin_tool"),
        ("mcp-param-zone", "us-1"),
        # The same value twice is refused too: it is the repetition that is ambiguous.
        ("mcp-name", "locate"),
        ("Mcp-Param-Zone", "us-1"),
    ],
)
async def test_a_repeated_routing_header_is_refused_though_the_first_matches_the_body(
    front_end: str, name: str, second: str
) -> None:
    head = [*headers("tools/call", "locate", mcp_param_zone="eu-1"), (name, second)]
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            repeated = await post(url, message("tools/call", _LOCATE), head)
            single = await post(url, message("tools/call", _LOCATE), head[:-1])
    assert (repeated.status, repeated.json()["error"]["code"]) == (400, -32020)
    assert name.lower() in repeated.json()["error"]["message"].lower()
    assert single.status == 200
    assert single.json()["result"]["content"][0]["text"] == "eu-1"


async def test_a_repeated_protocol_version_is_refused_on_a_sessions_requests(
    front_end: str,
) -> None:
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(make_server([]))) as url,
            open_test_connection(url) as conn,
        ):
            session_id = await initialize(conn)
            twice = ("mcp-protocol-version", "2025-06-18")
            posted = await conn.request(
                "POST",
                "/mcp",
                headers=[*session_headers(session_id, "2025-11-25"), twice],
                body=request_body(2, "tools/list"),
            )
            # A stream, read as far as its status: today's GET would stay open.
            async with (
                open_test_connection(url) as other,
                other.stream(
                    "GET", "/mcp", headers=[*get_headers(session_id, "2025-11-25"), twice]
                ) as got,
            ):
                pass
            deleted = await conn.request(
                "DELETE",
                "/mcp",
                headers=[*get_headers(session_id, "2025-11-25")[1:], twice],
            )
            listed = await conn.request(
                "POST",
                "/mcp",
                headers=session_headers(session_id, "2025-11-25"),
                body=request_body(3, "tools/list"),
            )
    assert (posted.status, got.status, deleted.status) == (400, 400, 400)
    assert "MCP-Protocol-Version" in posted.json()["error"]["message"]
    assert listed.status == 200
