"""The tasks extension's wire rules, sans-IO (SEP-2663): which tasks/* a revision means, the
per-request gate, resultType "task" both ways, and Mcp-Name = taskId."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcptrio.protocol import tasks_extension as ext
from mcptrio.protocol import types as t
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.events import Reply, RequestReceived
from mcptrio.protocol.methods import spec_at
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.stateless import decode_stateless_result
from mcptrio.transports.http.client.stateless_headers import stateless_headers

from schema_validation import validate_message

REV = "2026-07-28"
DECLARES: dict[str, Any] = {"extensions": {ext.EXTENSION_ID: {}}}


def server(offers: bool = True) -> Connection:
    return Connection(
        "server",
        info=t.Implementation(name="s", version="1"),
        capabilities=t.ServerCapabilities(
            tools=t.ToolsCapability(), extensions={ext.EXTENSION_ID: {}} if offers else None
        ),
    )


def frame(method: str, params: dict[str, Any], caps: dict[str, Any]) -> bytes:
    meta = {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: caps}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return json.dumps(message).encode()


def test_tasks_get_and_cancel_mean_the_extensions_where_the_revision_has_extensions() -> None:
    assert spec_at("tasks/get", REV).params is ext.GetTaskRequest  # type: ignore[union-attr]
    assert spec_at("tasks/cancel", REV).params is ext.CancelTaskRequest  # type: ignore[union-attr]
    assert spec_at("tasks/get", "2025-11-25").params is t.GetTaskRequest  # type: ignore[union-attr]
    assert spec_at("tasks/update", "2025-11-25") is None


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {"taskId": "x"}),
        ("tasks/update", {"taskId": "x", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "x"}),
    ],
)
def test_the_extension_gates_each_request(method: str, params: dict[str, Any]) -> None:
    [received] = server().receive(frame(method, params, DECLARES))
    assert isinstance(received, RequestReceived)
    assert method == received.request.METHOD and received.request.task_id == "x"  # type: ignore[attr-defined]
    [refused] = server().receive(frame(method, params, {}))
    assert isinstance(refused, Reply)
    error = json.loads(refused.data)["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {ext.EXTENSION_ID: {}}}}
    [not_offered] = server(offers=False).receive(frame(method, params, DECLARES))
    assert isinstance(not_offered, Reply)
    assert json.loads(not_offered.data)["error"]["code"] == -32601


def test_a_task_result_is_answered_with_result_type_task_and_decoded_as_one() -> None:
    s = server()
    s.receive(frame("tools/call", {"name": "a"}, DECLARES))
    created = ext.CreateTaskResult(
        task_id="t1",
        status="working",
        created_at="2026-11-25T10:00:00Z",
        last_updated_at="2026-11-25T10:00:00Z",
        ttl_ms=None,
        poll_interval_ms=500,
    )
    data = s.respond(1, created)
    assert data is not None
    answer = json.loads(data)
    validate_message(answer, REV, "CallToolResult")
    assert answer["result"]["resultType"] == "task" and answer["result"]["ttlMs"] is None
    decoded = decode_stateless_result(
        msgspec.Raw(json.dumps(answer["result"]).encode()), t.CallToolResult
    )
    assert isinstance(decoded, ext.CreateTaskResult) and decoded.task.task_id == "t1"
    plain = decode_stateless_result(
        msgspec.Raw(b'{"resultType":"complete","content":[{"type":"text","text":"task"}]}'),
        t.CallToolResult,
    )
    assert isinstance(plain, t.CallToolResult)


def test_mcp_name_carries_the_task_id() -> None:
    head = stateless_headers(
        frame("tasks/update", {"taskId": "tid", "inputResponses": {}}, {}), None
    )
    assert head is not None and ("mcp-name", "tid") in head
