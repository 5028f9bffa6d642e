"""A FastAPI application's generated document, served as MCP tools and called, every
operation of it, through the official SDK's client, against the application run by uvicorn.

The document is fetched from the running application with mcptrio's own HTTP client.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator

import pytest
import trio
from http_apis import running_apis
from openapi_sessions import json_of, sdk_session, text_of

from mcptrio.openapi import OpenApiDocument, fetch_document, server_from_openapi
from mcptrio.openapi.pass_through import PassThroughHeaders
from mcptrio.transports.http.endpoints.security import HttpSecurity


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    """The base URL of the running APIs (a conftest.py of this folder's own would stand in
    for the tests' shared ``conftest`` module in a whole run)."""
    with running_apis() as url:
        yield url


SHOP_TOOLS = [
    "list_items",
    "create_item",
    "get_item",
    "replace_item",
    "delete_item",
    "item_label",
    "search_search_get",
    "stock.level_get",
    "whoami",
    "upload_file",
    "boom",
    "slow",
    "slow_calls",
]


async def shop_document(api: str) -> OpenApiDocument:
    return await fetch_document(api + "/openapi.json")


async def test_every_operation_of_the_fastapi_document_is_a_tool(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        assert document.version == "3.1"
        async with sdk_session(server_from_openapi(document, api)) as session:
            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            assert sorted(tools) == sorted(SHOP_TOOLS)
            get_item = tools["get_item"]
            assert get_item.title == "Get Item"  # FastAPI's summary, from the function name
            assert get_item.description == "Get Item\n\nGet one item by its id."
            assert get_item.input_schema["required"] == ["item_id"]
            assert get_item.annotations is not None and get_item.annotations.read_only_hint
            create = tools["create_item"].input_schema
            # The body's properties are arguments of their own.
            assert set(create["properties"]) == {"name", "price", "tags", "description"}
            assert create["properties"]["price"]["exclusiveMinimum"] == 0
            assert sorted(create["required"]) == ["name", "price"]
            hints = {name: tool.annotations for name, tool in tools.items()}
            assert hints["delete_item"].destructive_hint is True  # type: ignore[union-attr]
            assert hints["replace_item"].idempotent_hint is True  # type: ignore[union-attr]
            assert hints["create_item"].destructive_hint is None  # type: ignore[union-attr]
            assert hints["create_item"].read_only_hint is None  # type: ignore[union-attr]
            assert tools["list_items"].description == "List the items"


async def test_items_are_listed_created_read_replaced_and_deleted(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            created = json_of(
                await session.call_tool(
                    "create_item", {"name": "teapot", "price": 12.5, "tags": ["tea"]}
                )
            )
            key = created["id"]
            assert created["name"] == "teapot"
            assert json_of(await session.call_tool("get_item", {"item_id": key}))["price"] == 12.5
            listed = await session.call_tool("list_items", {"tag": "tea", "limit": 50})
            assert [item["name"] for item in json_of(listed)] == ["teapot"]
            replaced = await session.call_tool(
                "replace_item", {"item_id": key, "name": "teapot", "price": 14.0}
            )
            assert json_of(replaced)["price"] == 14.0
            label = await session.call_tool("item_label", {"item_id": key})
            # A text/plain answer is text.
            assert not label.is_error and text_of(label) == "TEAPOT ... 14.00 EUR"
            assert label.structured_content is None
            deleted = await session.call_tool("delete_item", {"item_id": key})
            assert not deleted.is_error and text_of(deleted) == "HTTP 204 No Content"
            missing = await session.call_tool("get_item", {"item_id": key})
            assert missing.is_error
            assert text_of(missing) == f'HTTP 404 Not Found: {{"detail":"no item {key}"}}'


async def test_query_arrays_headers_and_sanitised_names_reach_the_api(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            found = await session.call_tool(
                "search_search_get", {"q": ["red", "tea pot"], "x-request-id": "r-1"}
            )
            assert json_of(found) == {"terms": ["red", "tea pot"], "request_id": "r-1"}
            stock = await session.call_tool("stock.level_get", {"item_id": 4})
            assert json_of(stock) == {"item_id": 4, "level": 40}


async def test_a_file_is_uploaded_as_multipart_form_data(api: str) -> None:
    data = bytes(range(256)) * 3
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            file_schema = tools["upload_file"].input_schema["properties"]["file"]
            assert file_schema["contentEncoding"] == "base64"
            uploaded = await session.call_tool(
                "upload_file", {"file": base64.b64encode(data).decode(), "note": "bytes"}
            )
            assert json_of(uploaded) == {
                "filename": "file",
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "note": "bytes",
            }
            broken = await session.call_tool("upload_file", {"file": "not base64!"})
            assert broken.is_error and "file: not valid base64" in text_of(broken)


async def test_arguments_that_break_the_schema_are_a_tool_error_and_send_nothing(
    api: str,
) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            result = await session.call_tool("create_item", {"name": "free", "price": 0})
            assert result.is_error
            assert text_of(result).startswith("Invalid arguments for tool 'create_item' at price")
            listed = json_of(await session.call_tool("list_items", {"limit": 100}))
            assert "free" not in [item["name"] for item in listed]


async def test_an_error_status_quotes_a_bounded_body(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        server = server_from_openapi(document, api, max_error_body=100)
        async with sdk_session(server) as session:
            result = await session.call_tool("boom", {})
            assert result.is_error
            text = text_of(result)
            assert text.startswith('HTTP 500 Internal Server Error: {"detail":"xxx')
            assert text.endswith("... (4913 more characters)")


async def test_a_configured_header_is_sent_with_every_call(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            unauthorised = await session.call_tool("whoami", {})
            assert unauthorised.is_error and text_of(unauthorised).startswith("HTTP 401")
        server = server_from_openapi(document, api, headers={"X-API-Key": "static-key"})
        async with sdk_session(server) as session:
            assert json_of(await session.call_tool("whoami", {})) == {"key": "static-key"}


async def test_a_header_of_the_mcp_request_is_passed_through(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        server = server_from_openapi(document, api, forward_headers=["X-API-Key"])
        security = HttpSecurity(authenticator=PassThroughHeaders(["x-api-key"]))
        headers = {"X-API-Key": "users-own-key"}
        async with sdk_session(server, security=security, headers=headers) as session:
            assert json_of(await session.call_tool("whoami", {})) == {"key": "users-own-key"}
        async with sdk_session(server, security=security) as session:
            # Without the header, nothing is passed on.
            assert text_of(await session.call_tool("whoami", {})).startswith("HTTP 401")


async def test_an_api_that_cannot_be_reached_is_a_tool_error_naming_the_request(
    api: str,
) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        server = server_from_openapi(document, "http://127.0.0.1:9/api")
        async with sdk_session(server) as session:
            result = await session.call_tool("get_item", {"item_id": 1})
            assert result.is_error
            assert text_of(result).startswith("GET http://127.0.0.1:9/api/items/1 failed:")


async def test_cancelling_a_call_closes_its_request_to_the_api(api: str) -> None:
    with trio.fail_after(30):
        document = await shop_document(api)
        async with sdk_session(server_from_openapi(document, api)) as session:
            before = json_of(await session.call_tool("slow_calls", {}))
            with trio.move_on_after(1) as waited:
                await session.call_tool("slow", {})
            assert waited.cancelled_caught
            # The API sees its client go away long before the 10 s it would take.
            while True:
                now = json_of(await session.call_tool("slow_calls", {}))
                if now["disconnected"] > before["disconnected"]:
                    break
                await trio.sleep(0.05)
            assert now["started"] == before["started"] + 1
