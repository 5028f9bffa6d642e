"""Path-safe parameter types: a percent-decoded template variable (``..%2F..%2Fetc%2Fpasswd``)
never reaches a handler annotated ``RelativePath`` or ``PathSegment``: -32602 instead."""

from __future__ import annotations

import msgspec
import pytest
import trio

import mcptrio
from mcptrio import PathSegment, RelativePath
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.protocol.errors import InvalidParams
from mcptrio.protocol.types import ReadResourceRequest

CLIMBING = [
    "..",
    "../x",
    "a/../b",
    "a/..",
    "/etc/passwd",
    "C:/Windows",
    "c:x",
    "a\\..\\b",
    "a\x00b",
    "a\nb",
    "notes\n",
    "",
]


@pytest.mark.parametrize("value", CLIMBING)
def test_a_relative_path_refuses_every_way_out(value: str) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(value, RelativePath, strict=False)


@pytest.mark.parametrize("value", ["a", "a/b/c.md", "..hidden", "a..b/c..", "a/./b", ".env"])
def test_a_relative_path_takes_names_below_its_folder(value: str) -> None:
    assert msgspec.convert(value, RelativePath, strict=False) == value


@pytest.mark.parametrize("value", [*CLIMBING, ".", "a/b", "b/"])
def test_a_path_segment_refuses_separators_and_dots(value: str) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(value, PathSegment, strict=False)


@pytest.mark.parametrize("value", ["notes", "notes.md", "...", ".env", "a..b"])
def test_a_path_segment_takes_one_name(value: str) -> None:
    assert msgspec.convert(value, PathSegment, strict=False) == value


def reading_server(called: list[str]) -> mcptrio.Server:
    server = mcptrio.Server("files")

    @server.resource("file:///{+path}")
    def read(path: RelativePath) -> str:
        called.append(path)
        return path

    @server.resource("notes://{name}")
    def note(name: PathSegment) -> str:
        called.append(name)
        return name

    @server.resource("plain://{name}")
    def plain(name: str) -> str:
        return name

    return server


@pytest.mark.parametrize(
    ("uri", "argument"),
    [
        ("file:///..%2F..%2Fetc%2Fpasswd", "path"),
        ("file:///docs/../../etc/passwd", "path"),
        ("file:///%2Fetc%2Fpasswd", "path"),
        ("file:///a%00b", "path"),
        ("notes://..%2Fsecret", "name"),
        ("notes://..", "name"),
    ],
)
async def test_a_decoded_variable_that_climbs_out_is_invalid_params(
    uri: str, argument: str
) -> None:
    called: list[str] = []
    with trio.fail_after(10):
        # The handshake era, where a missing resource is -32002 and a refused value -32602.
        async with mcptrio.open_client(reading_server(called), revisions=HANDSHAKE_ERA) as client:
            with pytest.raises(InvalidParams) as refused:
                await client.request(ReadResourceRequest(uri=uri))
            fine = await client.read_resource("file:///docs/guide%20one.md")
    assert refused.value.code == -32602
    message = refused.value.message
    assert f"argument {argument!r}" in message and "\n" not in message
    assert "inside its folder" in message or "single file name" in message
    assert "regex" not in message
    assert called == ["docs/guide one.md"]
    assert fine.contents[0].text == "docs/guide one.md"


async def test_a_plain_str_variable_is_percent_decoded_as_documented() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client(reading_server([])) as client:
            read = await client.read_resource("plain://..%2F..%2Fetc%2Fpasswd")
    assert read.contents[0].text == "../../etc/passwd"


async def test_a_tool_argument_is_checked_and_its_schema_says_so() -> None:
    server = mcptrio.Server("files")

    @server.tool
    def open_file(path: RelativePath) -> str:
        return path

    with trio.fail_after(10):
        async with mcptrio.open_client(server) as client:
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool("open_file", {"path": "../secret"})
            fine = await client.call_tool("open_file", {"path": "docs/a.md"})
    schema = tool.input_schema["properties"]["path"]
    assert "pattern" in schema and "inside its folder" in schema["description"]
    assert result.is_error and not fine.is_error
