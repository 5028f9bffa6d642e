"""Resources: static contents, functions, templates with typed variables, the registry, the wire."""

from __future__ import annotations

import base64
import dataclasses
import enum
import functools
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import msgspec
import pytest
import trio
from contexts import LATEST, as_json, context_for
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.protocol.errors import InvalidParams, McpError, ResourceNotFound
from mcptrio.protocol.types import (
    Annotations,
    BlobResourceContents,
    Icon,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    ReadResourceResult,
    TextResourceContents,
)
from mcptrio.server.context import Context
from mcptrio.server.resources import (
    RegisteredResource,
    RegisteredTemplate,
    make_resource,
    make_template,
    read_resource,
)

from conftest import as_sent, open_recorded_client
from schema_validation import HANDSHAKE_REVISIONS, SCHEMA_DIR, validate_definition, validate_message


def make_context(revision: str = LATEST) -> Context:
    return context_for(ReadResourceRequest(uri="test://x"), revision)


@functools.cache
def schema_properties(revision: str, name: str) -> frozenset[str]:
    root = json.loads((SCHEMA_DIR / revision / "schema.json").read_text())
    definitions = root.get("definitions") or root["$defs"]
    return frozenset(definitions[name]["properties"])


async def read(resource: RegisteredResource, revision: str = LATEST) -> list[Any]:
    """The contents a read returns, as ``revision`` receives them."""
    return [as_json(c) for c in as_sent(await resource.read(make_context(revision)), revision)]


async def read_template(template: RegisteredTemplate, uri: str, revision: str = LATEST) -> Any:
    variables = template.match(uri)
    assert variables is not None, uri
    contents = await template.read(make_context(revision), uri, variables)
    return [as_json(c) for c in as_sent(contents, revision)]


ICON = Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])
ANNOTATIONS = Annotations(audience=["user"], priority=0.5, last_modified="2025-01-12T15:00:58Z")


# ------------------------------------------------------------------ static resources


async def test_static_text_is_read_back_as_text_plain_with_its_size() -> None:
    resource = make_resource("héllo", uri="test://static-text")
    assert resource.uri == "test://static-text"
    assert as_json(resource.definition) == {
        "uri": "test://static-text",
        "name": "test://static-text",
        "mimeType": "text/plain",
        "size": 6,
    }
    assert await read(resource) == [
        {"uri": "test://static-text", "mimeType": "text/plain", "text": "héllo"}
    ]


async def test_static_bytes_go_out_base64_as_octet_stream() -> None:
    data = bytes(range(256))
    resource = make_resource(data, uri="test://static-blob", name="blob")
    definition = as_json(resource.definition)
    assert definition["mimeType"] == "application/octet-stream"
    assert definition["size"] == 256
    [contents] = await read(resource)
    assert contents["mimeType"] == "application/octet-stream"
    assert base64.b64decode(contents["blob"]) == data
    assert "text" not in contents


async def test_a_declared_mime_type_and_size_win_over_the_defaults() -> None:
    resource = make_resource(b"\x89PNG", uri="file:///a.png", mime_type="image/png", size=99)
    assert as_json(resource.definition)["size"] == 99
    [contents] = await read(resource)
    assert contents["mimeType"] == "image/png"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("not a uri", "not a URI"),
        ("", "not a URI"),
        ("relative/path", "not a URI"),
        ("test://items/{id}", "template"),
    ],
)
def test_bad_static_uris_are_refused(uri: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_resource("x", uri=uri)


def test_a_source_that_is_neither_contents_nor_a_function_is_refused() -> None:
    with pytest.raises(TypeError, match="source"):
        make_resource(42, uri="test://x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="size"):
        make_resource("x", uri="test://x", size=-1)


# ------------------------------------------------------------------ function resources


async def test_an_async_function_is_called_on_every_read() -> None:
    calls = 0

    async def counter() -> str:
        """How many times this was read."""
        nonlocal calls
        calls += 1
        return str(calls)

    resource = make_resource(counter, uri="test://counter")
    definition = as_json(resource.definition)
    assert definition == {
        "uri": "test://counter",
        "name": "counter",
        "description": "How many times this was read.",
    }
    assert (await read(resource))[0]["text"] == "1"
    assert (await read(resource))[0]["text"] == "2"


async def test_a_sync_function_runs_in_a_worker_thread_and_gets_the_context() -> None:
    seen: dict[str, Any] = {}

    def where(ctx: Context) -> str:
        seen["thread"] = threading.current_thread()
        seen["revision"] = ctx.revision
        return "here"

    resource = make_resource(where, uri="test://where")
    assert await read(resource, "2025-06-18") == [
        {"uri": "test://where", "mimeType": "text/plain", "text": "here"}
    ]
    assert seen["thread"] is not threading.current_thread()
    assert seen["revision"] == "2025-06-18"


def test_a_lambda_resource_is_named_after_its_uri() -> None:
    assert make_resource(lambda: "x", uri="test://lambda").name == "test://lambda"


def test_a_function_resource_with_parameters_is_refused() -> None:
    def needs(path: str) -> str:
        return path

    with pytest.raises(ValueError, match="'path'"):
        make_resource(needs, uri="test://needs")

    def optional(ctx: Context, limit: int = 3) -> str:
        return str(limit)

    make_resource(optional, uri="test://optional")


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Settings(msgspec.Struct):
    debug: bool
    level: str = "info"


@pytest.mark.parametrize(
    ("value", "declared", "expected"),
    [
        ("text", None, {"mimeType": "text/plain", "text": "text"}),
        ("text", "text/markdown", {"mimeType": "text/markdown", "text": "text"}),
        (b"\x00\x01", None, {"mimeType": "application/octet-stream", "blob": "AAE="}),
        ({"a": [1, 2]}, None, {"mimeType": "application/json", "text": '{"a":[1,2]}'}),
        ([1, "two"], None, {"mimeType": "application/json", "text": '[1,"two"]'}),
        ([], None, {"mimeType": "application/json", "text": "[]"}),
        (Point(1, 2), None, {"mimeType": "application/json", "text": '{"x":1,"y":2}'}),
        (
            Settings(debug=True),
            None,
            {"mimeType": "application/json", "text": '{"debug":true,"level":"info"}'},
        ),
        ({"a": 1}, "application/vnd.x+json", {"mimeType": "application/vnd.x+json"}),
    ],
)
async def test_return_values_become_contents(
    value: Any, declared: str | None, expected: dict[str, Any]
) -> None:
    resource = make_resource(lambda: value, uri="test://value", mime_type=declared)
    [contents] = await read(resource)
    assert contents["uri"] == "test://value"
    assert expected.items() <= contents.items()


async def test_resource_contents_are_returned_as_they_are() -> None:
    parts = [
        TextResourceContents(uri="test://multi#1", text="one", mime_type="text/csv"),
        BlobResourceContents(uri="test://multi#2", blob="AAE="),
    ]
    resource = make_resource(lambda: parts, uri="test://multi")
    assert await read(resource) == [
        {"uri": "test://multi#1", "mimeType": "text/csv", "text": "one"},
        {"uri": "test://multi#2", "blob": "AAE="},
    ]
    single = make_resource(lambda: parts[0], uri="test://single")
    assert await read(single) == [{"uri": "test://multi#1", "mimeType": "text/csv", "text": "one"}]


@pytest.mark.parametrize("value", [None, 42, object(), {"a": object()}])
async def test_a_return_value_that_cannot_be_contents_is_a_clear_error(value: Any) -> None:
    resource = make_resource(lambda: value, uri="test://bad")
    with pytest.raises(TypeError, match="test://bad"):
        await read(resource)


async def test_contents_meta_is_left_out_before_2025_06_18() -> None:
    contents = TextResourceContents(uri="test://m", text="t", meta={"k": 1})
    resource = make_resource(lambda: contents, uri="test://m")
    assert (await read(resource, "2025-03-26"))[0] == {"uri": "test://m", "text": "t"}
    assert (await read(resource, "2025-06-18"))[0]["_meta"] == {"k": 1}


# ------------------------------------------------------------------ definitions per revision


def full_resource() -> RegisteredResource:
    return make_resource(
        "x",
        uri="file:///project/README.md",
        name="README.md",
        title="Project Documentation",
        description="The readme",
        mime_type="text/markdown",
        annotations=ANNOTATIONS,
        icons=[ICON],
        meta={"k": "v"},
    )


def full_template() -> RegisteredTemplate:
    def project_file(path: str) -> str:
        return path

    return make_template(
        project_file,
        uri_template="file:///{+path}",
        name="Project Files",
        title="📁 Project Files",
        description="Files in the project",
        mime_type="application/octet-stream",
        annotations=ANNOTATIONS,
        icons=[ICON],
        meta={"k": "v"},
    )


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_definitions_carry_only_what_the_revision_defines(revision: str) -> None:
    recent = revision >= "2025-06-18"
    resource = as_json(as_sent(full_resource().definition, revision))
    template = as_json(as_sent(full_template().definition, revision))
    validate_definition(resource, revision, "Resource")
    validate_definition(template, revision, "ResourceTemplate")
    assert set(resource) <= schema_properties(revision, "Resource")
    assert set(template) <= schema_properties(revision, "ResourceTemplate")
    for definition in (resource, template):
        assert ("title" in definition) is recent
        assert ("_meta" in definition) is recent
        assert ("icons" in definition) is (revision >= "2025-11-25")
        assert definition["annotations"]["priority"] == 0.5
        assert ("lastModified" in definition["annotations"]) is recent
    assert resource["size"] == 1
    assert template["uriTemplate"] == "file:///{+path}"


def test_definitions_are_built_once() -> None:
    resource = full_resource()
    template = full_template()
    assert resource.definition is resource.definition
    assert template.definition is template.definition


# ------------------------------------------------------------------ templates


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


async def test_template_values_are_converted_to_the_parameter_types() -> None:
    seen: dict[str, Any] = {}

    async def item(
        id: int,
        scale: float,
        exact: bool,
        color: Color,
        size: Literal["s", "m"],
        tags: list[str],
        name: str,
    ) -> str:
        seen.update(id=id, scale=scale, exact=exact, color=color, size=size, tags=tags, name=name)
        return "ok"

    template = make_template(
        item, uri_template="test://items/{id}/{name}{?scale,exact,color,size,tags*}"
    )
    assert template.variables == ("id", "name", "scale", "exact", "color", "size", "tags")
    uri = "test://items/7/a%20b?scale=1.5&exact=true&color=blue&size=m&tags=x&tags=y"
    assert await read_template(template, uri) == [
        {"uri": uri, "mimeType": "text/plain", "text": "ok"}
    ]
    assert seen == {
        "id": 7,
        "scale": 1.5,
        "exact": True,
        "color": Color.BLUE,
        "size": "m",
        "tags": ["x", "y"],
        "name": "a b",
    }


async def test_a_list_parameter_splits_a_non_exploded_value_on_commas() -> None:
    def pick(ids: list[int]) -> list[int]:
        return ids

    template = make_template(pick, uri_template="test://pick/{ids}")
    [contents] = await read_template(template, "test://pick/1,2,3")
    assert json.loads(contents["text"]) == [1, 2, 3]
    assert contents["mimeType"] == "application/json"

    def maybe(ids: list[int] | None = None) -> list[int]:
        return ids or []

    optional = make_template(maybe, uri_template="test://maybe{?ids}")
    [contents] = await read_template(optional, "test://maybe?ids=4,5")
    assert json.loads(contents["text"]) == [4, 5]
    [contents] = await read_template(optional, "test://maybe")
    assert json.loads(contents["text"]) == []


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("test://items/abc", "'id'"),
        ("test://items/1?color=green", "'color'"),
    ],
)
async def test_a_value_that_does_not_convert_gets_invalid_params(uri: str, message: str) -> None:
    def item(id: int, color: Color = Color.RED) -> str:
        return "never"

    template = make_template(item, uri_template="test://items/{id}{?color}")
    with pytest.raises(InvalidParams, match=message) as caught:
        await read_template(template, uri)
    assert caught.value.code == -32602
    assert uri in caught.value.message


async def test_missing_optional_variables_keep_their_defaults() -> None:
    def search(q: str, page: int = 1) -> str:
        return f"{q}:{page}"

    template = make_template(search, uri_template="test://search{?q,page}")
    assert (await read_template(template, "test://search?q=mcp"))[0]["text"] == "mcp:1"
    assert (await read_template(template, "test://search?page=3&q=mcp"))[0]["text"] == "mcp:3"
    with pytest.raises(InvalidParams, match="Missing required argument 'q'"):
        await read_template(template, "test://search?page=3")


async def test_a_template_function_gets_the_context_and_the_concrete_uri() -> None:
    def user(ctx: Context, user_id: str) -> TextResourceContents:
        return TextResourceContents(uri=f"users://{user_id}", text=ctx.revision)

    template = make_template(user, uri_template="users://{user_id}")
    assert template.variables == ("user_id",)
    assert await read_template(template, "users://ada", "2025-03-26") == [
        {"uri": "users://ada", "text": "2025-03-26"}
    ]


def test_template_parameters_must_be_exactly_its_variables() -> None:
    def too_few(a: str) -> str:
        return a

    def too_many(a: str, b: str, c: str) -> str:
        return a

    def star(*a: str) -> str:
        return ""

    with pytest.raises(ValueError, match="no parameter for variable\\(s\\) 'b'"):
        make_template(too_few, uri_template="t://{a}/{b}")
    with pytest.raises(ValueError, match="parameter\\(s\\) 'c' not in the template"):
        make_template(too_many, uri_template="t://{a}/{b}")
    with pytest.raises(ValueError, match=r"\*args and \*\*kwargs"):
        make_template(star, uri_template="t://{a}")
    with pytest.raises(ValueError, match="Malformed"):
        make_template(too_few, uri_template="t://{a")
    with pytest.raises(ValueError, match="no variables"):
        make_template(lambda: "", uri_template="t://fixed")


def test_template_completions_are_kept_as_given_and_checked() -> None:
    def completer(value: str, arguments: dict[str, str]) -> list[str]:
        return [value]

    def owner(org: str, repo: str) -> str:
        return repo

    template = make_template(
        owner, uri_template="gh://{org}/{repo}", completions={"org": ["a", "b"], "repo": completer}
    )
    sources = {name: completer.source for name, completer in template.completions.items()}
    assert sources == {"org": ("a", "b"), "repo": completer}
    assert template.uri_template == "gh://{org}/{repo}"
    assert template.name == "owner"
    with pytest.raises(ValueError, match="'nope'"):
        make_template(owner, uri_template="gh://{org}/{repo}", completions={"nope": ["x"]})


# ------------------------------------------------------------------ registration and reading


def test_a_server_keeps_resources_in_order_refuses_duplicates_and_reports_changes() -> None:
    server = mcptrio.Server("resources")
    changes: list[str] = []
    server.watch(lambda change: changes.append(change[1]))
    b = server.add_resource("b", "test://b")
    a = server.add_resource("a", "test://a")
    t2 = server.add_resource(lambda id: id, "test://u/{id}")
    t1 = server.add_resource(lambda id: id, "test://t/{id}")
    assert list(server.resources.values()) == [b, a]
    assert list(server.templates.values()) == [t2, t1]
    assert server.templates.get("test://t/{id}") is t1
    assert server.templates.get("test://nope/{id}") is None
    assert server.resources.get("test://a") is a
    assert changes == ["resources"] * 4
    with pytest.raises(ValueError, match="test://a"):
        server.add_resource("again", "test://a")
    with pytest.raises(ValueError, match="test://t/"):
        server.add_resource(lambda id: id, "test://t/{id}")
    assert len(changes) == 4
    assert server.remove_resource("test://a") is True
    assert server.remove_resource("test://a") is False
    assert server.remove_resource("test://t/{id}") is True
    assert server.remove_resource("test://t/{id}") is False
    assert len(changes) == 6
    assert list(server.resources.values()) == [b]
    assert list(server.templates.values()) == [t2]


async def test_a_read_tries_the_static_uri_first_then_templates_in_order() -> None:
    server = mcptrio.Server("resources")
    server.add_resource(lambda rest: "first", "test://{+rest}")
    server.add_resource(lambda id: "second", "test://items/{id}")
    server.add_resource("static", "test://items/fixed")
    ctx = make_context()

    async def read_uri(uri: str) -> Any:
        return await read_resource(server.resources, server.templates, ctx, uri)

    assert (await read_uri("test://items/fixed")).contents[0].text == "static"
    assert (await read_uri("test://items/7")).contents[0].text == "first"
    server.remove_resource("test://{+rest}")
    assert as_json(await read_uri("test://items/7")) == {
        "contents": [{"uri": "test://items/7", "mimeType": "text/plain", "text": "second"}]
    }


async def test_an_unknown_uri_gets_resource_not_found() -> None:
    server = mcptrio.Server("resources")
    server.add_resource(lambda id: id, "test://items/{id}")
    with pytest.raises(ResourceNotFound) as caught:
        await read_resource(server.resources, server.templates, make_context(), "test://items/1/2")
    assert caught.value.code == -32002
    assert caught.value.data == {"uri": "test://items/1/2"}


# ------------------------------------------------------------------ on the wire


def wire_server() -> mcptrio.Server:
    """A server with every kind of resource, listing them in pages of two."""
    server = mcptrio.Server("resources-test", page_size=2)
    for resource in (
        full_resource(),
        make_resource("text", uri="test://static-text"),
        make_resource(b"\x00\xff", uri="test://static-blob"),
    ):
        server.resources.add(resource.uri, resource)
    template = full_template()
    server.templates.add(template.uri_template, template)

    def item(id: int) -> dict[str, int]:
        return {"id": id}

    server.add_resource(item, "test://items/{id}")
    return server


@asynccontextmanager
async def open_resource_client(revision: str) -> AsyncIterator[tuple[mcptrio.Client, Any]]:
    server = wire_server()
    async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
        yield client, wire


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_resources_on_the_wire_validate_against_each_revision(revision: str) -> None:
    with trio.fail_after(10):
        async with open_resource_client(revision) as (client, wire):
            first = await client.request(ListResourcesRequest())
            assert [r.uri for r in first.resources] == [
                "file:///project/README.md",
                "test://static-text",
            ]
            assert isinstance(first.next_cursor, str)
            second = await client.request(ListResourcesRequest(cursor=first.next_cursor))
            assert [r.uri for r in second.resources] == ["test://static-blob"]
            templates = await client.request(ListResourceTemplatesRequest())
            assert [t.uri_template for t in templates.resource_templates] == [
                "file:///{+path}",
                "test://items/{id}",
            ]
            blob = await client.request(ReadResourceRequest(uri="test://static-blob"))
            assert base64.b64decode(blob.contents[0].blob) == b"\x00\xff"  # type: ignore[arg-type]
            item = await client.request(ReadResourceRequest(uri="test://items/42"))
            assert item.contents[0].text == '{"id":42}'
            path = await client.request(ReadResourceRequest(uri="file:///src/main.rs"))
            assert path.contents[0].text == "src/main.rs"
            with pytest.raises(ResourceNotFound):
                await client.request(ReadResourceRequest(uri="test://nothing"))
            with pytest.raises(InvalidParams):
                await client.request(ReadResourceRequest(uri="test://items/forty-two"))
    hints = {
        "resources/list": "ListResourcesResult",
        "resources/templates/list": "ListResourceTemplatesResult",
        "resources/read": "ReadResourceResult",
    }
    methods = {m["id"]: m["method"] for m in wire.client_to_server if "id" in m}
    for message in wire.client_to_server:
        validate_message(message, revision, "client")
    for message in wire.server_to_client:
        hint = hints.get(methods.get(message.get("id"), ""), "server")
        validate_message(message, revision, hint if "result" in message else None)
        if "result" in message:
            for resource in message["result"].get("resources", []):
                assert set(resource) <= schema_properties(revision, "Resource")
            for template in message["result"].get("resourceTemplates", []):
                assert set(template) <= schema_properties(revision, "ResourceTemplate")
    errors = [m["error"] for m in wire.server_to_client if "error" in m]
    assert errors[0] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "test://nothing"},
    }
    assert errors[1]["code"] == -32602
    assert "'id'" in errors[1]["message"]


async def test_a_failing_resource_function_does_not_disturb_the_session() -> None:
    server = mcptrio.Server("resources-test")

    def broken() -> str:
        raise RuntimeError("disk on fire")

    async def missing() -> str:
        raise ResourceNotFound("Resource not found", {"uri": "test://gone"})

    server.add_resource(broken, "test://broken")
    server.add_resource(missing, "test://gone")
    server.add_resource("fine", "test://fine")
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, _, _):
            with pytest.raises(McpError) as caught:
                await client.request(ReadResourceRequest(uri="test://broken"))
            assert caught.value.code == -32603
            with pytest.raises(ResourceNotFound) as not_found:
                await client.request(ReadResourceRequest(uri="test://gone"))
            assert not_found.value.data == {"uri": "test://gone"}
            result: ReadResourceResult = await client.request(
                ReadResourceRequest(uri="test://fine")
            )
            assert result.contents[0].text == "fine"
