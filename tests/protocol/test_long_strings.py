"""The long strings of results written by orjson (protocol/long_strings.py): the frame is the
very bytes msgspec alone writes, the handler's result is left as it was, and only the payload
members of the results that carry payloads are looked at."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptrio.protocol import codec, long_strings
from mcptrio.protocol.long_strings import LONG_STRING, escape_long_strings
from mcptrio.protocol.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    CreateMessageResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ListToolsResult,
    PromptMessage,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)

#: Each kind of character JSON writes differently: plain ASCII, what must be escaped (quote,
#: backslash, every control character), DEL and the line separators (written as they are),
#: two- three- and four-byte UTF-8.
KINDS = [
    "plain ascii text ",
    '"quoted" \\back\\slash ',
    "".join(chr(c) for c in range(32)),
    "\x7f\u2028\u2029",
    "é ñ ü ",
    "漢字かな ",
    "😀🎉 ",
]


def long(piece: str, length: int = LONG_STRING) -> str:
    return (piece * (length // len(piece) + 1))[:length]


def msgspec_alone(result: Any) -> bytes:
    """The frame as msgspec writes it with no string written by orjson."""
    return msgspec.json.encode(codec._ResultOut("2.0", 7, result))


def every_result(text: str) -> list[Any]:
    """A result of each type whose payload members are looked at, ``text`` in each member."""
    return [
        CallToolResult(
            content=[
                TextContent(text=text),
                ImageContent(data=text, mime_type="image/png"),
                AudioContent(data=text, mime_type="audio/wav"),
                EmbeddedResource(resource=TextResourceContents(uri="file:///t", text=text)),
                EmbeddedResource(resource=BlobResourceContents(uri="file:///b", blob=text)),
                ResourceLink(uri="file:///l", name="l"),
            ],
            structured_content={"text": text},
        ),
        ReadResourceResult(
            contents=[
                TextResourceContents(uri="file:///t", mime_type="text/plain", text=text),
                BlobResourceContents(uri="file:///b", blob=text),
            ]
        ),
        GetPromptResult(
            messages=[
                PromptMessage(role="user", content=TextContent(text=text)),
                PromptMessage(
                    role="assistant",
                    content=EmbeddedResource(
                        resource=TextResourceContents(uri="file:///p", text=text)
                    ),
                ),
            ],
            description="d",
        ),
        CreateMessageResult(role="assistant", content=TextContent(text=text), model="m"),
        CreateMessageResult(
            role="assistant", content=[TextContent(text=text), TextContent(text="short")], model="m"
        ),
    ]


def rendered(result: Any) -> list[str]:
    """The payload members of ``result`` whose strings are long enough to be written by orjson
    (as their wire names), found through :func:`escape_long_strings`."""
    found: list[str] = []

    def look(value: Any, name: str) -> None:
        if isinstance(value, msgspec.Raw):
            found.append(name)
        elif isinstance(value, list):
            for item in value:
                look(item, name)
        elif isinstance(value, msgspec.Struct):
            for field in value.__struct_fields__:
                look(getattr(value, field), field)

    look(escape_long_strings(result), "")
    return found


@pytest.mark.parametrize("piece", KINDS)
@pytest.mark.parametrize("length", [LONG_STRING, 100_000])
def test_a_long_payload_is_written_as_msgspec_writes_it(piece: str, length: int) -> None:
    for result in every_result(long(piece, length)):
        assert codec.encode_result(7, result) == msgspec_alone(result)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_long_text_is_written_as_msgspec_writes_it(piece: str) -> None:
    result = ReadResourceResult(contents=[TextResourceContents(uri="u", text=long(piece))])
    try:
        expected = msgspec_alone(result)
    except UnicodeEncodeError:  # a lone surrogate: no frame holds it, either way
        with pytest.raises(UnicodeEncodeError):
            codec.encode_result(7, result)
        return
    assert codec.encode_result(7, result) == expected


def test_every_code_point_is_written_as_msgspec_writes_it() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for start in range(0, len(every), 8 * LONG_STRING):
        piece = every[start : start + 8 * LONG_STRING]
        result = CallToolResult(content=[TextContent(text=long(piece, 8 * LONG_STRING))])
        assert rendered(result) == ["text"]
        assert codec.encode_result(7, result) == msgspec_alone(result)


def test_every_payload_member_is_written_by_orjson() -> None:
    call, read, prompt, sampled, sampled_list = every_result(long("x"))
    assert rendered(call) == ["text", "data", "data", "text", "blob"]
    assert rendered(read) == ["text", "blob"]
    assert rendered(prompt) == ["text", "text"]
    assert rendered(sampled) == ["text"]
    assert rendered(sampled_list) == ["text"]


def test_a_short_payload_leaves_the_result_as_it_is() -> None:
    for result in every_result(long("x", LONG_STRING - 1)):
        assert escape_long_strings(result) is result


def test_text_dense_with_quotes_is_left_to_msgspec() -> None:
    as_json = '{"a": "b", "c": ["d", "e"]}, ' * (LONG_STRING // 10)
    result = CallToolResult(content=[TextContent(text=as_json)])
    assert escape_long_strings(result) is result
    quoted_prose = long('She said "yes" and left the room. ')
    assert rendered(CallToolResult(content=[TextContent(text=quoted_prose)])) == ["text"]


class Markup(str):
    """A str subclass, as template libraries return: msgspec refuses it, whatever its length."""


class _Anything(msgspec.Struct):
    value: Any


@pytest.mark.parametrize(
    "result",
    [
        CallToolResult(content=[TextContent(text=Markup(long("x")))]),
        CallToolResult(content=[EmbeddedResource(resource={"uri": "u", "text": long("x")})]),  # type: ignore[arg-type]
        CallToolResult(content=[TextContent(text=None)]),  # type: ignore[arg-type]
        CallToolResult(content=None),  # type: ignore[arg-type]
        CallToolResult(content=(TextContent(text=long("x")),)),  # type: ignore[arg-type]
        CallToolResult(content=[ImageContent(data=[1.0e16] * LONG_STRING, mime_type="x")]),  # type: ignore[arg-type]
        ReadResourceResult(contents=[TextResourceContents(uri="u", text=msgspec.UNSET)]),  # type: ignore[arg-type]
        GetPromptResult(messages=None),  # type: ignore[arg-type]
    ],
    ids=[
        "str-subclass",
        "dict-resource",
        "none-text",
        "none-content",
        "tuple",
        "float-list",
        "unset-text",
        "none-messages",
    ],
)
def test_what_is_not_a_str_in_a_list_is_written_or_refused_as_before(result: Any) -> None:
    try:
        expected: bytes | type[Exception] = msgspec_alone(result)
    except Exception as error:
        expected = type(error)
    if isinstance(expected, bytes):
        assert codec.encode_result(7, result) == expected
    else:
        with pytest.raises(expected):
            codec.encode_result(7, result)


def test_content_that_is_not_a_list_is_not_consumed() -> None:
    blocks = iter([TextContent(text=long("x")), TextContent(text="b1"), TextContent(text="b2")])
    result = CallToolResult(content=blocks)  # type: ignore[arg-type]
    assert escape_long_strings(result) is result
    with pytest.raises(TypeError):
        codec.encode_result(7, result)


def test_other_results_and_members_are_not_looked_at() -> None:
    tools = ListToolsResult(tools=[Tool(name="t", description=long("x"), input_schema={})])
    assert escape_long_strings(tools) is tools
    structured = CallToolResult(content=[], structured_content={"text": long("x")})
    assert escape_long_strings(structured) is structured


def test_the_handlers_result_is_left_as_it_was() -> None:
    text = long("x")
    short = TextContent(text="short")
    result = CallToolResult(content=[short, TextContent(text=text)])
    content = result.content
    escaped = escape_long_strings(result)
    assert escaped is not result and escaped.content is not content
    assert result.content is content and content[1].text is text
    # What is not on the way to a long string is shared, not copied.
    assert escaped.content[0] is short


def test_a_long_text_with_a_lone_surrogate_is_refused_as_before() -> None:
    result = CallToolResult(content=[TextContent(text=long("x") + "\ud800")])
    with pytest.raises(UnicodeEncodeError):
        msgspec_alone(result)
    with pytest.raises(UnicodeEncodeError):
        codec.encode_result(7, result)


def test_without_orjson_msgspec_writes_every_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(long_strings, "orjson", None)
    for result in every_result(long('"é')):
        assert escape_long_strings(result) is result
        assert codec.encode_result(7, result) == msgspec_alone(result)


# ------------------------------------------------------------------ the whole message by orjson


def test_a_long_payload_is_written_whole_by_orjson_with_msgspecs_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def spliced(result: Any) -> Any:
        raise AssertionError("written by the splice")

    monkeypatch.setattr(codec, "escape_long_strings", spliced)
    for piece in KINDS:
        for result in every_result(long(piece, 100_000)):
            assert codec.encode_result(7, result) == msgspec_alone(result)


@pytest.mark.parametrize(
    "structured",
    [
        {"big": 1.0e16, "small": 0.5},
        {"n": 2**70},
        {"items": list(range(long_strings.WHOLE_LOOK_LIMIT))},
    ],
    ids=["floats", "int-past-64-bits", "many-values"],
)
def test_a_message_orjson_would_write_otherwise_is_spliced_as_msgspec_writes_it(
    structured: dict[str, Any],
) -> None:
    result = CallToolResult(content=[TextContent(text=long("x"))], structured_content=structured)
    assert long_strings.has_long_payload(result)
    assert long_strings.written_whole(codec._ResultOut("2.0", 7, result)) is None
    assert rendered(result) == ["text"]
    assert codec.encode_result(7, result) == msgspec_alone(result)


def test_the_look_for_a_long_payload_finds_what_the_splice_would_write() -> None:
    odd: list[Any] = [
        CallToolResult(content=[TextContent(text=Markup(long("x")))]),
        CallToolResult(content=(TextContent(text=long("x")),)),  # type: ignore[arg-type]
        CallToolResult(content=[TextContent(text=long("x") + "\ud800")]),
        CallToolResult(content=[TextContent(text='{"a": "b"}, ' * LONG_STRING)]),
        CallToolResult(content=[], structured_content={"text": long("x")}),
        GetPromptResult(messages=None),  # type: ignore[arg-type]
        ListToolsResult(tools=[Tool(name="t", description=long("x"), input_schema={})]),
    ]
    for result in [*every_result(long("x")), *every_result(long("x", LONG_STRING - 1)), *odd]:
        assert long_strings.has_long_payload(result) == (escape_long_strings(result) is not result)


def test_without_orjson_no_payload_is_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(long_strings, "orjson", None)
    for result in every_result(long("x")):
        assert not long_strings.has_long_payload(result)
