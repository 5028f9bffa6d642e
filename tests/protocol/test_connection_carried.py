"""Results handed over in process unencoded (codec.CarriedResult): what the receiver makes of
one is what it makes of the frame it stands for, in every handshake-era revision."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from test_connection import batch_of_two_calls, client, handshake, server
from test_stateless import client as stateless_client
from test_stateless import server as stateless_server

from mcptrio.protocol import codec
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.events import ErrorReceived, RequestReceived, ResponseReceived
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.tasks_extension import CreateTaskResult
from mcptrio.protocol.types import (
    AudioContent,
    CallToolRequest,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    InputRequest,
    InputRequiredResult,
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


def test_batch_answers_are_frames() -> None:
    s, _ = batch_of_two_calls()
    assert s.respond_carried(10, CallToolResult(content=[])) is None
    batch = s.respond_carried(11, CallToolResult(content=[]))
    assert isinstance(batch, bytes) and len(json.loads(batch)) == 2


@pytest.mark.parametrize(
    "result",
    [
        CallToolResult(content=[TextContent(text="input_required task")], is_error=False),
        InputRequiredResult(
            input_requests={"k": InputRequest(method="roots/list", params={})},
            request_state="state",
        ),
        CreateTaskResult(
            task_id="t1",
            status="working",
            created_at="2026-11-29T00:00:00Z",
            last_updated_at="2026-11-29T00:00:00Z",
            ttl_ms=None,
        ),
    ],
    ids=["complete", "input-required", "task"],
)
def test_a_stateless_era_answer_reads_as_its_frame(result: Any) -> None:
    reads: list[Any] = []
    for carry in (False, True):
        c, s = stateless_client(), stateless_server()
        rid, data = c.send_request(CallToolRequest(name="a", arguments={}))
        [event] = s.receive(data)
        assert isinstance(event, RequestReceived)
        answer = s.respond_carried(rid, result, carry=carry)
        assert isinstance(answer, codec.CarriedResult if carry else bytes)
        if isinstance(answer, codec.CarriedResult):
            assert json.loads(answer.encoded())["result"]["resultType"]
            [read] = c.receive_carried(answer)
        else:
            assert answer is not None
            [read] = c.receive(answer)
        assert isinstance(read, ResponseReceived)
        reads.append(read.result)
    assert type(reads[1]) is type(reads[0]) and reads[1] == reads[0]


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


@pytest.mark.parametrize(
    "structured",
    [
        {"point": (1, 2)},  # JSON makes a tuple an array: a list
        {"x": float("nan")},  # and a NaN (or an infinity) null
        {"x": float("-inf")},
        {"many": list(range(codec.CARRY_LOOK_LIMIT + 1))},  # past the look: as cheap encoded
        {"rows": [[1, "a", None, True], [2, (3,)]]},  # as a list's item, at any depth
        {"rows": [{"x": 0.5}, [1.5, float("inf")]]},
    ],
    ids=["tuple", "nan", "infinity", "past-the-look-limit", "tuple-in-list", "infinity-in-list"],
)
def test_what_would_not_read_back_from_json_as_itself_goes_as_a_frame(structured: Any) -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    answer = s.respond_carried(rid, CallToolResult(content=[], structured_content=structured))
    assert isinstance(answer, bytes)
    [event] = c.receive(answer)
    assert isinstance(event, ResponseReceived)


def test_keys_are_strings_as_json_makes_them() -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    carried = s.respond_carried(
        rid, CallToolResult(content=[], structured_content={"by_id": {1: "a", 0.5: "b"}})
    )
    assert isinstance(carried, codec.CarriedResult)
    [event] = c.receive_carried(carried)
    assert isinstance(event, ResponseReceived)
    assert event.result.structured_content == {"by_id": {"1": "a", "0.5": "b"}}


@pytest.mark.parametrize(
    "structured",
    [
        {"text": "bad \ud800 text"},
        {"key \udfff": 1},
        {(1, 2): "tuple key"},
        {"lines": ["fine", ["caf\u00e9 \ud800"]]},
    ],
    ids=[
        "lone-surrogate-value",
        "lone-surrogate-key",
        "key-json-cannot-write",
        "lone-surrogate-in-list",
    ],
)
def test_a_result_no_frame_can_hold_is_the_error_it_always_was(structured: Any) -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    with pytest.raises((UnicodeEncodeError, TypeError)):
        s.respond_carried(rid, CallToolResult(content=[], structured_content=structured))
    assert s.owes_answer(rid)  # so the session answers it -32603, as it always did


def test_an_answer_no_one_waits_for_is_not_encoded_to_be_dropped() -> None:
    c, _ = pair("2025-06-18")
    [event] = c.receive_carried(codec.CarriedResult(99, {"text": "\ud800"}))
    assert type(event).__name__ == "UnmatchedResponse" and event.id == 99


def test_a_result_nested_past_the_look_is_encoded_as_before() -> None:
    c, s = pair("2025-06-18")
    rid = asked(c, s, CallToolRequest(name="t", arguments={}))
    deep: list[Any] = []
    for _ in range(900):
        deep = [deep]
    answer = s.respond_carried(rid, CallToolResult(content=[], structured_content={"v": deep}))
    assert isinstance(answer, bytes)
