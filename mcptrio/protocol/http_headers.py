"""The request headers of Streamable HTTP in the stateless era (2026-07-28, SEP-2243).

Every POST carries ``MCP-Protocol-Version``, ``Mcp-Method`` and, for ``tools/call``,
``resources/read`` and ``prompts/get``, ``Mcp-Name`` (the tool or prompt name, or the URI; for
the tasks extension's ``tasks/get``, ``tasks/update`` and ``tasks/cancel``, the task id, so that
intermediaries can route a task's requests to where it lives, SEP-2663); a
tool argument whose input-schema property is annotated ``x-mcp-header: Name`` travels as
``Mcp-Param-Name`` too. Values that are not plain visible ASCII are sent as
``=?base64?<base64 of the UTF-8>?=``, and so is a plain value that looks like that sentinel.
A server decodes before comparing and answers a missing, malformed or mismatching header with
400 and -32020 (:class:`~mcptrio.protocol.errors.HeaderMismatch`).

This module is sans-IO and shared by both sides: :func:`encode_value` / :func:`decode_value`,
:func:`name_of` (the ``Mcp-Name`` a message needs), :func:`header_params` (the annotated
parameters of a tool schema, validated as CHECKLIST 10.14 says), :func:`param_headers` (the
``Mcp-Param-*`` headers of a call) and :func:`same_param` with :func:`value_at` (the server's
comparison).
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
    "PropertyPath",
    "RequestHead",
    "RequestHeadParams",
    "decode_value",
    "encode_value",
    "header_params",
    "name_member",
    "name_of",
    "param_headers",
    "param_value",
    "read_request_head",
    "same_param",
    "value_at",
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
    # The tasks extension (SEP-2663, "Streamable HTTP: Routing Headers").
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_SENTINEL = re.compile(r"\A=\?base64\?(.*)\?=\Z", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
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
        if _CONTROL.search(text) is not None:
            raise HeaderMismatch("Header value holds control characters")
        return text
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise HeaderMismatch("Header value has a malformed base64 encoding") from None


def name_member(method: str) -> str | None:
    """The params member ``Mcp-Name`` repeats for ``method`` (``None``: no such header)."""
    return _NAMED.get(method)


def name_of(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The ``Mcp-Name`` a request of ``method`` with ``params`` needs (``None``: no header)."""
    member = _NAMED.get(method)
    if member is None:
        return None
    value = (params or {}).get(member)
    return value if isinstance(value, str) else None


#: A property path: the chain of ``properties`` keys from the schema root to an argument.
PropertyPath = tuple[str, ...]

# Keywords whose values are data, not schemas: an "x-mcp-header" key inside them is no annotation.
_DATA_KEYWORDS: Final = frozenset({"const", "default", "enum", "examples"})
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})


def header_params(input_schema: Mapping[str, Any]) -> dict[PropertyPath, str]:
    """The annotated parameters of a tool's input schema: property path -> header name.

    A parameter is reached from the root through ``properties`` keys alone (nested objects
    included): ``{("region",): "Region", ("target", "zone"): "Zone"}``. Raises
    :class:`InvalidHeaderAnnotation` where the annotations break the rules (CHECKLIST 10.14): a
    name that is empty or not a token, two names equal but for case, an annotation on a type
    other than string, integer or boolean, or one anywhere else than at the end of such a chain
    (under ``items``, composition, conditionals, ``$ref`` or ``$defs``, or on the root).
    """
    # Nearly every schema has no annotation at all, and a client asks for every tool of every
    # tools/list page: one encode in C and a byte search rule that out at a fraction of what the
    # walk in Python costs. The key is plain ASCII with nothing to escape, so wherever it
    # stands in the schema its encoding holds these very bytes.
    try:
        if _ANNOTATION not in _schema_encoder.encode(input_schema):
            return {}
    except (TypeError, msgspec.EncodeError):
        pass  # Not plain JSON data (built in code): the walk tells.
    found: dict[PropertyPath, str] = {}
    _walk(input_schema, (), True, found, set())
    return found


_ANNOTATION: Final = b'"x-mcp-header"'
_schema_encoder = msgspec.json.Encoder()


def _walk(
    schema: Any, path: PropertyPath, reachable: bool, found: dict[PropertyPath, str], seen: set[str]
) -> None:
    if isinstance(schema, list):
        for item in schema:
            _walk(item, path, False, found, seen)
        return
    if not isinstance(schema, Mapping):
        return
    for keyword, value in schema.items():
        if keyword == "x-mcp-header":
            if not reachable or not path:
                raise InvalidHeaderAnnotation(
                    "x-mcp-header is allowed only on a property reached through properties alone"
                )
            _annotate(schema, value, path, found, seen)
        elif keyword == "properties" and isinstance(value, Mapping):
            for name, sub in value.items():
                _walk(sub, (*path, str(name)), reachable, found, seen)
        elif keyword not in _DATA_KEYWORDS:
            _walk(value, path, False, found, seen)


def _annotate(
    schema: Mapping[str, Any],
    name: Any,
    path: PropertyPath,
    found: dict[PropertyPath, str],
    seen: set[str],
) -> None:
    where = ".".join(path)
    if not isinstance(name, str) or not _TOKEN.match(name):
        raise InvalidHeaderAnnotation(f"x-mcp-header of {where!r} is not a header token")
    if name.lower() in seen:
        raise InvalidHeaderAnnotation(f"x-mcp-header {name!r} is used twice")
    kind = schema.get("type")
    # A nullable primitive (["string", "null"]) qualifies: null travels as no header.
    kinds = [k for k in kind if k != "null"] if isinstance(kind, list) else [kind]
    if len(kinds) != 1 or kinds[0] not in _HEADER_TYPES:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header on {where!r}: only string, integer and boolean are allowed"
        )
    seen.add(name.lower())
    found[path] = name


def value_at(arguments: Mapping[str, Any] | None, path: PropertyPath) -> Any:
    """The argument at ``path`` in a call's ``arguments`` (``None`` when absent)."""
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def param_headers(
    annotated: Mapping[PropertyPath, str], arguments: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """The ``Mcp-Param-*`` headers (name, value) a ``tools/call`` with ``arguments`` carries.

    ``annotated`` is :func:`header_params` of the tool's input schema; a null or absent
    argument has no header. Raises :class:`HeaderMismatch` for an argument no header can carry
    (an integer beyond ±(2^53-1), or a value of another type than the schema's).
    """
    found: list[tuple[str, str]] = []
    for path, name in annotated.items():
        value = param_value(value_at(arguments, path))
        if value is not None:
            found.append((f"Mcp-Param-{name}", value))
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
    task_id: Any = msgspec.field(default=UNSET, name="taskId")
    arguments: Any = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")

    def member(self, name: str) -> Any:
        """The member ``Mcp-Name`` repeats, by its wire name (:func:`name_member`)."""
        return self.task_id if name == "taskId" else getattr(self, name, UNSET)


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
