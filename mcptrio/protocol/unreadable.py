"""What a frame too deep to read was: whose answer, or whose request.

msgspec reads nesting down to Python's recursion limit, about a thousand levels: a deeper
frame is a parse error, answered with ``id`` null, which its sender cannot match to anything,
though its JSON may be valid (a server can write a result its client cannot read, each side's
stack being as deep as its own). A call whose answer was such a frame would wait for it
forever, on either side. Most encoders write ``jsonrpc``, ``id`` and ``method`` before
``params``, ``result`` or ``error``, so the members such a frame begins with still say,
without reading the part that failed, whether it answered one of this side's requests (that
call then fails with a parse error) or was a request (answered with its id, so the peer's call
fails). Some write the ``id`` last (the TypeScript SDK): the members it ends with say then.

A frame over the size limit is in the same case: a transport drops it unread, but keeps how it
began and ended (:class:`~mcptrio.runtime.transport.OversizedFrame`), so the call it answered
fails at once (a :class:`~.errors.TransportError`), or the request it was is refused with its
id.

Only frames too deep to read, or too large, are looked at this way: bytes that are not JSON are
only a guess about whose they were (a stray line that begins like an answer), and JSON-RPC says
an id that could not be read is null. A batch (a JSON array) is not looked into: one item too
deep to read makes the whole batch a parse error, as before.
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any

import msgspec

from .base import RequestId
from .codec import NESTED_TOO_DEEP, UNDECODABLE
from .errors import ParseError

__all__ = [
    "LEADING_LOOK_BYTES",
    "LEADING_LOOK_MEMBERS",
    "leading_members",
    "owner_by_head",
    "owner_of",
    "trailing_members",
    "unreadable_message_id",
]

#: How far into an unreadable frame :func:`leading_members` looks, and how many members.
LEADING_LOOK_BYTES = 1024
LEADING_LOOK_MEMBERS = 8
_OBJECT_START = re.compile(rb"\s*\{")
# A JSON string, written as an unrolled loop (runs of plain characters, then one escape) with
# possessive quantifiers: nothing is ever given back, so a string that does not end within the
# head fails in one pass over it, where an alternation per character or backtracking one
# character at a time would make the look cost many times what trying to decode the frame
# does. Numbers and spaces are possessive likewise.
_STRING = rb'"[^"\\\x00-\x1f]*+(?:\\.[^"\\\x00-\x1f]*+)*+"'
# One member whose value is a scalar (string, number, true, false, null), and what follows it.
_SCALAR = _STRING + rb"|-?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?+[0-9]++)?+|true|false|null"
_SCALAR_MEMBER = re.compile(rb"\s*+(" + _STRING + rb")\s*+:\s*+(" + _SCALAR + rb")\s*+([,}])")
_KEY = re.compile(rb"\s*+(" + _STRING + rb")\s*+:")
# The last member of what is left of an object (its closing brace taken off), if its value is a
# scalar: a search, anchored at the end, that fails at once wherever no "," or "{" stands.
_LAST_MEMBER = re.compile(rb"([,{])\s*+(" + _STRING + rb")\s*+:\s*+(" + _SCALAR + rb")\s*+\Z")
_decoder = msgspec.json.Decoder()


def leading_members(frame: bytes) -> tuple[dict[str, Any], str | None] | None:
    """For a frame that did not decode: the members its object begins with whose values are
    scalars, and the key of the first member that is not one (``None`` if there is none).

    Encoders write ``jsonrpc``, ``id`` and ``method`` before ``params`` or ``result``, so this
    tells what an unreadable message was (a request, a response to which request) without
    reading the part that failed. Only the first :data:`LEADING_LOOK_BYTES` bytes and
    :data:`LEADING_LOOK_MEMBERS` members are looked at: a frame that does not begin like a
    message costs no more than one that does. ``None`` if the frame does not begin as an
    object of such members.
    """
    head = frame[:LEADING_LOOK_BYTES]
    start = _OBJECT_START.match(head)
    if start is None:
        return None
    members: dict[str, Any] = {}
    at = start.end()
    try:
        for _ in range(LEADING_LOOK_MEMBERS):
            member = _SCALAR_MEMBER.match(head, at)
            if member is None:
                key = _KEY.match(head, at)
                return members, None if key is None else _decoder.decode(key.group(1))
            members[_decoder.decode(member.group(1))] = _decoder.decode(member.group(2))
            if member.group(3) == b"}":
                return members, None
            at = member.end()
    except UNDECODABLE:  # a bad escape or bad UTF-8 in a string
        return None
    return members, None


def trailing_members(tail: bytes) -> dict[str, Any]:
    """The members whose values are scalars that an object ends with (at most
    :data:`LEADING_LOOK_MEMBERS`), read back from the end of ``tail``, a frame's last bytes.

    Some encoders write the ``id`` last (the TypeScript SDK: ``{result, jsonrpc, id}``,
    ``{method, params, jsonrpc, id}``). In JSON the last ``}`` closes the outermost object, so
    the scalar members just before it are that object's own: a nested object's members are
    followed by its own brace, a string's contents cannot hold an unescaped quote.
    """
    text = tail[-LEADING_LOOK_BYTES:].rstrip()
    members: dict[str, Any] = {}
    if not text.endswith(b"}"):
        return members
    text = text[:-1]
    try:
        for _ in range(LEADING_LOOK_MEMBERS):
            member = _LAST_MEMBER.search(text)
            if member is None:
                break
            members.setdefault(_decoder.decode(member.group(2)), _decoder.decode(member.group(3)))
            if member.group(1) == b"{":
                break
            text = text[: member.start()]
    except UNDECODABLE:  # a bad escape or bad UTF-8 in a string
        return {}
    return members


def unreadable_message_id(frame: bytes, tail: bytes | None = None) -> tuple[RequestId, bool] | None:
    """The id of the message a frame too deep to read begins as, and whether that message is a
    response (``False``: a request); ``None`` for a notification, a batch, or a frame that does
    not begin with its ``id`` (and ``method``) before its first member that is not a scalar,
    nor end with its ``id``. ``tail``: the frame's last bytes when ``frame`` is only how it
    began (``b""``: not known); ``None`` when ``frame`` is whole."""
    members, nested = leading_members(frame) or ({}, None)
    rid = members.get("id")
    if type(rid) is not int and type(rid) is not str:
        if nested is None:
            return None
        rid = trailing_members(frame if tail is None else tail).get("id")
        if type(rid) is not int and type(rid) is not str:
            return None
    if "method" not in members:
        return (rid, True) if nested in ("result", "error") else None
    return (rid, False) if isinstance(members["method"], str) else None


def owner_of(
    frame: bytes,
    error: ParseError,
    pending: Container[RequestId],
    in_flight: Container[RequestId],
) -> tuple[RequestId, bool] | None:
    """For an unreadable ``frame`` (``error``): ``(rid, True)`` when it was too deep to read
    and answered ``rid``, one of the ``pending`` requests; ``(rid, False)`` when it was a
    request too deep to read, to answer with its id ``rid`` (not one ``in_flight``: an answer
    with it would be taken for that request's); else ``None`` (answered with ``id`` null)."""
    if not error.message.endswith(NESTED_TOO_DEEP):
        return None
    return _owner(unreadable_message_id(frame), pending, in_flight)


def owner_by_head(
    head: bytes, tail: bytes, pending: Container[RequestId], in_flight: Container[RequestId]
) -> tuple[RequestId, bool] | None:
    """:func:`owner_of` for a frame that began with ``head`` and ended with ``tail`` (``b""``:
    not known) and was not read at all: one over the size limit, which the transport dropped
    but for those (there is no doubt that it was unreadable, only about whose it was, which its
    first or last members say)."""
    return _owner(unreadable_message_id(head, tail), pending, in_flight)


def _owner(
    found: tuple[RequestId, bool] | None,
    pending: Container[RequestId],
    in_flight: Container[RequestId],
) -> tuple[RequestId, bool] | None:
    if found is None:
        return None
    rid, response = found
    if response:
        return found if rid in pending else None
    return None if rid in in_flight else found
