"""The stateless era's header checks on their own (no sockets): how a header value is compared
with the body, on the fast path for plain values and the decoding one alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcptrio.protocol.errors import HeaderMismatch, McpError
from mcptrio.protocol.http_headers import encode_value
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.transports.http.endpoints.envelope_peek import peek
from mcptrio.transports.http.endpoints.stateless_era import (
    StatelessChecks,
    answer_status,
    no_header_params,
    read_stateless_head,
)

REV = "2026-07-28"


def check(name: str, name_header: bytes, version_header: bytes = REV.encode()) -> None:
    params: dict[str, Any] = {
        "name": name,
        "arguments": {},
        "_meta": {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {}},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = [
        (b"mcp-protocol-version", version_header),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", name_header),
    ]
    head = read_stateless_head(peek(body.encode()).message, headers, (REV,))
    assert head is not None
    StatelessChecks(SUPPORTED, no_header_params).check(head, dict(reversed(headers)))


@pytest.mark.parametrize(
    ("name", "sent"),
    [
        ("add", b"add"),
        ("add", b" add\t"),  # optional whitespace around a value is not part of it
        ("add", b"=?base64?YWRk?="),  # a plain value may be sent encoded too
        ("two words", b"two words"),
        ("caf\u00e9", encode_value("caf\u00e9").encode()),
        ("=?base64?YWRk?=", encode_value("=?base64?YWRk?=").encode()),
    ],
)
def test_a_header_carrying_the_value_passes_every_time(name: str, sent: bytes) -> None:
    for _ in range(3):
        check(name, sent)


@pytest.mark.parametrize(
    ("name", "sent"),
    [
        ("add", b"sub"),
        ("add", b"ADD"),
        (" add", b" add"),  # the body's space is part of the name; the header's is not
        ("caf\u00e9", "caf\u00e9".encode()),  # not ASCII: it must be encoded
        ("=?base64?YWRk?=", b"=?base64?YWRk?="),  # sent plain, it reads as "add"
        ("tab\there", b"tab\there"),  # a control character travels encoded only
    ],
)
def test_a_header_not_carrying_the_value_is_a_mismatch_every_time(name: str, sent: bytes) -> None:
    for _ in range(3):
        with pytest.raises(HeaderMismatch):
            check(name, sent)


def test_the_version_header_is_compared_with_the_meta_the_same_way() -> None:
    check("add", b"add", b" 2026-07-28 ")
    with pytest.raises(HeaderMismatch):
        check("add", b"add", b"2025-11-25")


def _answer(rid: Any, **member: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, **member}, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (_answer(1, result={"contents": [{"uri": "u", "text": "x" * 100_000}]}), 200),
        # "error" in a result, as a value and as a key, is not the envelope's.
        (_answer(2, result={"level": "error", "error": {"code": -32601}}), 200),
        (_answer('a"error":{"code":-32601}', result={}), 200),
        (_answer(3, error={"code": -32601, "message": "no such method"}), 404),
        (_answer(4, error={"code": -32601, "message": "m", "data": {"result": 1}}), 404),
        (_answer(5, error={"code": -32603, "message": "internal"}), 200),
        # Other key orders than mcptrio's own.
        (b'{"error":{"code":-32601,"message":"m"},"id":6,"jsonrpc":"2.0"}', 404),
        (b'{"result":{"error":{"code":-32601}},"id":7,"jsonrpc":"2.0"}', 200),
        (b'{"jsonrpc": "2.0", "id": 8, "error": {"code": -32601, "message": "m"}}', 404),
    ],
)
def test_an_answers_http_status_comes_from_its_envelope_error_alone(
    answer: bytes, status: int
) -> None:
    assert answer_status(answer) == status


# ------------------------------------------------------------------ headers found to agree, kept


def _post(
    method: str = "tools/call",
    name: str = "add",
    *,
    version: str = REV,
    capabilities: Any = None,
    arguments: dict[str, Any] | None = None,
    headers: dict[bytes, bytes] | None = None,
) -> tuple[Any, dict[bytes, bytes]]:
    """A stateless-era POST's head and header fields; the headers carry what the body says
    unless ``headers`` replaces some."""
    member = "uri" if method == "resources/read" else "name"
    params: dict[str, Any] = {
        member: name,
        "arguments": arguments or {},
        "_meta": {
            PROTOCOL_VERSION_KEY: version,
            CLIENT_CAPABILITIES_KEY: {} if capabilities is None else capabilities,
        },
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    fields = {
        b"mcp-protocol-version": version.encode(),
        b"mcp-method": method.encode(),
        b"mcp-name": name.encode(),
        **(headers or {}),
    }
    head = read_stateless_head(peek(body.encode()).message, list(fields.items()), (REV,))
    assert head is not None
    return head, fields


@pytest.mark.parametrize(
    ("changed", "error"),
    [
        # The same headers, another body.
        ({"name": "sub", "headers": {b"mcp-name": b"add"}}, HeaderMismatch),
        ({"method": "resources/read", "headers": {b"mcp-method": b"tools/call"}}, HeaderMismatch),
        ({"version": "2025-11-25", "headers": {b"mcp-protocol-version": REV.encode()}}, McpError),
        # The same body, other headers.
        ({"headers": {b"mcp-name": b"sub"}}, HeaderMismatch),
        ({"headers": {b"mcp-method": b"tools/list"}}, HeaderMismatch),
        ({"headers": {b"mcp-protocol-version": b"2025-11-25"}}, HeaderMismatch),
        # Checks that read what the kept headers do not say run on every request.
        ({"capabilities": []}, McpError),
    ],
)
def test_headers_kept_as_agreeing_are_checked_again_when_the_request_differs(
    changed: dict[str, Any], error: type[Exception]
) -> None:
    # One checks object for every request, as the endpoint has: the first request's headers
    # are kept as agreeing with its body; a request that differs in anything must not pass
    # on the strength of that.
    checks = StatelessChecks(SUPPORTED, no_header_params)
    for _ in range(2):
        checks.check(*_post())
    with pytest.raises(error):
        checks.check(*_post(**changed))
    checks.check(*_post())


def test_a_tools_mcp_param_headers_are_checked_on_every_request_with_kept_headers() -> None:
    annotated = {("region",): "Region"}
    checks = StatelessChecks(SUPPORTED, lambda name: annotated if name == "add" else None)
    sent = {b"mcp-param-region": b"eu"}
    checks.check(*_post(arguments={"region": "eu"}, headers=sent))
    with pytest.raises(HeaderMismatch, match="Mcp-Param-Region"):
        checks.check(*_post(arguments={"region": "us"}, headers=sent))
    with pytest.raises(HeaderMismatch, match="Missing Mcp-Param-Region"):
        checks.check(*_post(arguments={"region": "eu"}))
    checks.check(*_post(arguments={"region": "eu"}, headers=sent))
