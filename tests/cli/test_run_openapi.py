"""``mcptrio run --openapi``: an HTTP API's operations served as tools, over HTTP and stdio,
as the how-to (docs/how-to/openapi.md) shows, and called with ``mcptrio list`` / ``call``."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import trio
from cli_runner import mcptrio, served
from http_apis import ZOO_DOCUMENT, running_apis


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    """The base URL of the running APIs (a conftest.py of this folder's own would stand in
    for the tests' shared ``conftest`` module in a whole run)."""
    with running_apis() as url:
        yield url


async def test_run_openapi_over_http_serves_a_fetched_document(api: str) -> None:
    with trio.fail_after(90):
        async with served(
            "--openapi",
            f"{api}/openapi.json",
            "--base-url",
            api,
            "--tag",
            "items",
            "--exclude-operation",
            "delete_*",
            "--transport",
            "http",
            "--port",
            "0",
        ) as url:
            listed = await mcptrio("list", url)
            assert listed.code == 0, listed.stderr
            assert [tool["name"] for tool in listed.json()["tools"]] == [
                "list_items",
                "create_item",
                "get_item",
                "replace_item",
            ]
            called = await mcptrio("call", "--json", url, "get_item", "item_id=1")
            assert called.code == 0, called.stderr
            assert called.json()["structuredContent"]["name"] == "kettle"
            missing = await mcptrio("call", url, "get_item", "item_id=404")
            assert missing.code == 1
            assert missing.error_line == (
                "mcptrio: tool get_item reported an error:"
                ' HTTP 404 Not Found: {"detail":"no item 404"}'
            )


async def test_run_openapi_over_stdio_with_a_header_from_the_environment(api: str) -> None:
    server = [sys.executable, "-m", "mcptrio", "run", "--openapi", str(ZOO_DOCUMENT)]
    with trio.fail_after(90):
        fed = await mcptrio(
            "call", "--", *server, "--base-url", f"{api}/zoo", "feedingTimes", "day=tomorrow"
        )
        assert fed.code == 0, fed.stderr
        assert fed.stdout.strip() == "Feeding tomorrow: 09:00, 15:00"
        shop = [sys.executable, "-m", "mcptrio", "run", "--openapi", f"{api}/openapi.json"]
        keyed = await mcptrio(
            "call",
            "--json",
            "--",
            *shop,
            "--base-url",
            api,
            "--api-header",
            "X-API-Key: $SHOP_KEY",
            "whoami",
            env={"SHOP_KEY": "from-the-environment"},
        )
        assert keyed.code == 0, keyed.stderr
        assert keyed.json()["structuredContent"] == {"key": "from-the-environment"}


async def test_run_openapi_passes_on_a_header_of_the_mcp_request(api: str) -> None:
    with trio.fail_after(90):
        async with served(
            "--openapi",
            f"{api}/openapi.json",
            "--base-url",
            api,
            "--forward-header",
            "X-API-Key",
            "--transport",
            "http",
            "--port",
            "0",
        ) as url:
            called = await mcptrio(
                "call", "--json", "--header", "X-API-Key: users-key", url, "whoami"
            )
            assert called.code == 0, called.stderr
            assert called.json()["structuredContent"] == {"key": "users-key"}


async def test_run_openapi_mistakes_are_one_line(api: str, tmp_path: object) -> None:
    with trio.fail_after(90):
        neither = await mcptrio("run")
        assert neither.code == 2
        assert neither.error_line == (
            "mcptrio: error: give a TARGET (file.py[:name] or module[:name]) or --openapi"
        )
        missing = await mcptrio("run", "--openapi", "no-such.json")
        assert missing.code == 2
        assert missing.error_line == "mcptrio: error: no-such.json: No such file or directory"
        stdio = await mcptrio("run", "--openapi", str(ZOO_DOCUMENT), "--forward-header", "X-A")
        assert stdio.code == 2
        assert "--forward-header passes on headers of HTTP requests" in stdio.error_line
        unset = await mcptrio(
            "run", "--openapi", str(ZOO_DOCUMENT), "--api-header", "X-A: $NOT_SET_ANYWHERE"
        )
        assert unset.code == 2
        assert unset.error_line == "mcptrio: error: --api-header X-A: $NOT_SET_ANYWHERE is not set"
