"""The long strings of a result, written by orjson and spliced into msgspec's encoding.

msgspec writes a string by looking at each of its bytes for one JSON must escape: about
0.38 ns a byte on the benchmark machine, so 39 µs of the 40 µs that encoding a 100 KiB
``resources/read`` answer costs. orjson does the same job 32 bytes at a time (SIMD): 3.5 µs for
the same string, with the same bytes out (both escape ``"``, ``\\`` and the control characters,
and write the rest as UTF-8; tested over every code point). So a long string of a result is
written by orjson and handed to msgspec as :class:`msgspec.Raw`, which msgspec copies as it is:
7 to 9 µs in all for that answer (measured 2026-11-29, ``benchmarks``' fixture), and every
other value of the message is msgspec's as before. The gain is largest for text with little to
escape: 100 KB of prose 38 to 3.4 µs, of Python source 47 to 32 µs; text dense with quotes
(JSON written as text) is left to msgspec, see :func:`_is_long`.

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
from typing import Any, Final, TypeGuard

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
#: structs on the way cost about what msgspec's scan does (the two met between 1,800 and 3,000
#: characters of ASCII in runs on the benchmark machine); 4,096 keeps clear of that.
LONG_STRING: Final = 4096
# A text with more quotes than this in its first ``_DENSITY_SPAN`` characters is escape-dense
# (see ``_is_long``): one in 8, where the two cost the same (100 KB with a quote every 8
# characters: 102 µs msgspec, 100 µs orjson; every 4: 186 against 203; every 16: 62 against 47).
_DENSITY_SPAN: Final = 256
_DENSE_QUOTES: Final = 32


def _escaped(text: str) -> str | msgspec.Raw:
    assert orjson is not None
    try:
        return msgspec.Raw(orjson.dumps(text))
    except TypeError:  # a lone surrogate: no UTF-8 holds it, and msgspec says so as before
        return text


def _is_long(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a ``str`` (exactly: msgspec refuses a subclass, and so must this)
    long enough for orjson, and not dense with what JSON escapes.

    JSON written as text (a tool's output, say) has a quote every few characters; orjson's
    scan gains nothing there and its escaping is slower than msgspec's (169 against 161 µs for
    100 KB; measured 2026-11-29), so such a text, told by its first 256 characters, stays
    msgspec's. Prose and code, with fewer quotes, gain 1.5 to 10 times.
    """
    return (
        value.__class__ is str
        and len(value) >= LONG_STRING
        and value.count('"', 0, _DENSITY_SPAN) <= _DENSE_QUOTES
    )


def _contents(contents: Any) -> Any:
    if contents.__class__ is not ResourceContents:
        return contents
    text, blob = contents.text, contents.blob
    if _is_long(text):
        return replace(contents, text=_escaped(text))
    if _is_long(blob):
        return replace(contents, blob=_escaped(blob))
    return contents


def _block(block: Any) -> Any:
    cls = block.__class__
    if cls is TextContent:
        text = block.text
        # The short text of most blocks told with no call of _is_long (a one-block result's
        # look at its payload 0.385 -> 0.357 us warm, one call less; measured 2026-11-29).
        if text.__class__ is str and len(text) >= LONG_STRING and _is_long(text):
            return replace(block, text=_escaped(text))
    elif cls is ImageContent or cls is AudioContent:
        if _is_long(block.data):
            return replace(block, data=_escaped(block.data))
    elif cls is EmbeddedResource:
        resource = _contents(block.resource)
        if resource is not block.resource:
            return replace(block, resource=resource)
    elif cls is ResourceContents:
        return _contents(block)
    return block


def _each(items: Any, one: Callable[[Any], Any]) -> Any:
    """``items`` with ``one`` applied to each: the same list when nothing changed, and
    anything but a list as it is (msgspec takes or refuses it as before)."""
    if items.__class__ is not list:
        return items
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
    new = _each(content, _block) if content.__class__ is list else _block(content)
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
