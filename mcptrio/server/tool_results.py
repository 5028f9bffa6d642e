"""What a tool returned, as a ``CallToolResult`` in the newest shape.

Content (a tool without an ``outputSchema``), by what the function returned:

==============================================  ============================================
returned                                        content
==============================================  ============================================
``str``                                         one ``TextContent``
``None``                                        no content (an empty list)
a content block (text, image, audio,            the block as it is
resource link, embedded resource)
:class:`~mcptrio.server.media.Image` /          ``ImageContent`` / ``AudioContent`` /
``Audio`` / ``File``                            ``EmbeddedResource``
``bytes`` (and ``bytearray``, ``memoryview``)   an ``EmbeddedResource`` with a base64 blob of
                                                type ``application/octet-stream`` (as FastMCP
                                                does: bytes are not assumed to be an image;
                                                return ``Image(data)`` for that)
a list or tuple holding any of the above        each item converted, in order, concatenated
                                                (other items there become JSON text)
``CallToolResult``                              the result as it is
anything else (numbers, dicts, Structs,         one ``TextContent`` holding its JSON
dataclasses, lists of data...)
==============================================  ============================================

Structured output (a tool with an ``outputSchema``, see :mod:`mcptrio.server.schema`): the value
is validated against the return annotation, and sent as ``structuredContent`` (wrapped as
``{"result": value}`` when its schema is not an object) together with one ``TextContent``
holding the value's JSON, which the spec asks for the sake of clients that ignore
``structuredContent``.

Revisions: the result is built for the newest revision; the session's connection fits it to the
negotiated one (:mod:`mcptrio.protocol.fitting`: before 2025-06-18 only the text of structured
output is sent and a resource link becomes a text block naming it; before 2025-03-26 audio
becomes a text note).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import msgspec

from ..protocol.types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from .media import Media, attachment_uri
from .pydantic_values import encode_model
from .schema import OutputPlan

__all__ = [
    "ToolOutputError",
    "error_result",
    "structured_result",
    "to_call_tool_result",
    "to_content",
]

_BLOCK_TYPES = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
)
_BYTES_TYPES = (bytes, bytearray, memoryview)
_JSON_SCALARS = frozenset({int, float, str, bool})
_CONTENT_LIKE = (str, Media, *_BYTES_TYPES, *_BLOCK_TYPES)

# A pydantic model inside a result (a tool without an outputSchema) is written as its JSON-mode
# dump; the hook runs only for types msgspec does not know.
_encoder = msgspec.json.Encoder(enc_hook=encode_model)


class ToolOutputError(ValueError):
    """A structured tool returned a value that does not fit its return annotation."""


def error_result(message: str) -> CallToolResult:
    """A tool error: ``isError: true`` and the message as text (the model reads it)."""
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


def to_call_tool_result(value: Any) -> CallToolResult:
    """The result for a tool without an ``outputSchema`` that returned ``value``.

    Raises ``TypeError`` when ``value`` (or an item of it) cannot be encoded as JSON.
    """
    convert = _CONVERTERS.get(type(value))
    if convert is not None:  # the common types: to_content's first step, without its call
        return CallToolResult(content=convert(value))
    if isinstance(value, CallToolResult):
        return value
    return CallToolResult(content=to_content(value))


def structured_result(value: Any, plan: OutputPlan) -> CallToolResult:
    """The result for a tool with an ``outputSchema``; ``ToolOutputError`` on a bad value."""
    if type(value) is plan.return_type and plan.return_type in _JSON_SCALARS:
        data = value  # already exactly what the annotation says, and already JSON
    elif isinstance(value, CallToolResult):
        return value
    else:
        data = _checked_builtins(value, plan)
    text = TextContent(text=_encoder.encode(data).decode())
    structured = {"result": data} if plan.wrapped else data
    return CallToolResult(content=[text], structured_content=structured)


def _checked_builtins(value: Any, plan: OutputPlan) -> Any:
    """``value`` as JSON-ready builtins, after checking it against the return annotation."""
    try:
        if plan.dump is not None:
            return plan.dump(value)
        if plan.unstructure is None:
            data = msgspec.to_builtins(value, str_keys=True)
        else:
            data = plan.unstructure(value)
        msgspec.convert(data, plan.return_type, str_keys=True)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise ToolOutputError(
            f"returned {type(value).__name__} does not match its return type"
            f" {_type_name(plan.return_type)}: {exc}"
        ) from None
    return data


def to_content(value: Any) -> list[ContentBlock]:
    """The content blocks ``value`` becomes (see the module docstring), in the newest revision."""
    convert = _CONVERTERS.get(type(value))
    if convert is not None:
        return convert(value)
    if isinstance(value, _BLOCK_TYPES):
        return [value]
    if isinstance(value, Media):
        return [value.to_content()]
    if isinstance(value, str):
        return [TextContent(text=str(value))]
    if isinstance(value, _BYTES_TYPES):
        return _bytes_content(value)
    if isinstance(value, list | tuple) and any(_is_content_like(item) for item in value):
        blocks: list[ContentBlock] = []
        for item in value:
            blocks.extend(to_content(item) if _is_content_like(item) else _json_content(item))
        return blocks
    return _json_content(value)


def _is_content_like(value: Any) -> bool:
    return isinstance(value, _CONTENT_LIKE)


def _bytes_content(value: bytes | bytearray | memoryview) -> list[ContentBlock]:
    blob = base64.b64encode(value).decode("ascii")
    contents = ResourceContents(
        uri=attachment_uri("result.bin"), mime_type="application/octet-stream", blob=blob
    )
    return [EmbeddedResource(resource=contents)]


def _json_content(value: Any) -> list[ContentBlock]:
    return [TextContent(text=_encoder.encode(value).decode())]


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp)


_CONVERTERS: dict[type, Callable[[Any], list[ContentBlock]]] = {
    str: lambda v: [TextContent(text=v)],
    type(None): lambda v: [],
    TextContent: lambda v: [v],
    ImageContent: lambda v: [v],
    EmbeddedResource: lambda v: [v],
    AudioContent: lambda v: [v],
    ResourceLink: lambda v: [v],
    int: _json_content,
    float: _json_content,
    bool: _json_content,
    dict: _json_content,
    bytes: _bytes_content,
}
