"""What ``call``, ``read`` and ``prompt`` print for people, and the progress line."""

from __future__ import annotations

import base64
import io
import json

from mcptrio.cli.output import ProgressLine, render_call, render_prompt, render_read
from mcptrio.protocol.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    ResourceContents,
    ResourceLink,
    TextContent,
)

PNG = base64.b64encode(bytes(1500)).decode()
WAV = base64.b64encode(bytes(10)).decode()


def test_text_is_printed_as_it_is_one_block_a_line() -> None:
    result = CallToolResult(content=[TextContent(text="one"), TextContent(text="two\n")])
    assert render_call(result) == "one\ntwo\n"


def test_structured_content_is_indented_json_shown_once() -> None:
    structured = {"count": 2, "mean": 3.0, "name": "Zoë"}
    pretty = '{\n  "count": 2,\n  "mean": 3.0,\n  "name": "Zoë"\n}\n'
    # The text copy of the structured content the spec asks for is not shown twice...
    serialized = TextContent(text=json.dumps(structured))
    assert render_call(CallToolResult(content=[serialized], structured_content=structured)) == (
        pretty
    )
    # ... while other text is, before the structured content.
    other = TextContent(text="Computed.")
    assert render_call(CallToolResult(content=[other], structured_content=structured)) == (
        f"Computed.\n{pretty}"
    )


def test_media_resources_and_links_are_one_line_each() -> None:
    result = CallToolResult(
        content=[
            ImageContent(data=PNG, mime_type="image/png"),
            AudioContent(data=WAV, mime_type="audio/wav"),
            ResourceLink(uri="file:///r.txt", name="r", mime_type="text/plain", size=2_500_000),
            ResourceLink(uri="file:///bare", name="bare"),
            EmbeddedResource(
                resource=ResourceContents(uri="test://e", mime_type="text/plain", text="héllo")
            ),
            EmbeddedResource(resource=ResourceContents(uri="test://b", blob=WAV)),
        ]
    )
    assert render_call(result).splitlines() == [
        "[image: image/png, 1.5 kB]",
        "[audio: audio/wav, 10 bytes]",
        "[resource link: file:///r.txt (text/plain, 2.5 MB)]",
        "[resource link: file:///bare]",
        "[resource: test://e, text/plain, 6 bytes]",
        "[resource: test://b, no mime type, 10 bytes]",
    ]


def test_an_empty_result_prints_nothing() -> None:
    assert render_call(CallToolResult(content=[])) == ""


def test_a_resource_read_prints_its_text_and_several_under_their_uris() -> None:
    one = ReadResourceResult(contents=[ResourceContents(uri="a://1", text="just this")])
    assert render_read(one) == "just this\n"
    several = ReadResourceResult(
        contents=[
            ResourceContents(uri="a://1", text="first\n"),
            ResourceContents(uri="a://2", mime_type="image/png", blob=PNG),
        ]
    )
    assert (
        render_read(several) == "==> a://1 <==\nfirst\n==> a://2 <==\n[blob: image/png, 1.5 kB]\n"
    )


def test_a_prompt_prints_each_message_under_its_role() -> None:
    result = GetPromptResult(
        messages=[
            PromptMessage(role="user", content=TextContent(text="Pack for Oslo?")),
            PromptMessage(role="assistant", content=ImageContent(data=WAV, mime_type="image/gif")),
        ],
        description="not shown",
    )
    assert (
        render_prompt(result)
        == "[user]\nPack for Oslo?\n[assistant]\n[image: image/gif, 10 bytes]\n"
    )


def test_the_progress_line_is_rewritten_in_place_and_cleared() -> None:
    stream = io.StringIO()
    line = ProgressLine(stream, "build")
    line.clear()  # nothing shown yet: nothing to clear
    line(1, 4, "compiling")
    line(2, None, None)
    line.clear()
    assert stream.getvalue() == ("\r\x1b[Kbuild: 1/4 (25%) compiling\r\x1b[Kbuild: 2\r\x1b[K")
