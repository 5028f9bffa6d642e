"""Responses decoded in one pass while one result type is pending: the same events as the
two-phase path for every kind of frame (codec.decode_frame_expecting)."""

from __future__ import annotations

import json

from test_connection import client, handshake, server

from mcptrio.protocol import codec
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.events import (
    ErrorReceived,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from mcptrio.protocol.types import (
    CallToolRequest,
    CallToolResult,
    ClientCapabilities,
    ListRootsRequest,
    ListToolsRequest,
    ListToolsResult,
    LoggingMessageNotification,
    RootsCapability,
    TextContent,
)


def ready_client(capabilities: ClientCapabilities | None = None) -> Connection:
    c, s = client(capabilities), server()
    handshake(c, s)
    assert c.ready
    return c


def test_answer_of_the_one_pending_type_is_decoded_with_its_frame() -> None:
    c = ready_client()
    rid, _ = c.send_request(CallToolRequest(name="t", arguments={}))
    assert c.pending_result_types() == {CallToolResult: 1}
    text = "y" * 100_000
    frame = codec.encode_result(rid, CallToolResult(content=[TextContent(text=text)]))
    [event] = c.receive(frame)
    assert isinstance(event, ResponseReceived) and event.id == rid
    assert isinstance(event.result, CallToolResult)
    assert event.result.content == [TextContent(text=text)]
    assert c.pending() == 0 and c.pending_result_types() == {}


def test_an_answer_that_is_not_the_pending_type_is_the_same_error_as_before() -> None:
    c = ready_client()
    rid, _ = c.send_request(CallToolRequest(name="t", arguments={}))
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": 5}}).encode()
    [event] = c.receive(frame)
    assert isinstance(event, ErrorReceived) and isinstance(event.error, InvalidParams)
    assert event.error.message.startswith("Malformed CallToolResult from the peer")
    assert c.pending_result_types() == {}


def test_requests_and_notifications_from_the_peer_still_arrive_while_one_type_is_pending() -> None:
    c = ready_client(ClientCapabilities(roots=RootsCapability()))
    c.send_request(ListToolsRequest())
    ask = codec.encode_request(7, "roots/list", {})
    [request] = c.receive(ask)
    assert isinstance(request, RequestReceived) and isinstance(request.request, ListRootsRequest)
    log = codec.encode_notification("notifications/message", {"level": "info", "data": "hi"})
    [note] = c.receive(log)
    assert isinstance(note, NotificationReceived)
    assert isinstance(note.notification, LoggingMessageNotification)
    [reply] = c.receive(b"{not json")
    assert isinstance(reply, Reply) and json.loads(reply.data)["error"]["code"] == -32700


def test_answers_of_several_pending_types_decode_in_two_phases_each_as_its_own() -> None:
    c = ready_client()
    tool_id, _ = c.send_request(CallToolRequest(name="t", arguments={}))
    list_id, _ = c.send_request(ListToolsRequest())
    assert c.pending_result_types() == {CallToolResult: 1, ListToolsResult: 1}
    [listed] = c.receive(codec.encode_result(list_id, ListToolsResult(tools=[])))
    assert isinstance(listed, ResponseReceived) and isinstance(listed.result, ListToolsResult)
    [called] = c.receive(codec.encode_result(tool_id, CallToolResult(content=[])))
    assert isinstance(called, ResponseReceived) and isinstance(called.result, CallToolResult)


def test_a_forgotten_request_no_longer_counts_as_pending() -> None:
    c = ready_client()
    rid, _ = c.send_request(CallToolRequest(name="t", arguments={}))
    c.forget_request(rid)
    c.forget_request(rid)
    assert c.pending_result_types() == {}
    [event] = c.receive(codec.encode_result(rid, CallToolResult(content=[])))
    assert not isinstance(event, ResponseReceived)
