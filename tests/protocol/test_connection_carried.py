"""Results handed over in process unencoded (codec.CarriedResult): what the receiver makes of
one is what it makes of the frame it stands for, in every handshake-era revision."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from test_connection import client, handshake, server

from mcptrio.protocol import codec
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.events import ErrorReceived, RequestReceived, ResponseReceived
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import (
    AudioContent,
    CallToolRequest,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ListToolsRequest,
    ListToolsResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)


def rich_result() -> CallToolResult:
    """Every kind of content, structured output, floats, a nested ``_meta``."""
    return CallToolResult(
        content=[
            TextContent(text="é" * 10_000 + '\u2028"\\'),
            ImageContent(data="aGVsbG8=", mime_type="image/png"),
            AudioContent(data="AAAA", mime_type="audio/wav"),
            ResourceLink(uri="file:///a", name="a"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///b", text="b")),
        ],
        structured_content={"x": 1.5, "n": [1, 2, {"deep": None}], "ok": True},
        meta={"io.example/trace": {"id": "t1", "weights": [0.25, 1e300]}},
    )


def pair(revision: str) -> tuple[Connection, Connection]:
    c, s = client(supported=(revision,)), server()
    handshake(c, s)
    assert c.ready and c.revision == s.revision == revision
    return c, s


def asked(c: Connection, s: Connection, request: Any) -> Any:
    """The request ``c`` sends, received by ``s``: its id."""
    rid, data = c.send_request(request)
    [event] = s.receive(data)
    assert isinstance(event, RequestReceived) and event.id == rid
    return rid


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
def test_a_carried_answer_holds_what_its_frame_would(revision: str) -> None:
    c1, s1 = pair(revision)
    c2, s2 = pair(revision)
    rid1 = asked(c1, s1, CallToolRequest(name="t", arguments={}))
    rid2 = asked(c2, s2, CallToolRequest(name="t", arguments={}))
    assert rid1 == rid2
    frame = s1.respond(rid1, rich_result())
    carried = s2.respond_carried(rid2, rich_result())
    assert isinstance(frame, bytes) and isinstance(carried, codec.CarriedResult)
    # Fitted to the revision the same way (2024-11-05 has no audio, no resource links...).
    assert json.loads(carried.encoded()) == json.loads(frame)
    assert not s2.owes_answer(rid2)

    [decoded] = c1.receive(frame)
    [converted] = c2.receive_carried(carried)
    assert isinstance(decoded, ResponseReceived) and isinstance(converted, ResponseReceived)
    assert converted.id == decoded.id and converted.result == decoded.result
    assert c2.pending() == 0 and c2.pending_result_types() == {}


def test_the_answer_is_what_the_handler_returned_at_the_time() -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    result = CallToolResult(content=[TextContent(text="before")], structured_content={"v": 1})
    carried = s.respond_carried(rid, result)
    assert isinstance(carried, codec.CarriedResult)
    result.content.append(TextContent(text="after"))
    assert result.structured_content is not None
    result.structured_content["v"] = 2
    [event] = c.receive_carried(carried)
    assert isinstance(event, ResponseReceived)
    assert event.result == CallToolResult(
        content=[TextContent(text="before")], structured_content={"v": 1}
    )


def test_a_result_only_encoding_can_carry_goes_as_a_frame() -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    forwarded = CallToolResult(content=[], structured_content={"raw": msgspec.Raw(b'{"a":1}')})
    frame = s.respond_carried(rid, forwarded)
    assert isinstance(frame, bytes)
    assert json.loads(frame)["result"]["structuredContent"] == {"raw": {"a": 1}}


def test_batch_and_stateless_answers_are_frames() -> None:
    c, s = client(supported=("2025-03-26",)), server()
    handshake(c, s)
    first = codec.encode_request(10, "tools/call", {"name": "a"})
    second = codec.encode_request(11, "tools/call", {"name": "b"})
    s.receive(codec.encode_batch([first, second]))
    assert s.respond_carried(10, CallToolResult(content=[])) is None
    batch = s.respond_carried(11, CallToolResult(content=[]))
    assert isinstance(batch, bytes) and len(json.loads(batch)) == 2

    stateless = server()
    call = {
        "name": "t",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    [event] = stateless.receive(codec.encode_request(5, "tools/call", call))
    assert isinstance(event, RequestReceived)
    assert isinstance(stateless.respond_carried(5, CallToolResult(content=[])), bytes)


def test_an_answer_not_of_the_type_expected_is_the_same_error_as_its_frame() -> None:
    c, s = pair("2025-11-25")
    rid = asked(c, s, ListToolsRequest())
    wrong = codec.CarriedResult(rid, {"tools": [{"name": 5}]})
    [event] = c.receive_carried(wrong)
    assert isinstance(event, ErrorReceived) and isinstance(event.error, InvalidParams)
    assert event.error.message.startswith("Malformed ListToolsResult from the peer")
    assert c.pending() == 0


def test_an_answer_no_one_waits_for_is_unmatched_as_its_frame_would_be() -> None:
    c, s = pair("2025-11-25")
    rid = asked(c, s, ListToolsRequest())
    carried = s.respond_carried(rid, ListToolsResult(tools=[Tool(name="t", input_schema={})]))
    assert isinstance(carried, codec.CarriedResult)
    [first] = c.receive_carried(carried)
    assert isinstance(first, ResponseReceived)
    [again] = c.receive_carried(carried)
    assert type(again).__name__ == "UnmatchedResponse" and again.id == rid
