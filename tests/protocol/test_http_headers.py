"""The header codec of the stateless era: the base64 sentinel, Mcp-Name, x-mcp-header."""

from __future__ import annotations

import pytest

from mcptrio.protocol import http_headers as hh
from mcptrio.protocol.errors import HeaderMismatch


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("", "=?base64??="),
        ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),  # looks like the sentinel
    ],
)
def test_values_that_are_not_plain_travel_in_the_base64_sentinel(value: str, wire: str) -> None:
    assert hh.encode_value(value) == wire
    assert hh.decode_value(wire.encode()) == value


@pytest.mark.parametrize(
    "raw", [b"=?base64?SGVsbG8?=", b"=?base64?SGVs!!!bG8=?=", b"a\x01b", "é".encode()]
)
def test_malformed_values_are_a_header_mismatch(raw: bytes) -> None:
    with pytest.raises(HeaderMismatch):
        hh.decode_value(raw)


def test_a_value_without_the_whole_sentinel_is_literal() -> None:
    assert hh.decode_value(b"=?base64?SGVsbG8=") == "=?base64?SGVsbG8="
    assert hh.decode_value(b"SGVsbG8=") == "SGVsbG8="


def test_mcp_name_repeats_the_name_or_uri_of_three_methods() -> None:
    assert hh.name_of("tools/call", {"name": "add"}) == "add"
    assert hh.name_of("prompts/get", {"name": "p"}) == "p"
    assert hh.name_of("resources/read", {"uri": "file:///x"}) == "file:///x"
    assert hh.name_of("tools/list", {}) is None


def test_header_params_follows_chains_of_properties_keys() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": ["boolean", "null"], "x-mcp-header": "Flag"},
            "plain": {"type": "string", "default": {"x-mcp-header": "data, not a schema"}},
            "nested": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
        },
    }
    assert hh.header_params(schema) == {
        ("region",): "Region",
        ("n",): "N",
        ("flag",): "Flag",
        ("nested", "zone"): "Zone",
    }


def test_param_headers_of_a_call_read_each_path_and_omit_null_or_absent() -> None:
    annotated = {("region",): "Region", ("n",): "N", ("nested", "zone"): "Zone", ("f",): "F"}
    arguments = {"region": " eu ", "n": 7, "nested": {"zone": "b"}, "f": None}
    assert hh.param_headers(annotated, arguments) == [
        ("Mcp-Param-Region", "=?base64?IGV1IA==?="),
        ("Mcp-Param-N", "7"),
        ("Mcp-Param-Zone", "b"),
    ]
    assert hh.param_headers(annotated, {"nested": "not an object"}) == []


_STRING_X = {"type": "string", "x-mcp-header": "X"}


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": ["string", "integer"], "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "bad\r\nname"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": 3}}},
        {"properties": {"a": _STRING_X, "b": {"type": "string", "x-mcp-header": "x"}}},
        {"properties": {"a": _STRING_X, "n": {"type": "object", "properties": {"b": _STRING_X}}}},
        # Not reachable through properties keys alone.
        {"properties": {"a": {"type": "array", "items": _STRING_X}}},
        {"properties": {"a": {"anyOf": [_STRING_X, {"type": "integer"}]}}},
        {"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": _STRING_X}},
        {"if": {"properties": {"a": _STRING_X}}, "then": {}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_annotations_that_break_the_rules_are_refused(schema: dict[str, object]) -> None:
    with pytest.raises(hh.InvalidHeaderAnnotation):
        hh.header_params({"type": "object", **schema})


def test_param_values_and_their_comparison() -> None:
    assert hh.param_value(True) == "true" and hh.param_value(False) == "false"
    assert hh.param_value(42) == "42" and hh.param_value(None) is None
    assert hh.param_value("Hello, 世界").startswith("=?base64?")
    assert hh.same_param("042", 42) and not hh.same_param("4.2", 42)
    assert hh.same_param("true", True) and not hh.same_param("True", True)
    with pytest.raises(HeaderMismatch):
        hh.param_value(2**60)
