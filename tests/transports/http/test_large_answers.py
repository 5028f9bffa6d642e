"""Large answers over the built-in server: head and body written together (one ``writev``),
whole and byte-exact even when the socket takes them in pieces."""

from __future__ import annotations

import json

import pytest
import trio
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection
from test_answers_in_post_task import open_small_window_connection
from test_streamable_http import call_body, initialize, session_headers

import mcptrio
from mcptrio.transports.http.endpoints.app import McpHttpApp

BUILTIN = ["builtin-h11", "builtin-httptools"]
BIG = "y" * 3_000_000


def big_server() -> mcptrio.Server:
    server = mcptrio.Server("big")

    @server.tool(structured_output=False)
    async def big() -> str:
        return BIG

    return server


@pytest.mark.parametrize("json_response", [True, False])
@pytest.mark.parametrize("front_end", BUILTIN)
async def test_an_answer_larger_than_the_socket_buffer_arrives_whole(
    front_end: str, json_response: bool
) -> None:
    app = McpHttpApp(big_server(), json_response=json_response)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(app.run)
            async with (
                open_front_end(front_end, app) as url,
                open_test_connection(url) as conn,
                open_small_window_connection(url) as small,
            ):
                try:
                    session_id = await initialize(conn, "2025-11-25")
                    headers = session_headers(session_id, "2025-11-25")
                    for connection in (conn, small):
                        response = await connection.request(
                            "POST", "/mcp", headers=headers, body=call_body(7, "big", {})
                        )
                        assert response.status == 200
                        body = response.body
                        if not json_response:
                            [data] = [
                                line.removeprefix(b"data: ")
                                for line in body.split(b"\n")
                                if line.startswith(b"data: {")
                            ]
                            body = data
                        answer = json.loads(body)
                        assert answer["id"] == 7
                        assert answer["result"]["content"][0]["text"] == BIG
                finally:
                    nursery.cancel_scope.cancel()
