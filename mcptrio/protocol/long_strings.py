"""The long strings of a result, written by orjson and spliced into msgspec's encoding.

msgspec writes a string by looking at each of its bytes for one JSON must escape, which is
nearly all the cost of encoding a result with a large payload. orjson does the same job 32
bytes at a time (SIMD), with the same bytes out (both escape ``"``, ``\\`` and the control
characters, and write the rest as UTF-8; tested over every code point). So a long string of a
result is written by orjson and handed to msgspec as :class:`msgspec.Raw`, which msgspec copies
as it is, and every other value of the message is msgspec's as before. The gain is largest for
text with little to escape; text dense with quotes (JSON written as text) is left to msgspec,
see :func:`_is_long`. ``docs/explanation/payload-cost.md`` has the figures.

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

The whole message by orjson. Spliced in, the long string is still copied once more, by msgspec
into its frame. So a response whose result has a long payload string (:func:`has_long_payload`)
is first written whole by orjson, from :func:`msgspec.to_builtins` of it (which shares the
strings, and names and leaves out members as msgspec's encoder does; :func:`written_whole`),
where the bytes are the same as msgspec's: a message holding a float is left to the splice
(orjson writes ``1e+16`` where msgspec writes ``1e16``), and so is one of more than
:data:`WHOLE_LOOK_LIMIT` values (the look for floats would cost more than it saves), or
anything orjson refuses (an integer past 64 bits, a lone surrogate).
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

__all__ = [
    "LONG_STRING",
    "WHOLE_LOOK_LIMIT",
    "escape_long_strings",
    "has_long_payload",
    "written_whole",
]

#: The length from which orjson writes a string: below it, making the ``Raw`` and copying the
#: structs on the way cost about what msgspec's scan does. The threshold sits well above where
#: the two break even, so a string near it gains little either way and loses nothing.
LONG_STRING: Final = 4096
# A text with more quotes than this in its first ``_DENSITY_SPAN`` characters is escape-dense
# (see ``_is_long``): one in 8, where orjson's faster scan no longer makes up for its slower
# escaping of each quote.
_DENSITY_SPAN: Final = 256
_DENSE_QUOTES: Final = 32
#: The most values (containers and their members) of a message looked through for floats
#: before it is written whole by orjson: past it, the splice.
WHOLE_LOOK_LIMIT: Final = 256


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
    scan gains nothing there and its escaping is slower than msgspec's, so such a text, told
    by its first 256 characters, stays msgspec's. Prose and code, with fewer quotes, are where
    orjson gains.
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
        if _is_long(block.text):
            return replace(block, text=_escaped(block.text))
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


# What escape_long_strings would change, told without changing it: the same members, the same
# tests (_is_long), in the same order.


def _long_contents(contents: Any) -> bool:
    return contents.__class__ is ResourceContents and (
        _is_long(contents.text) or _is_long(contents.blob)
    )


def _long_block(block: Any) -> bool:
    cls = block.__class__
    if cls is TextContent:
        return _is_long(block.text)
    if cls is ImageContent or cls is AudioContent:
        return _is_long(block.data)
    if cls is EmbeddedResource:
        return _long_contents(block.resource)
    return _long_contents(block)  # a resources/read's contents


def _long_message(message: Any) -> bool:
    return message.__class__ is PromptMessage and _long_block(message.content)


#: Where a result carries its payload: the member, how one of its items is told to hold a long
#: string, and how that item is written with it. The member is a list, except that the content
#: of a sampling/createMessage result may be one block.
_PAYLOADS: Final[dict[type[Any], tuple[str, Callable[[Any], bool], Callable[[Any], Any]]]] = {
    CallToolResult: ("content", _long_block, _block),
    ReadResourceResult: ("contents", _long_block, _block),
    GetPromptResult: ("messages", _long_message, _message),
    CreateMessageResult: ("content", _long_block, _block),
}


def _payload_of(
    result: Any,
) -> tuple[str, Any, Callable[[Any], bool], Callable[[Any], Any]] | None:
    """The payload member of ``result`` (:data:`_PAYLOADS`), its value, and how an item is told
    to hold a long string and written with it; ``None`` when ``result`` has no payload member,
    or when orjson is not installed (nothing is then written by orjson)."""
    if orjson is None:
        return None
    payload = _PAYLOADS.get(result.__class__)
    if payload is None:
        return None
    member, is_long, escape = payload
    return member, getattr(result, member), is_long, escape


def escape_long_strings(result: Any) -> Any:
    """``result`` to encode, its long payload strings already written as JSON (see above)."""
    payload = _payload_of(result)
    if payload is None:
        return result
    member, items, _, escape = payload
    # Not a list: sampling's one block, or what msgspec will take or refuse as before (an item
    # of no payload type is left as it is).
    new = _each(items, escape) if items.__class__ is list else escape(items)
    return result if new is items else replace(result, **{member: new})


def has_long_payload(result: Any) -> bool:
    """Whether :func:`escape_long_strings` would write a string of ``result`` by orjson."""
    payload = _payload_of(result)
    if payload is None:
        return False
    _, items, is_long, _ = payload
    if items.__class__ is not list:
        return result.__class__ is CreateMessageResult and is_long(items)
    for item in items:  # noqa: SIM110 - a plain loop: no generator object per answer
        if is_long(item):
            return True
    return False


# ------------------------------------------------------------------ the whole message by orjson


def written_whole(message: msgspec.Struct) -> bytes | None:
    """``message`` as orjson writes it, when those are the very bytes msgspec writes for it
    (see the module docstring); ``None`` otherwise, and for anything either refuses: it is
    then encoded as before, which writes it or refuses it as it always did."""
    assert orjson is not None
    try:
        value = msgspec.to_builtins(message, str_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    budget = WHOLE_LOOK_LIMIT
    stack = [value]
    while stack:
        item = stack.pop()
        kind = item.__class__
        if kind is dict:
            budget -= len(item)
            stack.extend(item.values())
        elif kind is list:
            budget -= len(item)
            stack.extend(item)
        elif kind is float:
            return None
        if budget < 0:
            return None
    try:
        return orjson.dumps(value)
    except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return None
