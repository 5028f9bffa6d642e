"""What an unreadable frame was: read from the members it begins with, never past them."""

from __future__ import annotations

from typing import Any

import pytest

from mcptrio.protocol import codec
from mcptrio.protocol.errors import ParseError
from mcptrio.protocol.unreadable import (
    LEADING_LOOK_BYTES,
    LEADING_LOOK_MEMBERS,
    leading_members,
    owner_of,
    trailing_members,
    unreadable_message_id,
)

NESTED = b"[" * 5000 + b"]" * 5000


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        pytest.param(
            b'{"jsonrpc":"2.0","id":5,"result":{"v":' + NESTED + b"}}",
            ({"jsonrpc": "2.0", "id": 5}, "result"),
            id="response",
        ),
        pytest.param(
            b' { "id" : "a\\"b" ,\n"jsonrpc": "2.0", "method": "tools/call", "params": {}}',
            ({"id": 'a"b', "jsonrpc": "2.0", "method": "tools/call"}, "params"),
            id="request-spaced-escaped",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":-12,"error":null}',
            ({"jsonrpc": "2.0", "id": -12, "error": None}, None),
            id="scalars-to-the-end",
        ),
        pytest.param(
            b'{"id":1.5e3,"ok":true,"no":false,"x":[',
            ({"id": 1500.0, "ok": True, "no": False}, "x"),
            id="numbers-and-literals",
        ),
        pytest.param(b'{"a":"\x01"}', ({}, "a"), id="control-character-in-a-value"),
        pytest.param(b'[{"id":1}]', None, id="a-batch"),
        pytest.param(b"not json", None, id="not-an-object"),
        pytest.param(b'{"id":"\\q","result":1}', None, id="bad-escape"),
        pytest.param(b'{"id":"\xc3","result":1}', None, id="bad-utf8"),
        pytest.param(b"{", ({}, None), id="cut-short"),
    ],
)
def test_leading_members_are_the_scalar_members_and_the_first_other_key(
    frame: bytes, expected: tuple[dict[str, Any], str | None] | None
) -> None:
    assert leading_members(frame) == expected


def test_leading_members_look_no_further_than_their_bounds() -> None:
    many = b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(100)) + b',"id":1}'
    found = leading_members(many)
    assert found is not None and len(found[0]) == LEADING_LOOK_MEMBERS and "id" not in found[0]
    late = b'{"pad":"' + b"x" * LEADING_LOOK_BYTES + b'","id":1,"result":1}'
    assert leading_members(late) == ({}, "pad")


def _parse_error(frame: bytes) -> ParseError:
    try:
        codec.decode_frame(frame)
    except ParseError as error:
        return error
    raise AssertionError("the frame decoded")


def test_an_unreadable_answer_to_a_pending_request_is_owned_by_that_request() -> None:
    frame = b'{"jsonrpc":"2.0","id":7,"result":{"v":' + NESTED + b"}}"
    error = _parse_error(frame)
    assert error.message.endswith(codec.NESTED_TOO_DEEP)
    assert owner_of(frame, error, {7}, set()) == (7, True)
    # The same answer to no pending request (nor to a request of another id type) owns nothing.
    assert owner_of(frame, error, {"7"}, set()) is None
    deep_error = b'{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x","data":' + NESTED + b"}}"
    assert owner_of(deep_error, _parse_error(deep_error), {7}, set()) == (7, True)
    # Not JSON: a stray line that begins like an answer is no answer (the real one may follow).
    broken = b'{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"cut'
    assert owner_of(broken, _parse_error(broken), {7}, set()) is None


def test_only_a_request_too_deep_to_read_is_answered_with_its_id() -> None:
    deep = b'{"jsonrpc":"2.0","id":"r","method":"tools/call","params":' + NESTED + b"}"
    assert owner_of(deep, _parse_error(deep), set(), set()) == ("r", False)
    # Its id is in flight already: an answer with it would be taken for that request's.
    assert owner_of(deep, _parse_error(deep), set(), {"r"}) is None
    # Not JSON: JSON-RPC says an id that could not be read is null.
    broken = b'{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"x":"cut'
    assert owner_of(broken, _parse_error(broken), set(), set()) is None
    # A notification, or an id that is not one (null, a float, a boolean).
    too_deep = ParseError(f"Parse error: {codec.NESTED_TOO_DEEP}")
    for frame in (
        b'{"jsonrpc":"2.0","method":"notifications/x","params":' + NESTED + b"}",
        b'{"jsonrpc":"2.0","id":null,"method":"x","params":' + NESTED + b"}",
        b'{"jsonrpc":"2.0","id":1.5,"method":"x","params":' + NESTED + b"}",
        b'{"jsonrpc":"2.0","id":true,"method":"x","params":' + NESTED + b"}",
    ):
        assert owner_of(frame, too_deep, {1.5, True}, set()) is None


@pytest.mark.parametrize(
    ("tail", "members"),
    [
        (b'..."}]},"jsonrpc":"2.0","id":7}', {"id": 7, "jsonrpc": "2.0"}),
        (b'..."}}, "jsonrpc" : "2.0" , "id" : "a-1" }\r\n', {"id": "a-1", "jsonrpc": "2.0"}),
        # A nested object's id is followed by its own brace, not the outermost one.
        (b'{"result":{"a":{"id":5}}}', {}),
        (b'{"result":{"items":[{"id":5}]}}', {}),
        # Quotes inside a string are escaped: no member can be read from one.
        (b'{"result":{"text":"x,\\"id\\":5"}}', {}),
        (b'{"id":3}', {"id": 3}),
        (b"not json at all", {}),
        (b'..."id":"\\q"}', {}),  # a bad escape: nothing read
    ],
)
def test_trailing_members_are_the_outermost_object_s_last_scalars(
    tail: bytes, members: dict[str, Any]
) -> None:
    assert trailing_members(tail) == members


def test_a_message_that_writes_its_id_last_is_known_by_its_tail() -> None:
    answer_head = b'{"result":{"content":[{"type":"text","text":"xxxx'
    request_head = b'{"method":"tools/call","params":{"name":"echo","arguments":{"m":"xxxx'
    tail = b'xxxx"}]},"jsonrpc":"2.0","id":9}'
    assert unreadable_message_id(answer_head, tail) == (9, True)
    assert unreadable_message_id(request_head, b'xx"}},"jsonrpc":"2.0","id":"r"}') == ("r", False)
    # Without its tail, or with one that does not say, it is nobody's.
    assert unreadable_message_id(answer_head, b"") is None
    assert unreadable_message_id(answer_head, b'xx"}]},"jsonrpc":"2.0"}') is None
    # A head that is only how the frame began is never read as its end.
    cut = b'{"result":{"a":{"id":5}'
    assert unreadable_message_id(cut, b"") is None
    # A notification has no id, however it ends.
    notification = b'{"method":"notifications/x","params":{"a":"'
    assert unreadable_message_id(notification, b'xx"}},"jsonrpc":"2.0"}') is None
