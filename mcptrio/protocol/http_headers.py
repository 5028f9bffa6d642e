"""The request headers of Streamable HTTP in the stateless era (2026-07-28, SEP-2243).

Every POST carries ``MCP-Protocol-Version``, ``Mcp-Method`` and, for ``tools/call``,
``resources/read`` and ``prompts/get``, ``Mcp-Name`` (the tool or prompt name, or the URI); a
tool argument whose input-schema property is annotated ``x-mcp-header: Name`` travels as
``Mcp-Param-Name`` too. Values that are not plain visible ASCII are sent as
``=?base64?<base64 of the UTF-8>?=``, and so is a plain value that looks like that sentinel.
A server decodes before comparing and answers a missing, malformed or mismatching header with
400 and -32020 (:class:`~mcptrio.protocol.errors.HeaderMismatch`).

This module is sans-IO and shared by both sides: :func:`encode_value` / :func:`decode_value`,
:func:`name_of` (the ``Mcp-Name`` a message needs), :func:`header_params` (the annotated
parameters of a tool schema, validated as CHECKLIST 10.14 says) and :func:`param_value`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from .errors import HeaderMismatch

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "InvalidHeaderAnnotation",
    "RequestHead",
    "RequestHeadParams",
    "decode_value",
    "encode_value",
    "header_params",
    "name_of",
    "param_value",
    "read_request_head",
    "same_param",
]

PROTOCOL_VERSION_HEADER: Final = b"mcp-protocol-version"
METHOD_HEADER: Final = b"mcp-method"
NAME_HEADER: Final = b"mcp-name"
PARAM_HEADER_PREFIX: Final = b"mcp-param-"

#: The methods whose ``Mcp-Name`` is required, with the params member it repeats.
_NAMED: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
_SENTINEL = re.compile(r"\A=\?base64\?(.*)\?=\Z", re.DOTALL)
# Visible ASCII and inner spaces are sent as they are; anything else is encoded.
_PLAIN = re.compile(r"\A[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?\Z")
# RFC 9110 token characters: what an x-mcp-header name may hold.
_TOKEN = re.compile(r"\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_MAX_SAFE_INTEGER: Final = 2**53 - 1


class _HeadFrame(msgspec.Struct):
    method: str | UnsetType = UNSET
    params: RequestHeadParams | UnsetType = UNSET


class InvalidHeaderAnnotation(ValueError):
    """A tool's ``x-mcp-header`` annotations break the rules (the tool is unusable over HTTP)."""


def encode_value(value: str) -> str:
    """``value`` as a header value: as it is when plain, else in the base64 sentinel."""
    if _PLAIN.match(value) and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_value(raw: bytes) -> str:
    """A received header value, the sentinel decoded; :class:`HeaderMismatch` if malformed."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise HeaderMismatch("Header value is not ASCII") from None
    match = _SENTINEL.match(text)
    if match is None:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            raise HeaderMismatch("Header value holds control characters")
        return text
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise HeaderMismatch("Header value has a malformed base64 encoding") from None


def name_of(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The ``Mcp-Name`` a request of ``method`` with ``params`` needs (``None``: no header)."""
    member = _NAMED.get(method)
    if member is None:
        return None
    value = (params or {}).get(member)
    return value if isinstance(value, str) else None


def header_params(input_schema: Mapping[str, Any]) -> dict[str, str]:
    """The annotated parameters of a tool's input schema: argument name -> header name.

    Raises :class:`InvalidHeaderAnnotation` where the annotations break the rules: a name that
    is empty or not a token, two names equal but for case, an annotation on a type other than
    string, integer or boolean. Only top-level ``properties`` count (nothing reached through
    items, composition, conditionals or ``$ref``).
    """
    found: dict[str, str] = {}
    seen: set[str] = set()
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return found
    for argument, schema in properties.items():
        if not isinstance(schema, Mapping) or "x-mcp-header" not in schema:
            continue
        name = schema["x-mcp-header"]
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise InvalidHeaderAnnotation(f"x-mcp-header of {argument!r} is not a header token")
        if name.lower() in seen:
            raise InvalidHeaderAnnotation(f"x-mcp-header {name!r} is used twice")
        if schema.get("type") not in ("string", "integer", "boolean"):
            raise InvalidHeaderAnnotation(
                f"x-mcp-header on {argument!r}: only string, integer and boolean are allowed"
            )
        seen.add(name.lower())
        found[argument] = name
    return found


def param_value(value: Any) -> str | None:
    """The ``Mcp-Param-*`` value of an argument (``None``: no header, for null or absent)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INTEGER:
            raise HeaderMismatch("Integer outside the range a header may carry")
        return str(value)
    if isinstance(value, str):
        return encode_value(value)
    raise HeaderMismatch(f"A {type(value).__name__} argument cannot travel in a header")


def same_param(header: str, value: Any) -> bool:
    """Whether a decoded ``Mcp-Param-*`` header carries argument ``value`` (numbers by value)."""
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(header) == value
        except ValueError:
            return False
    return isinstance(value, str) and header == value


class RequestHeadParams(msgspec.Struct):
    """The members of a request's params that its headers repeat."""

    name: Any = UNSET
    uri: Any = UNSET
    arguments: Any = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class RequestHead(msgspec.Struct):
    """What the headers of a request repeat of its body: its method and some of its params."""

    method: str
    params: RequestHeadParams


_head_decoder = msgspec.json.Decoder(_HeadFrame | list[Any])


def read_request_head(body: bytes) -> RequestHead | None:
    """The head of the lone request or notification in ``body`` (``None``: none, or a batch)."""
    try:
        decoded = _head_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if isinstance(decoded, list) or isinstance(decoded.method, UnsetType):
        return None
    params = decoded.params if isinstance(decoded.params, RequestHeadParams) else None
    return RequestHead(decoded.method, params or RequestHeadParams())
