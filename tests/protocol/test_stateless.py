"""The stateless era (2026-07-28) in the sans-IO connection: each request stands alone."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from mcptrio.protocol import codec
from mcptrio.protocol import types as t
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import ResourceNotFound
from mcptrio.protocol.events import Reply, RequestReceived, ResponseReceived
from mcptrio.protocol.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    RequestMeta,
)
from mcptrio.protocol.revisions import revision_of

from schema_validation import validate_message

STATELESS = "2026-07-28"
INFO = t.Implementation(name="srv", version="1.0")
CAPS = t.ServerCapabilities(
    tools=t.ToolsCapability(list_changed=True), resources=t.ResourcesCapability()
)


def server() -> Connection:
    return Connection("server", info=INFO, capabilities=CAPS, instructions="hello")


def meta(**extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION_KEY: STATELESS, CLIENT_CAPABILITIES_KEY: {}, **extra}


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    message["params"] = {"_meta": meta()} if params is None else params
    return json.dumps(message).encode()


def only_reply(events: list[Any]) -> dict[str, Any]:
    [reply] = events
    assert isinstance(reply, Reply)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


def test_a_request_with_stateless_meta_needs_no_handshake() -> None:
    s = server()
    [event] = s.receive(request(1, "tools/list"))
    assert isinstance(event, RequestReceived)
    assert event.meta is not None and event.meta.revision is revision_of(STATELESS)
    assert s.request_meta_of(1) is event.meta
    data = s.respond(
        1, t.ListToolsResult(tools=[t.Tool(name="a", input_schema={"type": "object"})])
    )
    assert data is not None
    answer = json.loads(data)
    validate_message(answer, STATELESS, "ListToolsResult")
    result = answer["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "srv", "version": "1.0"}
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert not s.ready and s.request_meta_of(1) is None


def test_server_discover_is_answered_by_the_connection() -> None:
    answer = only_reply(server().receive(request(7, "server/discover")))
    validate_message(answer, STATELESS, "DiscoverResult")
    result = answer["result"]
    assert result["supportedVersions"] == [STATELESS]
    assert result["capabilities"] == {"resources": {}, "tools": {"listChanged": True}}
    assert result["instructions"] == "hello"
    assert result["_meta"][SERVER_INFO_KEY]["name"] == "srv"


def test_an_unsupported_version_gets_32022_with_the_supported_ones() -> None:
    params = {"_meta": {PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}}}
    answer = only_reply(server().receive(request(2, "tools/list", params)))
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": [STATELESS], "requested": "2099-01-01"}
    validate_message(answer, STATELESS, "UnsupportedProtocolVersionError")


def test_a_missing_client_capabilities_field_is_invalid_params() -> None:
    params = {"_meta": {PROTOCOL_VERSION_KEY: STATELESS}}
    answer = only_reply(server().receive(request(3, "tools/list", params)))
    assert answer["error"]["code"] == -32602
    assert CLIENT_CAPABILITIES_KEY in answer["error"]["message"]


def test_a_bad_log_level_is_invalid_params() -> None:
    params = {"_meta": meta(**{"io.modelcontextprotocol/logLevel": "loud"})}
    answer = only_reply(server().receive(request(3, "tools/list", params)))
    assert answer["error"]["code"] == -32602


def test_a_log_level_that_is_not_a_string_is_invalid_params() -> None:
    params = {"_meta": meta(**{"io.modelcontextprotocol/logLevel": ["info"]})}
    answer = only_reply(server().receive(request(3, "tools/list", params)))
    assert answer["error"]["code"] == -32602


def test_each_request_has_its_meta_checked_after_its_method_was_first_allowed() -> None:
    s = server()
    [event] = s.receive(request(1, "tools/list"))
    assert isinstance(event, RequestReceived)
    bad = {"_meta": {PROTOCOL_VERSION_KEY: STATELESS, CLIENT_CAPABILITIES_KEY: []}}
    answer = only_reply(s.receive(request(2, "tools/list", bad)))
    assert answer["error"]["code"] == -32602
    missing = {"_meta": {PROTOCOL_VERSION_KEY: STATELESS}}
    answer = only_reply(s.receive(request(3, "tools/list", missing)))
    assert answer["error"]["code"] == -32602
    [event] = s.receive(request(4, "tools/list"))
    assert isinstance(event, RequestReceived) and event.meta is not None


def test_methods_the_revision_removed_are_not_found() -> None:
    for method in ("ping", "logging/setLevel", "resources/subscribe", "initialize"):
        params: dict[str, Any] = {"_meta": meta(), "uri": "x", "level": "info"}
        answer = only_reply(server().receive(request(4, method, params)))
        assert answer["error"]["code"] == -32601, method


def test_a_method_whose_capability_is_not_offered_is_not_found() -> None:
    answer = only_reply(server().receive(request(5, "prompts/list")))
    assert answer["error"]["code"] == -32601


def test_a_missing_resource_is_invalid_params_in_the_stateless_era() -> None:
    s = server()
    s.receive(request(6, "resources/read", {"_meta": meta(), "uri": "file:///nope"}))
    data = s.respond_error(6, ResourceNotFound("No resource file:///nope"))
    assert data is not None
    assert json.loads(data)["error"]["code"] == -32602


def test_a_handshake_on_another_connection_is_unaffected() -> None:
    s = server()
    frame = codec.encode_request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    )
    events = s.receive(frame)
    assert json.loads(events[0].data)["result"]["protocolVersion"] == "2025-11-25"


def test_related_notifications_are_fitted_to_the_request_revision() -> None:
    s = server()
    s.receive(request(8, "tools/call", {"_meta": meta(), "name": "a"}))
    data = s.send_notification(
        t.ProgressNotification(progress_token=8, progress=1, message="m"), related=8
    )
    validate_message(json.loads(data), STATELESS, "server")


def client() -> Connection:
    c = Connection(
        "client",
        info=t.Implementation(name="cli", version="2"),
        capabilities=t.ClientCapabilities(),
    )
    request_meta = RequestMeta(
        revision=revision_of(STATELESS),
        client_capabilities=t.ClientCapabilities(),
        client_info=t.Implementation(name="cli", version="2"),
        log_level="info",
    )
    c.start_stateless(request_meta, CAPS)
    return c


def test_a_stateless_client_puts_its_meta_on_every_request() -> None:
    c = client()
    _, data = c.send_request(t.CallToolRequest(name="a", arguments={"x": 1}))
    message = json.loads(data)
    validate_message(message, STATELESS, "client")
    sent_meta = message["params"]["_meta"]
    assert sent_meta[PROTOCOL_VERSION_KEY] == STATELESS
    assert sent_meta["io.modelcontextprotocol/clientInfo"] == {"name": "cli", "version": "2"}
    assert sent_meta["io.modelcontextprotocol/logLevel"] == "info"
    # ... and a stateless server reads it back.
    s = server()
    [event] = s.receive(data)
    assert isinstance(event, RequestReceived) and event.meta is not None
    assert event.meta.client_info == t.Implementation(name="cli", version="2")


def test_a_stateless_client_s_meta_follows_its_log_level_and_is_its_own_per_request() -> None:
    c = client()
    assert c.request_meta is not None
    first = c.request_meta.to_meta()
    first["io.modelcontextprotocol/logLevel"] = "emergency"  # the caller's own dict
    assert c.request_meta.to_meta()["io.modelcontextprotocol/logLevel"] == "info"
    c.request_meta.log_level = "debug"
    _, data = c.send_request(t.CallToolRequest(name="a"))
    assert json.loads(data)["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "debug"
    c.request_meta.log_level = None
    _, data = c.send_request(t.CallToolRequest(name="a"))
    assert "io.modelcontextprotocol/logLevel" not in json.loads(data)["params"]["_meta"]


def received_as_a_tool_call_s_answer(result: dict[str, Any]) -> Any:
    """What a stateless client's connection makes of ``result`` answering its ``tools/call``."""
    c = client()
    rid, _ = c.send_request(t.CallToolRequest(name="a"))
    [event] = c.receive(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())
    return event


def test_a_stateless_client_reads_an_input_required_result() -> None:
    event = received_as_a_tool_call_s_answer(
        {
            "resultType": "input_required",
            "inputRequests": {"k": {"method": "roots/list", "params": {}}},
            "requestState": "abc",
        }
    )
    assert isinstance(event, ResponseReceived)
    assert isinstance(event.result, t.InputRequiredResult)
    assert event.result.request_state == "abc"
    inputs = event.result.input_requests
    assert not isinstance(inputs, msgspec.UnsetType) and inputs["k"].method == "roots/list"


def test_a_stateless_client_reads_a_complete_result() -> None:
    event = received_as_a_tool_call_s_answer(
        {"resultType": "complete", "content": [{"type": "text", "text": "input_required"}]}
    )
    assert isinstance(event, ResponseReceived) and isinstance(event.result, t.CallToolResult)


# ------------------------------------------------------------------ what an answer adds, per class


class _MyToolResult(t.CallToolResult):
    """A result class of the server's own, answered in place of its base."""


class _MyInputRequired(t.InputRequiredResult, kw_only=True):
    pass


def test_each_result_class_gets_its_own_result_type_and_cache_hints_in_any_order() -> None:
    # What answer_result adds is settled once per result class: answering one class first
    # must not decide it for another, a subclass included.
    from mcptrio.protocol.stateless import answer_result

    request_meta = RequestMeta(revision_of(STATELESS), t.ClientCapabilities())
    info = {"name": "srv", "version": "1.0"}
    results: list[tuple[Any, str, bool]] = [
        (t.CallToolResult(content=[]), "complete", False),
        (_MyToolResult(content=[]), "complete", False),
        (t.InputRequiredResult(request_state="s"), "input_required", False),
        (_MyInputRequired(request_state="s"), "input_required", False),
        (t.ListToolsResult(tools=[]), "complete", True),
        (t.CallToolResult(content=[]), "complete", False),
    ]
    for _ in range(2):
        for result, result_type, cacheable in results:
            answered = msgspec.to_builtins(answer_result(result, request_meta, info))
            assert answered["resultType"] == result_type
            assert answered["_meta"] == {SERVER_INFO_KEY: info}
            assert ("ttlMs" in answered) is cacheable
            assert answered.get("cacheScope") == ("private" if cacheable else None)
