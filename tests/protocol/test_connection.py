"""The sans-IO connection, driven synchronously with no transport and no trio."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcptrio.protocol import codec
from mcptrio.protocol.connection import MAX_BATCH_ITEMS, Connection
from mcptrio.protocol.errors import CapabilityNotNegotiated, UnsupportedProtocolVersion
from mcptrio.protocol.events import (
    CancelReceived,
    ErrorReceived,
    HandshakeComplete,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED, SUPPORTED
from mcptrio.protocol.types import (
    CallToolRequest,
    CallToolResult,
    ClientCapabilities,
    CompleteRequest,
    Implementation,
    InitializedNotification,
    ListResourcesRequest,
    LoggingMessageNotification,
    PromptReference,
    RootsCapability,
    RootsListChangedNotification,
    ServerCapabilities,
    TextContent,
    ToolsCapability,
)

INFO = Implementation(name="test", version="1")


def server(
    capabilities: ServerCapabilities | None = None, supported: tuple[str, ...] = SUPPORTED
) -> Connection:
    return Connection(
        "server",
        info=INFO,
        capabilities=capabilities or ServerCapabilities(tools=ToolsCapability()),
        instructions="be kind",
        supported=supported,
    )


def client(
    capabilities: ClientCapabilities | None = None, supported: tuple[str, ...] = SUPPORTED
) -> Connection:
    return Connection(
        "client", info=INFO, capabilities=capabilities or ClientCapabilities(), supported=supported
    )


def replies(events: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if isinstance(e, Reply)]


def handshake(c: Connection, s: Connection) -> list[Any]:
    """Run initialize between two connections; return the client's events."""
    _, data = c.send_request(c.initialize_request())
    answer = replies(s.receive(data))
    events = c.receive(json.dumps(answer[0]).encode())
    if c.ready:
        s.receive(c.send_notification(InitializedNotification()))
    return events


def test_server_echoes_a_supported_revision() -> None:
    for revision in HANDSHAKE_SUPPORTED:
        c, s = client(supported=(revision,)), server()
        events = handshake(c, s)
        assert c.revision == s.revision == revision
        assert HandshakeComplete(revision) in events
        assert s.initialized_notified


def test_server_offers_its_latest_for_an_unknown_revision() -> None:
    s = server()
    frame = codec.encode_request(
        1,
        "initialize",
        {
            "protocolVersion": "2099-01-01",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    )
    [answer] = replies(s.receive(frame))
    assert answer["result"]["protocolVersion"] == HANDSHAKE_SUPPORTED[0]
    assert answer["result"]["instructions"] == "be kind"


def test_client_refuses_a_revision_it_does_not_speak() -> None:
    c, s = client(supported=("2025-11-25",)), server(supported=("2025-06-18",))
    events = handshake(c, s)
    [error] = [e for e in events if isinstance(e, ErrorReceived)]
    assert isinstance(error.error, UnsupportedProtocolVersion)
    assert error.error.data == {"supported": ["2025-11-25"], "requested": "2025-06-18"}
    assert not c.ready


def test_client_learns_the_server_from_the_handshake() -> None:
    c, s = client(), server()
    handshake(c, s)
    assert c.peer_info == INFO
    assert c.peer_instructions == "be kind"
    assert isinstance(c.peer_capabilities, ServerCapabilities)
    assert s.peer_info == INFO


def test_request_and_response_round_trip_typed() -> None:
    c, s = client(), server()
    handshake(c, s)
    rid, data = c.send_request(CallToolRequest(name="add", arguments={"a": 1}))
    [event] = s.receive(data)
    assert event == RequestReceived(rid, CallToolRequest(name="add", arguments={"a": 1}))
    answer = s.respond(rid, CallToolResult(content=[TextContent(text="1")]))
    assert answer is not None
    [response] = c.receive(answer)
    assert response == ResponseReceived(rid, CallToolResult(content=[TextContent(text="1")]))
    assert c.pending() == 0 and s.in_flight() == 0


def test_ping_is_answered_by_the_protocol_layer() -> None:
    c, s = client(), server()
    handshake(c, s)
    rid, data = c.send_request(c_ping())
    [answer] = replies(s.receive(data))
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {}}


def c_ping() -> Any:
    from mcptrio.protocol.types import PingRequest

    return PingRequest()


def test_cancellation_is_reported_only_for_requests_in_flight() -> None:
    c, s = client(), server()
    handshake(c, s)
    rid, data = c.send_request(CallToolRequest(name="add"))
    s.receive(data)
    from mcptrio.protocol.types import CancelledNotification

    events = s.receive(c.send_notification(CancelledNotification(request_id=rid, reason="stop")))
    assert events == [CancelReceived(rid, "stop")]
    assert s.drop_request(rid) is None
    later = s.receive(c.send_notification(CancelledNotification(request_id=rid)))
    assert not any(isinstance(e, CancelReceived) for e in later)


def test_client_does_not_send_what_the_server_did_not_declare() -> None:
    c, s = client(), server()
    handshake(c, s)
    with pytest.raises(CapabilityNotNegotiated, match="resources"):
        c.send_request(ListResourcesRequest())


def test_server_does_not_send_what_it_did_not_declare() -> None:
    c, s = client(), server()
    handshake(c, s)
    with pytest.raises(CapabilityNotNegotiated, match="logging"):
        s.send_notification(LoggingMessageNotification(level="info", data="x"))
    c2, s2 = client(), server(ServerCapabilities(logging={}))
    handshake(c2, s2)
    frame = s2.send_notification(LoggingMessageNotification(level="info", data="x"))
    assert [type(e) for e in c2.receive(frame)] == [NotificationReceived]


def test_roots_list_changed_needs_the_clients_list_changed_flag() -> None:
    c, s = client(ClientCapabilities(roots=RootsCapability())), server()
    handshake(c, s)
    with pytest.raises(CapabilityNotNegotiated):
        c.send_notification(RootsListChangedNotification())
    c2 = client(ClientCapabilities(roots=RootsCapability(list_changed=True)))
    handshake(c2, server())
    c2.send_notification(RootsListChangedNotification())


def test_completion_is_gated_only_from_2025_03_26() -> None:
    request = CompleteRequest(ref=PromptReference(name="p"), argument={"name": "a", "value": "b"})
    old = client(supported=("2024-11-05",))
    handshake(old, server())
    old.send_request(request)
    new = client(supported=("2025-03-26",))
    handshake(new, server())
    with pytest.raises(CapabilityNotNegotiated, match="completions"):
        new.send_request(request)


def batch_of_two_calls(*more: bytes) -> tuple[Connection, list[Any]]:
    """A 2025-03-26 server and the events of a batch of two ``tools/call`` (ids 10 and 11), with
    ``more`` encoded messages after them."""
    c, s = client(supported=("2025-03-26",)), server()
    handshake(c, s)
    first = codec.encode_request(10, "tools/call", {"name": "a"})
    second = codec.encode_request(11, "tools/call", {"name": "b"})
    return s, s.receive(codec.encode_batch([first, second, *more]))


def test_batch_answers_are_held_until_the_last_request_is_answered() -> None:
    s, events = batch_of_two_calls(codec.encode_request(12, "nope", {}))
    assert [e.id for e in events if isinstance(e, RequestReceived)] == [10, 11]
    assert s.respond(10, CallToolResult(content=[])) is None
    batch = s.respond_error(11, UnsupportedProtocolVersion("x"))
    assert batch is not None
    answers = {m["id"]: m for m in json.loads(batch)}
    assert set(answers) == {10, 11, 12}
    assert answers[12]["error"]["code"] == -32601


def test_a_batch_request_answered_before_the_others_is_still_in_flight() -> None:
    # Its answer waits in the batch: the peer has not had it, so it is still owed, and its id
    # may not be used again until the batch's answers go out.
    s, _ = batch_of_two_calls()
    assert s.respond(10, CallToolResult(content=[])) is None
    assert s.owes_answer(10) and s.in_flight() == 2
    reused = s.receive(codec.encode_request(10, "tools/call", {"name": "c"}))
    assert not any(isinstance(e, RequestReceived) for e in reused)
    assert s.respond(10, CallToolResult(content=[])) is None  # answered once only
    assert s.drop_request(11) is not None
    assert not s.owes_answer(10) and not s.owes_answer(11) and s.in_flight() == 0
    fresh = s.receive(codec.encode_request(10, "tools/call", {"name": "d"}))
    assert [e.id for e in fresh if isinstance(e, RequestReceived)] == [10]


def test_a_batch_over_the_item_limit_is_refused_with_one_small_error() -> None:
    c, s = client(supported=("2025-03-26",)), server()
    handshake(c, s)
    garbage = b"[" + b",".join([b"1"] * 100_000) + b"]"
    events = s.receive(garbage)
    assert len(events) == 1 and isinstance(events[0], Reply)
    answer = json.loads(events[0].data)
    assert answer["error"]["code"] == -32600
    assert len(events[0].data) < 200


def test_a_batch_at_the_item_limit_is_answered_item_by_item() -> None:
    c, s = client(supported=("2025-03-26",)), server()
    handshake(c, s)
    events = s.receive(b"[" + b",".join([b"1"] * MAX_BATCH_ITEMS) + b"]")
    assert len(events) == 1 and isinstance(events[0], Reply)
    answers = json.loads(events[0].data)
    assert len(answers) == MAX_BATCH_ITEMS
    assert {a["error"]["code"] for a in answers} == {-32600}
