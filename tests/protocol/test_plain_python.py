"""Wire types read as plain Python: an absent optional member is ``None``, never a sentinel,
whether it is read, printed or compared (item 8 of issue 19)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import msgspec

import mcptrio
from mcptrio.protocol import types as t
from mcptrio.protocol.base import WireStruct


def wire_types() -> list[type[WireStruct]]:
    return [
        cls
        for _, cls in inspect.getmembers(t, inspect.isclass)
        if issubclass(cls, WireStruct) and cls.__module__.startswith("mcptrio.protocol")
    ]


def test_no_member_of_any_wire_type_defaults_to_unset() -> None:
    assert len(wire_types()) > 100
    for cls in wire_types():
        for field in msgspec.structs.fields(cls):
            assert field.default is not msgspec.UNSET, f"{cls.__name__}.{field.name}"


def test_a_decoded_result_prints_and_reads_without_unset() -> None:
    raw = b'{"content": [{"type": "text", "text": "3"}]}'
    result = msgspec.json.decode(raw, type=t.CallToolResult)
    assert result.is_error is None and result.structured_content is None
    assert result.content[0].annotations is None  # type: ignore[union-attr]
    assert "UNSET" not in repr(result)
    assert repr(result.content[0]) == "TextContent(meta=None, annotations=None, text='3')"


def test_none_is_left_out_on_the_wire_and_null_reads_as_absent() -> None:
    tool = t.Tool(name="add", input_schema={"type": "object"})
    assert msgspec.json.encode(tool) == b'{"name":"add","inputSchema":{"type":"object"}}'
    decoded = msgspec.json.decode(b'{"name":"a","title":null,"inputSchema":{}}', type=t.Tool)
    assert decoded.title is None


#: The modules where ``UNSET`` still means something: the JSON-RPC envelope and the private
#: structs that peek into a body (an ``id`` of ``null`` is not a missing one), its re-export, and
#: a private "not seen yet" default.
UNSET_ALLOWED = {
    "protocol/base.py",
    "protocol/__init__.py",
    "protocol/types/__init__.py",
    "protocol/codec.py",
    "protocol/connection.py",
    "protocol/declared.py",
    "protocol/http_headers.py",
    "protocol/stateless.py",
    "transports/http/client/messages.py",
    "transports/http/endpoints/envelope_peek.py",
    "transports/http/endpoints/responses.py",
    "transports/http/endpoints/scope_check.py",
    "transports/http/endpoints/stateless_era.py",
    "client/output_validation.py",
}


def test_no_other_module_compares_a_member_with_unset() -> None:
    # A wire member is None when absent: `member is UNSET` would now be quietly always false.
    package = Path(mcptrio.__file__).parent
    using = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(r"\bUNSET\b", path.read_text(encoding="utf-8"))
    }
    assert using <= UNSET_ALLOWED, sorted(using - UNSET_ALLOWED)
