"""Streamable HTTP in the stateless era, at its edges, on every front end (h11, httptools,
hypercorn): notifications and client responses, unknown methods, hostile header values,
nested ``x-mcp-header`` parameters, a closed response stream cancelling its request, and
keep-alive comments on a quiet stream.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
from http_client_for_tests import open_test_connection
from test_answers_in_post_task import open_small_window_connection
from test_stateless_era_http import REV, headers, message, meta
from test_streamable_http import serve, wait_until

from mcptrio import Server
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.sse_stream import KEEP_ALIVE, KEEP_ALIVE_INTERVAL

from schema_validation import validate_message


def make_server(log: list[str]) -> Server:
    server = Server("edges", version="1.0")

    @server.tool
    async def wait(seconds: float) -> str:
        """Sleeps, noting how it ended."""
        log.append("started")
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            log.append("cancelled")
            raise
        log.append("finished")
        return "done"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
                }
            },
        }
    )
    def locate(target: dict[str, Any]) -> str:
        """Names the zone of a target."""
        return str(target.get("zone"))

    return server


async def post(url: str, body: bytes, head: list[tuple[str, str]]) -> Any:
    async with open_test_connection(url) as conn:
        return await conn.request("POST", "/mcp", headers=head, body=body)


async def test_a_cancelled_notification_is_accepted_without_a_session(front_end: str) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "_meta": meta()},
        }
    ).encode()
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            response = await post(url, body, headers("notifications/cancelled"))
    assert response.status == 202
    assert response.header("mcp-session-id") is None


async def test_a_response_from_the_client_is_refused(front_end: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            response = await post(url, body, headers("tools/list"))
    assert response.status == 400
    assert response.json()["error"]["code"] == -32600


async def test_an_unknown_method_is_404_and_a_session_id_sent_is_ignored(front_end: str) -> None:
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            response = await post(
                url,
                message("no/such", {"_meta": meta()}),
                headers("no/such", mcp_session_id="made-up", last_event_id="3"),
            )
            listed = await post(
                url,
                message("tools/list", {"_meta": meta()}),
                headers("tools/list", mcp_session_id="made-up", last_event_id="3"),
            )
    assert (response.status, response.json()["error"]["code"]) == (404, -32601)
    validate_message(response.json(), REV, "server")
    assert listed.status == 200 and listed.header("mcp-session-id") is None
    assert {tool["name"] for tool in listed.json()["result"]["tools"]} == {"wait", "locate"}


@pytest.mark.parametrize(
    "mcp_method",
    [
        "=?base64?dG9vbHMvbGlzdA?=",  # bad padding
        "=?base64?!!!!?=",
        "=?base64?/w==?=",  # not UTF-8
        "tools/\tlist",  # a control character inside
        "tools/" + "x" * 6000,  # large, and not the method
        "TOOLS/LIST",  # values are case-sensitive
    ],
)
async def test_hostile_header_values_are_a_header_mismatch(front_end: str, mcp_method: str) -> None:
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            response = await post(
                url,
                message("tools/list", {"_meta": meta()}),
                [*headers("tools/list")[:3], ("mcp-method", mcp_method)],
            )
            again = await post(url, message("tools/list", {"_meta": meta()}), headers("tools/list"))
    assert (response.status, response.json()["error"]["code"]) == (400, -32020)
    assert again.status == 200


async def test_a_header_value_with_a_line_break_never_reaches_the_endpoint(front_end: str) -> None:
    body = message("tools/list", {"_meta": meta()})
    head = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers("tools/list")[:3])
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            async with open_test_connection(url) as raw:
                await raw.send_raw(
                    b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                    + head
                    + b"mcp-method: tools/\rlist\r\n"
                    + b"content-length: %d\r\n\r\n" % len(body)
                    + body
                )
                received = b""
                with trio.move_on_after(2):
                    while not received.startswith(b"HTTP/1.1 ") or b"\r\n" not in received:
                        chunk = await raw.socket_stream.receive_some(65536)
                        if not chunk:
                            break
                        received += chunk
            again = await post(url, body, headers("tools/list"))
    assert received.startswith(b"HTTP/1.1 400")
    assert again.status == 200


@pytest.mark.parametrize(
    ("zone_header", "status"),
    [("eu-1", 200), (None, 400), ("us-1", 400)],
)
async def test_a_nested_annotated_argument_travels_in_its_header(
    front_end: str, zone_header: str | None, status: int
) -> None:
    params = {"_meta": meta(), "name": "locate", "arguments": {"target": {"zone": "eu-1"}}}
    extra = {} if zone_header is None else {"mcp_param_zone": zone_header}
    with trio.fail_after(10):
        async with serve(front_end, McpHttpApp(make_server([]))) as url:
            response = await post(
                url, message("tools/call", params), headers("tools/call", "locate", **extra)
            )
    assert response.status == status
    if status == 200:
        assert response.json()["result"]["content"][0]["text"] == "eu-1"
    else:
        assert response.json()["error"]["code"] == -32020


async def test_closing_the_response_stream_cancels_the_request(front_end: str) -> None:
    log: list[str] = []
    params = {"_meta": meta(), "name": "wait", "arguments": {"seconds": 60}}
    with trio.fail_after(10):
        async with (
            serve(front_end, McpHttpApp(make_server(log))) as url,
            open_test_connection(url) as conn,
        ):
            await post_and_forget(url, message("tools/call", params), log)
            await wait_until(lambda: log == ["started", "cancelled"], timeout=5)
            # Another client, on the same endpoint, is not disturbed.
            listed = await conn.request(
                "POST",
                "/mcp",
                headers=headers("tools/list"),
                body=message("tools/list", {"_meta": meta()}),
            )
    assert log == ["started", "cancelled"]
    assert listed.status == 200


async def post_and_forget(url: str, body: bytes, log: list[str]) -> None:
    """POST ``body``, then close the connection once the handler has started."""
    async with open_test_connection(url) as doomed:
        head = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in headers("tools/call", "wait")
        )
        await doomed.send_raw(head.encode() + b"content-length: %d\r\n\r\n" % len(body) + body)
        await wait_until(lambda: log == ["started"])


@pytest.mark.parametrize("interval", [None, 4.0])
async def test_a_quiet_stream_carries_keep_alive_comments(
    front_end: str, interval: float | None, autojump_clock: trio.abc.Clock
) -> None:
    log: list[str] = []
    every = KEEP_ALIVE_INTERVAL if interval is None else interval
    app = McpHttpApp(
        make_server(log), **({} if interval is None else {"keep_alive_interval": every})
    )
    seconds = every * 2.5
    params = {"_meta": meta(), "name": "wait", "arguments": {"seconds": seconds}}
    with trio.fail_after(seconds * 4):
        async with (
            serve(front_end, app) as url,
            open_test_connection(url, timeout=every * 2) as conn,
            conn.stream(
                "POST",
                "/mcp",
                headers=headers("tools/call", "wait"),
                body=message("tools/call", params),
            ) as events,
        ):
            received = b""
            while (chunk := await events.next_chunk()) is not None:
                received += chunk
    assert events.header("content-type") == b"text/event-stream"
    assert events.header("x-accel-buffering") == b"no"
    assert received.count(KEEP_ALIVE) == 2
    frames = [
        json.loads(line[len(b"data: ") :])
        for line in received.splitlines()
        if line.startswith(b"data: ")
    ]
    assert [frame["result"]["content"][0]["text"] for frame in frames] == ["done"]
    validate_message(frames[0], REV, "CallToolResult")


async def test_a_client_leaving_during_its_answer_on_a_session_of_its_own_is_no_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A request whose id another client has in flight gets a session of its own, run in a
    # nursery of the POST's. Its client leaving while the answer is written is a broken
    # connection, as anywhere else: not a handler failure logged with a traceback (an exception
    # group from that nursery), whose reference cycle would keep the answer until collected.
    server = Server("leaving")
    holding, release = trio.Event(), trio.Event()

    @server.tool
    async def hold() -> str:
        holding.set()
        await release.wait()
        return "held"

    @server.tool
    async def big() -> str:
        return "b" * 4_000_000

    def call(name: str) -> bytes:
        return message("tools/call", {"_meta": meta(), "name": name, "arguments": {}}, rid=1)

    caplog.set_level(logging.ERROR)
    with trio.fail_after(10):
        async with (
            serve("builtin-httptools", McpHttpApp(server)) as url,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(post, url, call("hold"), headers("tools/call", "hold"))
            await holding.wait()
            async with open_small_window_connection(url) as small:
                await small._send_request("POST", "/mcp", headers("tools/call", "big"), call("big"))
                # The answer has begun: leave in the middle of it.
                assert await small.socket_stream.receive_some(1024)
            await trio.sleep(0.2)
            release.set()
    assert [record.getMessage() for record in caplog.records] == []
