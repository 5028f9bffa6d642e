"""Tools: return values -> CallToolResult (as each revision receives it), and the media helpers."""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from mcptrio.protocol.codec import encode
from mcptrio.protocol.fitting import fit_outgoing
from mcptrio.protocol.revisions import revision_of
from mcptrio.protocol.types import (
    Annotations,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcptrio.server.media import Audio, File, Image, guess_mime_type
from mcptrio.server.schema import describe_output
from mcptrio.server.tool_results import (
    ToolOutputError,
    structured_result,
    to_call_tool_result,
)

from schema_validation import HANDSHAKE_REVISIONS, validate_definition

LATEST = "2025-11-25"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
B64_PNG = base64.b64encode(PNG).decode()
B64_WAV = base64.b64encode(WAV).decode()


def as_json(value: Any) -> Any:
    return msgspec.json.decode(encode(value))


def sent(result: CallToolResult, revision: str) -> CallToolResult:
    """``result`` as the connection sends it in ``revision``."""
    return fit_outgoing(result, revision_of(revision))


def result_json(value: Any, revision: str = LATEST) -> Any:
    """The result ``value`` becomes, as ``revision`` receives it, as JSON, after checking it
    against ``revision``'s schema."""
    data = as_json(sent(to_call_tool_result(value), revision))
    validate_definition(data, revision, "CallToolResult")
    return data


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Size:
    width: int
    height: int


# ------------------------------------------------------------------ content


def test_plain_values() -> None:
    assert result_json("hi") == {"content": [{"type": "text", "text": "hi"}]}
    assert result_json(None) == {"content": []}
    assert result_json(42) == {"content": [{"type": "text", "text": "42"}]}
    assert result_json(1.5) == {"content": [{"type": "text", "text": "1.5"}]}
    assert result_json(True) == {"content": [{"type": "text", "text": "true"}]}
    assert result_json({"a": [1, 2]}) == {"content": [{"type": "text", "text": '{"a":[1,2]}'}]}
    assert result_json(Point(1, 2)) == {"content": [{"type": "text", "text": '{"x":1,"y":2}'}]}
    assert result_json(Size(3, 4)) == {
        "content": [{"type": "text", "text": '{"width":3,"height":4}'}]
    }
    assert result_json([1, 2, 3]) == {"content": [{"type": "text", "text": "[1,2,3]"}]}


def test_bytes_become_an_embedded_blob() -> None:
    assert result_json(b"\x00\x01") == {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "attachment:result.bin",
                    "mimeType": "application/octet-stream",
                    "blob": "AAE=",
                },
            }
        ]
    }


def test_content_blocks_pass_through_and_lists_concatenate() -> None:
    link = ResourceLink(uri="file:///a.txt", name="a.txt")
    image = ImageContent(data=B64_PNG, mime_type="image/png")
    assert result_json(["one", image, link, 7, Image(PNG)]) == {
        "content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": B64_PNG, "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
            {"type": "text", "text": "7"},
            {"type": "image", "data": B64_PNG, "mimeType": "image/png"},
        ]
    }
    assert result_json(("a", "b")) == {
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    }


def test_a_call_tool_result_is_returned_as_is() -> None:
    own = CallToolResult(content=[TextContent(text="x")], is_error=True)
    assert to_call_tool_result(own) is own


def test_an_unencodable_value_raises_type_error() -> None:
    with pytest.raises(TypeError):
        to_call_tool_result(object())


# ------------------------------------------------------------------ media helpers


def test_image_audio_and_file_helpers() -> None:
    assert result_json([Image(PNG), Audio(WAV), File(b"a,b\n", name="t.csv")]) == {
        "content": [
            {"type": "image", "data": B64_PNG, "mimeType": "image/png"},
            {"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"},
            {
                "type": "resource",
                "resource": {"uri": "attachment:t.csv", "mimeType": "text/csv", "text": "a,b\n"},
            },
        ]
    }


def test_media_from_a_path_guesses_by_name(tmp_path: Path) -> None:
    path = tmp_path / "chart.jpg"
    path.write_bytes(b"not really a jpeg")
    image = Image(path=path)
    assert (image.mime_type, image.name, image.data) == (
        "image/jpeg",
        "chart.jpg",
        path.read_bytes(),
    )
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.7")
    assert as_json(File(path=report).to_content()) == {
        "type": "resource",
        "resource": {
            "uri": "attachment:report.pdf",
            "mimeType": "application/pdf",
            "blob": base64.b64encode(b"%PDF-1.7").decode(),
        },
    }


async def test_media_from_file_reads_in_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "clip.bin"
    path.write_bytes(WAV)
    with trio.fail_after(5):
        audio = await Audio.from_file(path)
    assert (audio.mime_type, audio.name, audio.data) == ("audio/wav", "clip.bin", WAV)


def test_mime_type_given_guessed_or_refused() -> None:
    assert Image(PNG, mime_type="image/x-custom").mime_type == "image/x-custom"
    assert guess_mime_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert guess_mime_type(b"GIF89a") == "image/gif"
    assert guess_mime_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert guess_mime_type(b"ID3\x03") == "audio/mpeg"
    assert guess_mime_type(b"OggS") == "audio/ogg"
    assert guess_mime_type(b"<svg xmlns='http://www.w3.org/2000/svg'/>") == "image/svg+xml"
    assert guess_mime_type(b"plain", "notes.txt") == "text/plain"
    with pytest.raises(ValueError, match="cannot tell the mime type of this image"):
        Image(b"????")
    with pytest.raises(ValueError, match="cannot tell the mime type of this audio clip"):
        Audio(b"????")
    assert File(b"????").mime_type == "application/octet-stream"
    with pytest.raises(ValueError, match="not both or neither"):
        Image()


def test_a_file_with_a_uri_and_undecodable_text_is_a_blob() -> None:
    file = File(b"\xff\xfe", mime_type="text/plain", uri="https://example.com/x.txt")
    assert as_json(file.to_content())["resource"] == {
        "uri": "https://example.com/x.txt",
        "mimeType": "text/plain",
        "blob": base64.b64encode(b"\xff\xfe").decode(),
    }


def test_annotations_and_meta_on_media() -> None:
    image = Image(PNG, annotations=Annotations(priority=0.5), meta={"com.example/k": 1})
    assert as_json(image.to_content()) == {
        "type": "image",
        "data": B64_PNG,
        "mimeType": "image/png",
        "annotations": {"priority": 0.5},
        "_meta": {"com.example/k": 1},
    }


# ------------------------------------------------------------------ revisions


def test_audio_before_2025_03_26_is_a_text_note() -> None:
    for revision in HANDSHAKE_REVISIONS:
        got = result_json(Audio(WAV), revision)["content"]
        if revision_of(revision).audio:
            assert got == [{"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"}]
        else:
            note = f"[audio (audio/wav) left out: protocol revision {revision} has no audio]"
            assert got == [{"type": "text", "text": note}]


def test_resource_link_before_2025_06_18_is_text() -> None:
    link = ResourceLink(
        uri="file:///logs/today.log",
        name="today.log",
        title="Today's log",
        description="What happened today",
        mime_type="text/plain",
        icons=[Icon(src="https://example.com/log.png")],
    )
    expected = {
        "type": "resource_link",
        "uri": "file:///logs/today.log",
        "name": "today.log",
        "title": "Today's log",
        "description": "What happened today",
        "mimeType": "text/plain",
    }
    assert result_json(link, "2025-11-25")["content"] == [
        {**expected, "icons": [{"src": "https://example.com/log.png"}]}
    ]
    assert result_json(link, "2025-06-18")["content"] == [expected]
    text = "[resource link: Today's log <file:///logs/today.log> (text/plain)]\nWhat happened today"
    for revision in ("2025-03-26", "2024-11-05"):
        assert result_json(link, revision)["content"] == [{"type": "text", "text": text}]


def test_meta_and_last_modified_are_left_out_before_2025_06_18() -> None:
    annotations = Annotations(audience=["user"], last_modified="2025-01-01T00:00:00Z")
    blocks = [
        TextContent(text="t", annotations=annotations, meta={"com.example/k": 1}),
        EmbeddedResource(
            resource=TextResourceContents(uri="file:///x", text="x", meta={"com.example/k": 2})
        ),
    ]
    own = CallToolResult(content=blocks)
    assert as_json(sent(own, "2025-06-18")) == as_json(own)
    assert sent(own, LATEST) is own
    for revision in ("2025-03-26", "2024-11-05"):
        got = result_json(blocks, revision)["content"]
        assert got == [
            {"type": "text", "text": "t", "annotations": {"audience": ["user"]}},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "x"}},
        ]


def test_a_tool_built_result_is_downgraded_too() -> None:
    own = CallToolResult(
        content=[AudioContent(data=B64_WAV, mime_type="audio/wav")],
        structured_content={"a": 1},
        is_error=False,
    )
    note = "[audio (audio/wav) left out: protocol revision 2024-11-05 has no audio]"
    assert as_json(sent(to_call_tool_result(own), "2024-11-05")) == {
        "content": [{"type": "text", "text": note}],
        "isError": False,
    }
    assert as_json(sent(to_call_tool_result(own), "2025-06-18")) == as_json(own)


# ------------------------------------------------------------------ structured output


def structured(value: Any, annotation: Any, revision: str = LATEST) -> Any:
    plan = describe_output(annotation, None, "t")
    data = as_json(sent(structured_result(value, plan), revision))
    validate_definition(data, revision, "CallToolResult")
    return data


def test_structured_object_and_wrapped_values() -> None:
    assert structured(Point(1, 2), Point) == {
        "content": [{"type": "text", "text": '{"x":1,"y":2}'}],
        "structuredContent": {"x": 1, "y": 2},
    }
    assert structured(3, int) == {
        "content": [{"type": "text", "text": "3"}],
        "structuredContent": {"result": 3},
    }
    assert structured([Size(1, 2)], list[Size]) == {
        "content": [{"type": "text", "text": '[{"width":1,"height":2}]'}],
        "structuredContent": {"result": [{"width": 1, "height": 2}]},
    }
    assert structured({"a": 1}, dict[str, int]) == {
        "content": [{"type": "text", "text": '{"a":1}'}],
        "structuredContent": {"a": 1},
    }


def test_structured_output_before_2025_06_18_is_only_text() -> None:
    for revision in ("2025-03-26", "2024-11-05"):
        assert structured(Point(1, 2), Point, revision) == {
            "content": [{"type": "text", "text": '{"x":1,"y":2}'}]
        }


def test_a_value_that_does_not_fit_the_return_type_is_refused() -> None:
    plan = describe_output(int, None, "t")
    with pytest.raises(ToolOutputError, match="returned str does not match its return type int"):
        structured_result("three", plan)
    point_plan = describe_output(Point, None, "t")
    with pytest.raises(ToolOutputError, match="Object missing required field `y`"):
        structured_result({"x": 1}, point_plan)
    with pytest.raises(ToolOutputError):
        structured_result(object(), point_plan)
