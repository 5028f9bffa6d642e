"""call_tool checks structuredContent against the tool's outputSchema (2025-06-18+)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.protocol.base import Request, Result
from mcptrio.protocol.types import (
    CallToolResult,
    ListToolsRequest,
    ListToolsResult,
    TextContent,
    Tool,
)
from mcptrio.runtime.context import RequestContext

from conftest import open_recorded_client


class Weather(msgspec.Struct):
    city: str
    celsius: float


def weather_server() -> mcptrio.Server:
    server = mcptrio.Server("weather")

    @server.tool()
    def forecast(city: str) -> Weather:
        return Weather(city=city, celsius=21.5)

    @server.tool()
    def broken(shape: str) -> Weather:
        # Bypasses the server's own check of the return value, to play a faulty server.
        if shape == "missing":
            return CallToolResult(content=[TextContent(text="{}")])  # type: ignore[return-value]
        if shape == "error":
            return CallToolResult(  # type: ignore[return-value]
                content=[TextContent(text="failed")], is_error=True
            )
        return CallToolResult(  # type: ignore[return-value]
            content=[TextContent(text="{}")],
            structured_content={"city": "Paris", "celsius": "warm"},
        )

    return server


async def test_a_matching_result_passes_and_the_schema_comes_from_one_listing() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(weather_server()) as (client, wire, _):
            first = await client.call_tool("forecast", {"city": "Oslo"})
            second = await client.call_tool("forecast", {"city": "Rome"})
    assert first.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert second.structured_content == {"city": "Rome", "celsius": 21.5}
    # The tool was unknown: the client listed the tools once to learn its schema.
    assert wire.methods_sent_by_client().count("tools/list") == 1


async def test_a_mismatch_raises_output_validation_error_naming_the_path() -> None:
    with trio.fail_after(5):
        async with mcptrio.open_client(weather_server()) as client:
            await client.list_tools()
            with pytest.raises(mcptrio.OutputValidationError) as caught:
                await client.call_tool("broken", {"shape": "wrong"})
            # The session carries on, and the unchecked answer is still there.
            unchecked = await client.call_tool("broken", {"shape": "wrong"}, validate_output=False)
    error = caught.value
    # The client's own check failed, not the server: a local error, never a protocol error.
    assert isinstance(error, mcptrio.ClientError) and isinstance(error, mcptrio.LocalError)
    assert not isinstance(error, mcptrio.ProtocolError)
    assert error.tool == "broken"
    assert error.result.structured_content == {"city": "Paris", "celsius": "warm"}
    assert "$.celsius" in str(error) and "'broken'" in str(error)
    assert unchecked.structured_content == {"city": "Paris", "celsius": "warm"}


async def test_missing_structured_content_is_a_mismatch_but_an_error_result_is_not() -> None:
    with trio.fail_after(5):
        async with mcptrio.open_client(weather_server()) as client:
            with pytest.raises(mcptrio.OutputValidationError, match="no structuredContent"):
                await client.call_tool("broken", {"shape": "missing"})
            failed = await client.call_tool("broken", {"shape": "error"})
    assert failed.is_error is True


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
async def test_revisions_without_output_schemas_check_nothing(revision: str) -> None:
    with trio.fail_after(5):
        async with open_recorded_client(weather_server(), revisions=only(revision)) as (
            client,
            wire,
            _,
        ):
            result = await client.call_tool("broken", {"shape": "missing"})
    assert result.structured_content is None
    # No listing just to learn schemas that cannot exist.
    assert "tools/list" not in wire.methods_sent_by_client()


class SchemaServer(mcptrio.Server):
    """Lists one tool ``t`` whose ``outputSchema`` is ``self.schema``; it answers ``self.value``."""

    def __init__(self, schema: dict[str, Any], value: Any) -> None:
        super().__init__("schemas", declare=["tools"])
        self.schema = schema
        self.value = value
        self.listings = 0

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        if isinstance(request, ListToolsRequest):
            self.listings += 1
            tool = Tool(name="t", input_schema={"type": "object"}, output_schema=self.schema)
            return ListToolsResult(tools=[tool])
        return CallToolResult(content=[], structured_content=self.value)


@pytest.mark.parametrize(
    ("schema", "value", "fits"),
    [
        # Draft 2020-12 by default: prefixItems is understood.
        (
            {"type": "object", "properties": {"p": {"prefixItems": [{"type": "integer"}]}}},
            {"p": ["x"]},
            False,
        ),
        # $schema is honoured: draft-07 ignores prefixItems.
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"p": {"prefixItems": [{"type": "integer"}]}},
            },
            {"p": ["x"]},
            True,
        ),
        (
            {
                "type": "object",
                "$defs": {"n": {"type": "integer"}},
                "properties": {"n": {"$ref": "#/$defs/n"}},
            },
            {"n": 3},
            True,
        ),
    ],
)
async def test_the_schema_dialect_is_honoured(
    schema: dict[str, Any], value: Any, fits: bool
) -> None:
    with trio.fail_after(5):
        async with mcptrio.open_client(SchemaServer(schema, value)) as client:
            if fits:
                await client.call_tool("t")
            else:
                with pytest.raises(mcptrio.OutputValidationError):
                    await client.call_tool("t")


async def test_an_invalid_or_unresolvable_schema_is_reported_not_crashed_on() -> None:
    with trio.fail_after(5):
        async with mcptrio.open_client(SchemaServer({"type": 12}, {"a": 1})) as client:
            with pytest.raises(mcptrio.OutputValidationError, match="not valid"):
                await client.call_tool("t")
        remote = {"$ref": "https://example.invalid/schema.json"}
        async with mcptrio.open_client(SchemaServer(remote, {"a": 1})) as client:
            with pytest.raises(mcptrio.OutputValidationError, match="could not be applied"):
                await client.call_tool("t")


async def test_a_tools_list_change_makes_the_client_list_again() -> None:
    server = SchemaServer({"type": "object"}, {"a": 1})
    with trio.fail_after(5):
        async with mcptrio.open_client(server, revisions=HANDSHAKE_ERA) as client:
            await client.call_tool("t")
            await client.call_tool("t")
            assert server.listings == 1
            # An unknown tool after a complete listing is not listed for again.
            await client.call_tool("other")
            assert server.listings == 1
            async with client.list_changes() as changes:
                server.add_tool(lambda: "x", name="new")
                assert await changes.__anext__() == "tools"
            server.schema = {"type": "object", "required": ["b"]}
            with pytest.raises(mcptrio.OutputValidationError, match="'b' is a required"):
                await client.call_tool("t")
    assert server.listings == 2
