"""Streamable HTTP in the stateless era (2026-07-28): one POST, one request, no session.

The header checks and their statuses, server/discover, input-required rounds, a listen stream
held open on its POST, and handshake-era clients on the same endpoint, all over the built-in
server. Every body is checked against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
import trio
from http_client_for_tests import (
    StreamingResponse,
    TestConnection,
    TestResponse,
    open_test_connection,
)

from mcptrio import Context, Server
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY

from schema_validation import validate_message

REV = "2026-07-28"
ACCEPT = ("accept", "application/json, text/event-stream")
JSON = ("content-type", "application/json")


def make_server() -> Server:
    server = Server("stateless", version="1.0")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def slow(delay: float) -> str:
        """Answers after ``delay`` seconds."""
        await trio.sleep(delay)
        return f"slept {delay}"

    @server.tool
    async def greet(ctx: Context) -> str:
        """Asks the user's name, then greets them."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        first = await ctx.elicit("Name?", schema, key="name")
        second = await ctx.elicit("Surname?", schema, key="surname")
        name, surname = (first.content or {}).get("name"), (second.content or {}).get("name")
        return f"Hello, {name} {surname}!"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
            },
            "required": ["region"],
        }
    )
    def place(region: str, count: int = 1) -> str:
        """Places things in a region."""
        return f"{count} in {region}"

    return server


@asynccontextmanager
async def serving() -> AsyncIterator[tuple[Server, str]]:
    server = make_server()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        yield server, url
        nursery.cancel_scope.cancel()


def meta(**extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {"elicitation": {}}, **extra}


def message(method: str, params: dict[str, Any], rid: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def headers(method: str, name: str | None = None, **extra: str) -> list[tuple[str, str]]:
    found = [ACCEPT, JSON, ("mcp-protocol-version", REV), ("mcp-method", method)]
    if name is not None:
        found.append(("mcp-name", name))
    found += [(key.replace("_", "-"), value) for key, value in extra.items()]
    return found


async def post(url: str, body: bytes, head: list[tuple[str, str]]) -> TestResponse:
    async with open_test_connection(url) as conn:
        return await conn.request("POST", "/mcp", headers=head, body=body)


def listen(
    conn: TestConnection, params: dict[str, Any], rid: int
) -> AbstractAsyncContextManager[StreamingResponse]:
    """A ``subscriptions/listen`` request ``rid`` with ``params``, its answer read as a stream."""
    body = message("subscriptions/listen", params, rid)
    return conn.stream("POST", "/mcp", headers=headers("subscriptions/listen"), body=body)


async def test_a_stateless_call_needs_no_session_and_gets_none() -> None:
    with trio.fail_after(10):
        async with serving() as (_, url):
            body = message(
                "tools/call", {"_meta": meta(), "name": "add", "arguments": {"a": 2, "b": 3}}
            )
            response = await post(url, body, headers("tools/call", "add"))
    assert response.status == 200
    assert response.header("mcp-session-id") is None
    answer = response.json()
    validate_message(answer, REV, "CallToolResult")
    assert answer["result"]["structuredContent"] == {"result": 5}
    assert answer["result"]["resultType"] == "complete"


async def test_two_clients_may_use_the_same_request_id_at_once() -> None:
    answers: dict[float, Any] = {}

    async def call(url: str, delay: float) -> None:
        params = {"_meta": meta(), "name": "slow", "arguments": {"delay": delay}}
        response = await post(
            url, message("tools/call", params, rid=1), headers("tools/call", "slow")
        )
        answers[delay] = response.json()

    with trio.fail_after(10):
        async with serving() as (_, url), trio.open_nursery() as nursery:
            nursery.start_soon(call, url, 0.2)
            await trio.sleep(0.05)
            nursery.start_soon(call, url, 0.01)
    for delay, answer in answers.items():
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == f"slept {delay}"


async def test_server_discover_names_the_stateless_revisions() -> None:
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(
                url, message("server/discover", {"_meta": meta()}), headers("server/discover")
            )
    answer = response.json()
    validate_message(answer, REV, "DiscoverResult")
    assert answer["result"]["supportedVersions"] == [REV]


@pytest.mark.parametrize(
    ("head", "params", "status", "code"),
    [
        # MCP-Protocol-Version missing, or not the _meta's.
        ([ACCEPT, JSON, ("mcp-method", "tools/list")], {"_meta": meta()}, 400, -32020),
        (
            [ACCEPT, JSON, ("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list")],
            {"_meta": meta()},
            400,
            -32020,
        ),
        # Mcp-Method missing or wrong (values are case-sensitive).
        ([ACCEPT, JSON, ("mcp-protocol-version", REV)], {"_meta": meta()}, 400, -32020),
        (headers("TOOLS/LIST"), {"_meta": meta()}, 400, -32020),
        # A revision nobody speaks.
        (
            [ACCEPT, JSON, ("mcp-protocol-version", "2099-01-01"), ("mcp-method", "tools/list")],
            {"_meta": {PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}}},
            400,
            -32022,
        ),
        # The _meta without the client's capabilities.
        (headers("tools/list"), {"_meta": {PROTOCOL_VERSION_KEY: REV}}, 400, -32602),
    ],
)
async def test_headers_that_do_not_match_the_body_are_refused(
    head: list[tuple[str, str]], params: dict[str, Any], status: int, code: int
) -> None:
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(url, message("tools/list", params), head)
    assert response.status == status
    assert response.json()["error"]["code"] == code


async def test_a_method_the_revision_removed_is_404() -> None:
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(url, message("ping", {"_meta": meta()}), headers("ping"))
    assert response.status == 404
    assert response.json()["error"]["code"] == -32601


async def test_mcp_name_is_required_and_compared_after_decoding() -> None:
    params = {"_meta": meta(), "name": "add", "arguments": {"a": 1, "b": 1}}
    with trio.fail_after(10):
        async with serving() as (_, url):
            missing = await post(url, message("tools/call", params), headers("tools/call"))
            wrong = await post(url, message("tools/call", params), headers("tools/call", "sub"))
            encoded = await post(
                url, message("tools/call", params), headers("tools/call", "=?base64?YWRk?=")
            )
    assert (missing.status, missing.json()["error"]["code"]) == (400, -32020)
    assert (wrong.status, wrong.json()["error"]["code"]) == (400, -32020)
    assert encoded.status == 200 and "result" in encoded.json()


@pytest.mark.parametrize(
    ("extra", "ok"),
    [
        ({"mcp_param_region": "eu", "mcp_param_count": "3"}, True),
        ({"mcp_param_region": "eu", "mcp_param_count": "03"}, True),  # compared as numbers
        ({"mcp_param_region": "=?base64?ZXU=?=", "mcp_param_count": "3"}, True),
        ({"mcp_param_count": "3"}, False),  # Region missing
        ({"mcp_param_region": "us", "mcp_param_count": "3"}, False),
        ({"mcp_param_region": "=?base64?ZXU?=", "mcp_param_count": "3"}, False),  # bad padding
    ],
)
async def test_annotated_arguments_travel_in_mcp_param_headers(
    extra: dict[str, str], ok: bool
) -> None:
    params = {"_meta": meta(), "name": "place", "arguments": {"region": "eu", "count": 3}}
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(
                url, message("tools/call", params), headers("tools/call", "place", **extra)
            )
    if ok:
        assert (
            response.status == 200 and response.json()["result"]["content"][0]["text"] == "3 in eu"
        )
    else:
        assert (response.status, response.json()["error"]["code"]) == (400, -32020)


def _tampered(state: str) -> str:
    """``state`` with one character of its middle changed. A middle character of unpadded
    base64 carries six whole bits; the last ones may carry bits the decoder ignores, so changing
    those could leave the sealed bytes as they were (the test then failed about one run in a
    few hundred)."""
    middle = len(state) // 2
    replacement = "B" if state[middle] == "A" else "A"
    return state[:middle] + replacement + state[middle + 1 :]


async def test_an_elicitation_takes_two_rounds_with_sealed_state() -> None:
    with trio.fail_after(10):
        async with serving() as (_, url):
            ask = {"_meta": meta(), "name": "greet", "arguments": {}}
            first = (
                await post(url, message("tools/call", ask), headers("tools/call", "greet"))
            ).json()
            validate_message(first, REV, "InputRequiredResult")
            assert first["result"]["resultType"] == "input_required"
            assert list(first["result"]["inputRequests"]) == ["name"]
            state = first["result"]["requestState"]
            answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
            retry = {**ask, "inputResponses": answer, "requestState": state}
            second = (
                await post(url, message("tools/call", retry, 2), headers("tools/call", "greet"))
            ).json()
            assert list(second["result"]["inputRequests"]) == ["surname"]
            final_answer = {"surname": {"action": "accept", "content": {"name": "Lovelace"}}}
            last = {
                **ask,
                "inputResponses": final_answer,
                "requestState": second["result"]["requestState"],
            }
            third = (
                await post(url, message("tools/call", last, 3), headers("tools/call", "greet"))
            ).json()
            tampered = {**last, "requestState": _tampered(last["requestState"])}
            refused = (
                await post(url, message("tools/call", tampered, 4), headers("tools/call", "greet"))
            ).json()
    validate_message(third, REV, "CallToolResult")
    assert third["result"]["content"][0]["text"] == "Hello, Ada Lovelace!"
    assert refused["error"]["code"] == -32602


async def test_an_ask_without_the_declared_capability_is_32021_and_400() -> None:
    params = {
        "_meta": {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {}},
        "name": "greet",
        "arguments": {},
    }
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(
                url, message("tools/call", params), headers("tools/call", "greet")
            )
    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_a_listen_stream_stays_open_and_carries_tagged_list_changes() -> None:
    with trio.fail_after(10):
        async with serving() as (server, url):
            params = {"_meta": meta(), "notifications": {"toolsListChanged": True}}
            async with open_test_connection(url) as conn, listen(conn, params, 7) as events:
                assert events.status == 200
                assert events.header("x-accel-buffering") == b"no"
                received = b""
                while b"acknowledged" not in received:
                    received += await events.next_chunk()
                server.add_tool(lambda: "x", name="extra")
                while b"list_changed" not in received:
                    received += await events.next_chunk()
    frames = [
        json.loads(line[len(b"data: ") :])
        for line in received.splitlines()
        if line.startswith(b"data: ")
    ]
    assert [frame["method"] for frame in frames] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    for frame in frames:
        validate_message(frame, REV, "server")
        assert frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7


async def test_closing_a_listen_stream_ends_its_subscription_actor() -> None:
    with trio.fail_after(10):
        async with serving() as (server, url):
            params = {"_meta": meta(), "notifications": {"toolsListChanged": True}}
            async with open_test_connection(url) as conn, listen(conn, params, 7) as events:
                await events.next_chunk()
                assert len(server.subscriptions) == 1  # type: ignore[arg-type]
            # The client is gone: the next write finds out, and the actor ends.
            while len(server.subscriptions):  # type: ignore[arg-type]
                server.add_tool(lambda: "x", name="extra")
                server.remove_tool("extra")
                await trio.sleep(0.01)


async def test_listen_streams_do_not_take_the_slots_of_calls() -> None:
    server = make_server()
    server.max_in_flight = 2
    params = {"_meta": meta(), "notifications": {"toolsListChanged": True}}
    call = {"_meta": meta(), "name": "add", "arguments": {"a": 1, "b": 2}}
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            async with (
                open_test_connection(url) as one,
                open_test_connection(url) as two,
                listen(one, params, 1) as first,
                listen(two, params, 2) as second,
            ):
                await first.next_chunk()
                await second.next_chunk()
                answer = await post(
                    url, message("tools/call", call, 3), headers("tools/call", "add")
                )
            nursery.cancel_scope.cancel()
    assert answer.json()["result"]["structuredContent"] == {"result": 3}


async def test_get_and_delete_of_the_stateless_era_are_405() -> None:
    with trio.fail_after(10):
        async with serving() as (_, url), open_test_connection(url) as conn:
            got = await conn.request(
                "GET",
                "/mcp",
                headers=[("accept", "text/event-stream"), ("mcp-protocol-version", REV)],
            )
            deleted = await conn.request("DELETE", "/mcp", headers=[("mcp-protocol-version", REV)])
    assert got.status == deleted.status == 405
    assert got.header("allow") == b"POST"


async def test_a_handshake_client_on_the_same_endpoint_is_unaffected() -> None:
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    with trio.fail_after(10):
        async with serving() as (_, url):
            response = await post(url, message("initialize", initialize), [ACCEPT, JSON])
    assert response.status == 200
    assert response.header("mcp-session-id") is not None
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
