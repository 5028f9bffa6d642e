"""The long strings of a result, written by orjson and spliced into msgspec's encoding.

msgspec writes a string by looking at each of its bytes for one JSON must escape: about
0.38 ns a byte on the benchmark machine, so 39 µs of the 40 µs that encoding a 100 KiB
``resources/read`` answer costs. orjson does the same job 32 bytes at a time (SIMD): 3.5 µs for
the same string, with the same bytes out (both escape ``"``, ``\\`` and the control characters,
and write the rest as UTF-8; tested). So a long string of a result is written by orjson and
handed to msgspec as :class:`msgspec.Raw`, which msgspec copies as it is: 9 µs in all for that
answer (measured 2026-11-29, ``benchmarks``' fixture), and every other value of the message is
msgspec's as before.

Where to look. An MCP result carries its payload in a few members, so only those are looked at,
never a walk of the whole result (a ``tools/list`` of 48 tools would pay more for the walk
than it could save): the ``text``, ``data`` and ``blob`` of the content blocks and resource
contents of ``tools/call``, ``resources/read``, ``prompts/get`` and ``sampling/createMessage``
results. A string of another member (``structuredContent``, say) is written by msgspec, as
every string is when orjson is not installed (it is a dependency on CPython only: PyPy has no
wheel of it).

The result the handler returned is left as it was: the structs and lists on the way to a long
string are copied (:func:`msgspec.structs.replace`), the rest is shared. A string orjson
refuses (one holding a lone surrogate) stays a string, so msgspec refuses it as it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from .types import (
    AudioContent,
    CallToolResult,
    CreateMessageResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    ResourceContents,
    TextContent,
)

try:
    import orjson
except ImportError:  # pragma: no cover - PyPy, or a platform without orjson's wheel
    orjson = None  # type: ignore[assignment]

__all__ = ["LONG_STRING", "escape_long_strings"]

#: The length from which orjson writes a string: below it, making the ``Raw`` and copying the
#: struct cost more than msgspec's scan (the two meet at about 1,800 characters here).
LONG_STRING: Final = 2048


def _escaped(text: str) -> str | msgspec.Raw:
    assert orjson is not None
    try:
        return msgspec.Raw(orjson.dumps(text))
    except TypeError:  # a lone surrogate: no UTF-8 holds it, and msgspec says so as before
        return text


def _contents(contents: ResourceContents) -> ResourceContents:
    text, blob = contents.text, contents.blob
    if text is not None and len(text) >= LONG_STRING:
        return replace(contents, text=_escaped(text))
    if blob is not None and len(blob) >= LONG_STRING:
        return replace(contents, blob=_escaped(blob))
    return contents


def _block(block: Any) -> Any:
    cls = block.__class__
    if cls is TextContent:
        if len(block.text) >= LONG_STRING:
            return replace(block, text=_escaped(block.text))
    elif cls is ImageContent or cls is AudioContent:
        if len(block.data) >= LONG_STRING:
            return replace(block, data=_escaped(block.data))
    elif cls is EmbeddedResource:
        resource = _contents(block.resource)
        if resource is not block.resource:
            return replace(block, resource=resource)
    elif cls is ResourceContents:
        return _contents(block)
    return block


def _each(items: list[Any], one: Callable[[Any], Any]) -> list[Any]:
    """``items`` with ``one`` applied to each: the same list when nothing changed."""
    copied: list[Any] | None = None
    for index, item in enumerate(items):
        new = one(item)
        if new is not item:
            if copied is None:
                copied = list(items)
            copied[index] = new
    return items if copied is None else copied


def _message(message: Any) -> Any:
    if message.__class__ is not PromptMessage:
        return message
    content = _block(message.content)
    return message if content is message.content else replace(message, content=content)


def _call_tool(result: CallToolResult) -> CallToolResult:
    content = _each(result.content, _block)
    return result if content is result.content else replace(result, content=content)


def _read_resource(result: ReadResourceResult) -> ReadResourceResult:
    contents = _each(result.contents, _block)
    return result if contents is result.contents else replace(result, contents=contents)


def _get_prompt(result: GetPromptResult) -> GetPromptResult:
    messages = _each(result.messages, _message)
    return result if messages is result.messages else replace(result, messages=messages)


def _create_message(result: CreateMessageResult) -> CreateMessageResult:
    content = result.content
    new = _each(content, _block) if isinstance(content, list) else _block(content)
    return result if new is content else replace(result, content=new)


_BY_TYPE: Final[dict[type[Any], Callable[[Any], Any]]] = {
    CallToolResult: _call_tool,
    ReadResourceResult: _read_resource,
    GetPromptResult: _get_prompt,
    CreateMessageResult: _create_message,
}


def escape_long_strings(result: Any) -> Any:
    """``result`` to encode, its long payload strings already written as JSON (see above)."""
    if orjson is None:
        return result
    escape = _BY_TYPE.get(result.__class__)
    return result if escape is None else escape(result)
