"""The conformance suite's fixtures in examples/everything_server.py, checked directly.

The suite's checks are lenient in places (a "tool not found" error result passes
``tools-call-simple-text``), so a passing suite run does not prove a fixture exists or answers
what the suite's own reference server answers. These tests call every fixture in-memory and
look at the JSON the suite would see, validated against the 2025-11-25 schema.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import trio
from eras import HANDSHAKE_ERA
from programs import ROOT, import_program

import mcptrio
from mcptrio.client import Handlers
from mcptrio.protocol.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    PromptReference,
    TextContent,
)
from mcptrio.runtime.context import RequestContext

from conftest import Wire, open_recorded_client
from schema_validation import validate_exchange

REVISION = "2025-11-25"


everything = import_program("everything_server", ROOT / "examples" / "everything_server.py")


def open_everything_client(
    **options: Any,
) -> AbstractAsyncContextManager[tuple[mcptrio.Client, Wire, mcptrio.Session]]:
    """A recorded client of a fresh everything server, in the handshake era (``options``: more
    of ``open_client``'s keywords)."""
    return open_recorded_client(everything.build_server(), revisions=HANDSHAKE_ERA, **options)


async def sample(_ctx: RequestContext, request: CreateMessageRequest) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant", content=TextContent(text="sampled answer"), model="test-model"
    )


elicited: list[ElicitRequest] = []


async def elicit(_ctx: RequestContext, request: ElicitRequest) -> ElicitResult:
    elicited.append(request)
    return ElicitResult(action="accept", content={"response": "yes"})


def answer(wire: Wire, method: str) -> dict[str, Any]:
    """The result of the last ``method`` request the client sent, as it was on the wire."""
    [*_, request] = [m for m in wire.client_to_server if m.get("method") == method]
    [response] = [
        m for m in wire.server_to_client if m.get("id") == request["id"] and "method" not in m
    ]
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


async def test_every_tool_fixture_answers_what_the_suite_expects() -> None:
    progress: list[float] = []

    async def on_progress(done: float, _total: float | None, _message: str | None) -> None:
        progress.append(done)

    with trio.fail_after(20):
        async with open_everything_client(
            handlers=Handlers(sampling=sample, elicitation=elicit),
        ) as (client, wire, _session):
            listed = (await client.list_tools()).tools
            assert all(tool.description for tool in listed)
            names = {tool.name for tool in listed}

            async def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
                assert name in names
                await client.call_tool(name, arguments or {}, on_progress=on_progress)
                return answer(wire, "tools/call")

            assert (await call("test_simple_text"))["content"] == [
                {"type": "text", "text": "This is a simple text response for testing."}
            ]
            [image] = (await call("test_image_content"))["content"]
            assert image == {
                "type": "image",
                "data": everything.TEST_IMAGE_BASE64,
                "mimeType": "image/png",
            }
            [audio] = (await call("test_audio_content"))["content"]
            assert (audio["type"], audio["mimeType"]) == ("audio", "audio/wav")
            [embedded] = (await call("test_embedded_resource"))["content"]
            assert embedded["type"] == "resource"
            assert {"uri", "mimeType", "text"} <= set(embedded["resource"])
            mixed = (await call("test_multiple_content_types"))["content"]
            assert [block["type"] for block in mixed] == ["text", "image", "resource"]
            error = await call("test_error_handling")
            assert error["isError"] is True and error["content"][0]["type"] == "text"

            await client.set_logging_level("debug")
            before = len(wire.methods_sent_by_server())
            await call("test_tool_with_logging")
            logged = wire.methods_sent_by_server()[before:].count("notifications/message")
            assert logged >= 3

            progress.clear()
            await call("test_tool_with_progress")
            assert len(progress) >= 3 and progress == sorted(progress)

            sampled = await call("test_sampling", {"prompt": "Say hi"})
            assert sampled["content"][0]["text"] == "LLM response: sampled answer"
            assert "sampling/createMessage" in wire.methods_sent_by_server()

            elicited.clear()
            result = await call("test_elicitation", {"message": "Continue?"})
            assert [r.message for r in elicited] == ["Continue?"]
            assert "accept" in result["content"][0]["text"]

            elicited.clear()
            await call("test_elicitation_sep1034_defaults")
            properties = elicited[0].requested_schema["properties"]  # type: ignore[index]
            assert {name: prop["default"] for name, prop in properties.items()} == {
                "name": "John Doe",
                "age": 30,
                "score": 95.5,
                "status": "active",
                "verified": True,
            }
            assert properties["status"]["enum"] == ["active", "inactive", "pending"]

            elicited.clear()
            await call("test_elicitation_sep1330_enums")
            properties = elicited[0].requested_schema["properties"]  # type: ignore[index]
            assert "enum" in properties["untitledSingle"]
            assert all({"const", "title"} <= set(o) for o in properties["titledSingle"]["oneOf"])
            assert len(properties["legacyEnum"]["enumNames"]) == 3
            assert properties["untitledMulti"]["items"]["enum"]
            assert properties["titledMulti"]["items"]["anyOf"]
    assert validate_exchange(wire.client_to_server, wire.server_to_client, REVISION) > 0


async def test_json_schema_2020_12_fixture_is_listed_with_its_keywords() -> None:
    with trio.fail_after(10):
        async with open_everything_client() as (client, wire, _):
            await client.list_tools()
            [tool] = [
                t
                for t in answer(wire, "tools/list")["tools"]
                if t["name"] == "json_schema_2020_12_tool"
            ]
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "address" in schema["$defs"]
    assert schema["additionalProperties"] is False


async def test_resource_and_prompt_fixtures_answer_what_the_suite_expects() -> None:
    with trio.fail_after(10):
        async with open_everything_client() as (client, wire, _):
            await client.list_resources()
            uris = {r["uri"] for r in answer(wire, "resources/list")["resources"]}
            assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= uris
            await client.read_resource("test://static-text")
            [text] = answer(wire, "resources/read")["contents"]
            assert text["text"]
            await client.read_resource("test://static-binary")
            [blob] = answer(wire, "resources/read")["contents"]
            assert blob["blob"]
            await client.list_resource_templates()
            templates = answer(wire, "resources/templates/list")["resourceTemplates"]
            assert "test://template/{id}/data" in {t["uriTemplate"] for t in templates}
            await client.read_resource("test://template/123/data")
            assert "123" in answer(wire, "resources/read")["contents"][0]["text"]
            await client.subscribe_resource("test://watched-resource")
            await client.unsubscribe_resource("test://watched-resource")

            await client.list_prompts()
            prompts = answer(wire, "prompts/list")["prompts"]
            assert all(p.get("description") for p in prompts)
            await client.get_prompt("test_simple_prompt")
            assert answer(wire, "prompts/get")["messages"]
            await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "v-one", "arg2": "v-two"}
            )
            text_of_messages = str(answer(wire, "prompts/get")["messages"])
            assert "v-one" in text_of_messages and "v-two" in text_of_messages
            await client.get_prompt(
                "test_prompt_with_embedded_resource", {"resourceUri": "test://example"}
            )
            [first, *_] = answer(wire, "prompts/get")["messages"]
            assert first["content"]["type"] == "resource"
            await client.get_prompt("test_prompt_with_image")
            [first, *_] = answer(wire, "prompts/get")["messages"]
            assert first["content"]["type"] == "image"
            await client.complete(PromptReference(name="test_prompt_with_arguments"), "arg1", "a")
            assert answer(wire, "completion/complete")["completion"]["values"] == ["alpha"]
    assert validate_exchange(wire.client_to_server, wire.server_to_client, REVISION) > 0
