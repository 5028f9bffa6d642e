"""What an unreadable frame was: whose answer, or whose request.

A frame that is not JSON, or is nested deeper than the decoder goes (a result ~1,000 levels
deep), gets a parse error with ``id`` null, which its sender cannot match to anything: a call
whose answer could not be read would wait for it forever, on either side. Encoders write
``jsonrpc``, ``id`` and ``method`` before ``params``, ``result`` or ``error``, so the members a
frame begins with still say, without reading the part that failed, whether it answered one of
this side's requests (that call then fails with the parse error) or was a request too deep to
read (answered with its id, so the peer's call fails). A frame that is not JSON is never
answered with an id: JSON-RPC says an id that could not be read is null.
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any

import msgspec

from .base import RequestId
from .codec import NESTED_TOO_DEEP, UNDECODABLE
from .errors import ParseError

__all__ = ["LEADING_LOOK_BYTES", "LEADING_LOOK_MEMBERS", "leading_members", "owner_of"]

#: How far into an unreadable frame :func:`leading_members` looks, and how many members.
LEADING_LOOK_BYTES = 4096
LEADING_LOOK_MEMBERS = 8
_OBJECT_START = re.compile(rb"\s*\{")
# One member whose value is a scalar (string, number, true, false, null), and what follows it.
_SCALAR_MEMBER = re.compile(
    rb'\s*("(?:[^"\\\x00-\x1f]|\\.)*")\s*:\s*'
    rb'("(?:[^"\\\x00-\x1f]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
    rb"|true|false|null)\s*([,}])"
)
_decoder = msgspec.json.Decoder()
_KEY = re.compile(rb'\s*("(?:[^"\\\x00-\x1f]|\\.)*")\s*:')


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


def owner_of(
    frame: bytes,
    error: ParseError,
    pending: Container[RequestId],
    in_flight: Container[RequestId],
) -> tuple[RequestId | None, bool]:
    """For an unreadable ``frame`` (``error``): ``(rid, True)`` when it answered ``rid``, one of
    the ``pending`` requests; else ``(rid, False)`` with the id to answer it with, ``None``
    unless it was a request nested too deeply whose id is not one ``in_flight``."""
    members, nested = leading_members(frame) or ({}, None)
    rid = members.get("id")
    if type(rid) is not int and type(rid) is not str:
        return None, False
    if "method" not in members and nested in ("result", "error") and rid in pending:
        return rid, True
    deep = error.message.endswith(NESTED_TOO_DEEP)
    if deep and isinstance(members.get("method"), str) and rid not in in_flight:
        return rid, False
    return None, False
