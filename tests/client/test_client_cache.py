"""The client's cache of results (2026-07-28, SEP-2549): hits, misses, ``cache="refresh"`` and
``"bypass"``, expiry by ``ttlMs`` (autojump clock), invalidation by list changes and resource
updates, the bound, and no caching in the handshake era. Real mcptrio servers, in memory (and
over HTTP once), each request counted on the wire."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import CachePolicy, Revisions
from mcptrio.client.cache import ResultCache
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.types import ListToolsResult

from conftest import Wire, open_recorded_client
from schema_validation import validate_message

STATELESS = "2026-07-28"
STATELESS_ONLY = Revisions(protocol_version=STATELESS, supported=SUPPORTED)
NOTE = "memo://today"
TTL_MS = 60_000


def make_server(ttl_ms: int | None = TTL_MS, **options: Any) -> mcptrio.Server:
    server = mcptrio.Server("memos", version="1.0", cache_ttl_ms=ttl_ms, **options)
    memos = {"today": "nothing yet", "tomorrow": "rest"}

    @server.resource("memo://{name}")
    def memo(name: str) -> str:
        """One memo."""
        return memos[name]

    @server.resource(NOTE)
    def today() -> str:
        return memos["today"]

    @server.tool
    def write(name: str, text: str) -> str:
        """Changes a memo and tells its subscribers."""
        memos[name] = text
        server.notify_resource_updated(f"memo://{name}")
        return "saved"

    return server


def asked(wire: Wire, method: str) -> int:
    """How many ``method`` requests the client sent."""
    return wire.methods_sent_by_client().count(method)


async def test_a_fresh_result_is_answered_without_asking() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(make_server(), revisions=STATELESS_ONLY) as (
            client,
            wire,
            _,
        ):
            first = await client.list_tools()
            assert first.ttl_ms == TTL_MS
            assert await client.list_tools() is first
            read = await client.read_resource(NOTE)
            assert await client.read_resource(NOTE) is read
            assert (await client.discover()).ttl_ms == TTL_MS
            await client.discover()
            assert client.cache.statistics().hits == 4
    assert asked(wire, "tools/list") == 1
    assert asked(wire, "resources/read") == 1
    # The probe's discover only: both discover() calls came from the cache.
    assert asked(wire, "server/discover") == 1
    for message in wire.client_to_server:
        validate_message(message, STATELESS, "client")
    for message in wire.server_to_client:
        validate_message(message, STATELESS, "server")


async def test_a_result_expires_after_its_ttl(autojump_clock: Any) -> None:
    with trio.fail_after(600):
        async with open_recorded_client(make_server(), revisions=STATELESS_ONLY) as (
            client,
            wire,
            _,
        ):
            await client.list_tools()
            await trio.sleep(TTL_MS / 1000 - 1)
            await client.list_tools()
            assert asked(wire, "tools/list") == 1
            await trio.sleep(1)
            await client.list_tools()
            assert asked(wire, "tools/list") == 2
            stats = client.cache.statistics()
            assert (stats.hits, stats.misses) == (1, 2)


async def test_refresh_asks_and_stores_and_bypass_asks_and_stores_nothing() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(make_server(), revisions=STATELESS_ONLY) as (
            client,
            wire,
            _,
        ):
            bypassed = await client.read_resource(NOTE, cache="bypass")
            assert len(client.cache) == 1  # the probe's discover answer
            first = await client.read_resource(NOTE)
            assert first is not bypassed
            refreshed = await client.read_resource(NOTE, cache="refresh")
            assert refreshed is not first
            assert await client.read_resource(NOTE) is refreshed
            assert await client.read_resource(NOTE, cache="bypass") is not refreshed
            assert await client.read_resource(NOTE) is refreshed  # bypass did not replace it
            with pytest.raises(ValueError, match="cache="):
                await client.read_resource(NOTE, cache="never")  # type: ignore[typeddict-item]
    assert asked(wire, "resources/read") == 4


async def test_each_page_and_each_uri_is_an_entry_of_its_own() -> None:
    server = make_server(page_size=1)
    server.add_tool(lambda: "a", name="a")
    server.add_tool(lambda: "b", name="b")
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=STATELESS_ONLY) as (client, wire, _):
            names = [tool.name async for tool in client.iter_tools()]
            assert [tool.name async for tool in client.iter_tools()] == names
            assert len(names) == 3
            await client.read_resource("memo://tomorrow")
            await client.read_resource(NOTE)
            assert len(client.cache) == 6  # with the probe's discover answer
    assert asked(wire, "tools/list") == 3


async def test_the_cache_keeps_at_most_its_size_the_least_recently_used_going_first() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(
            make_server(), revisions=STATELESS_ONLY, cache=CachePolicy(size=2)
        ) as (client, wire, _):
            await client.read_resource(NOTE)
            await client.read_resource("memo://tomorrow")
            await client.read_resource(NOTE)  # a hit: NOTE is now the most recently used
            await client.list_tools()  # the third entry: memo://tomorrow goes
            assert len(client.cache) == 2
            await client.read_resource(NOTE)
            await client.read_resource("memo://tomorrow")
    assert asked(wire, "resources/read") == 3
    with pytest.raises(ValueError):
        CachePolicy(size=-1)


async def test_size_zero_and_a_ttl_of_zero_keep_nothing() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(
            make_server(), revisions=STATELESS_ONLY, cache=CachePolicy(size=0)
        ) as (client, wire, _):
            await client.list_tools()
            await client.list_tools()
        async with open_recorded_client(make_server(ttl_ms=None), revisions=STATELESS_ONLY) as (
            client,
            wire2,
            _,
        ):
            assert (await client.list_tools()).ttl_ms == 0
            await client.list_tools()
    assert asked(wire, "tools/list") == 2
    assert asked(wire2, "tools/list") == 2


async def test_nothing_is_cached_in_the_handshake_era() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(make_server(), revisions=HANDSHAKE_ERA) as (
            client,
            wire,
            _,
        ):
            assert client.protocol_version != STATELESS
            first = await client.list_tools()
            assert await client.list_tools() is not first
            assert len(client.cache) == 0
    assert asked(wire, "tools/list") == 2


async def test_a_list_change_heard_on_a_listen_stream_invalidates_the_pages() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=STATELESS_ONLY) as (client, wire, _):
            async with client.list_changes() as changes:
                before = await client.list_tools()
                server.add_tool(lambda: "x", name="extra")
                assert await anext(changes) == "tools"
                after = await client.list_tools()
            assert [t.name for t in after.tools] == [*(t.name for t in before.tools), "extra"]
    assert asked(wire, "tools/list") == 2


async def test_with_nothing_listening_the_ttl_the_server_gave_is_trusted() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=STATELESS_ONLY) as (client, wire, _):
            before = await client.list_tools()
            server.add_tool(lambda: "x", name="extra")
            # No listen stream asked for tool changes: the listing stays what the server said
            # would stay fresh, until its ttlMs runs out or the caller asks anew.
            assert await client.list_tools() is before
            refreshed = await client.list_tools(cache="refresh")
            assert "extra" in [t.name for t in refreshed.tools]
    assert asked(wire, "tools/list") == 2


async def test_a_resource_update_invalidates_the_read_of_that_uri() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with (
            open_recorded_client(server, revisions=STATELESS_ONLY) as (client, wire, _),
            client.subscribe(NOTE) as updates,
        ):
            assert (await client.read_resource(NOTE)).contents[0].text == "nothing yet"
            await client.read_resource("memo://tomorrow")
            await client.call_tool("write", {"name": "today", "text": "swim"})
            assert await anext(updates) == NOTE
            assert (await client.read_resource(NOTE)).contents[0].text == "swim"
            await client.read_resource("memo://tomorrow")  # still cached
    assert asked(wire, "resources/read") == 3


async def test_an_answer_to_a_request_sent_before_an_invalidation_is_not_stored() -> None:
    server = make_server()
    release = trio.Event()

    @server.resource("memo://slow")
    async def slow() -> str:
        await release.wait()
        return "late"

    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=STATELESS_ONLY) as (client, wire, _):
            async with client.subscribe("memo://slow") as updates, trio.open_nursery() as nursery:
                nursery.start_soon(client.read_resource, "memo://slow")
                await trio.testing.wait_all_tasks_blocked()
                server.notify_resource_updated("memo://slow")
                assert await anext(updates) == "memo://slow"
                release.set()
            assert len(client.cache) == 1  # the probe's discover answer stays
            await client.read_resource("memo://slow")
            assert len(client.cache) == 2
    assert asked(wire, "resources/read") == 2


async def test_each_client_has_a_cache_of_its_own_over_http() -> None:
    server = make_server(cache_scope="public")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            async with (
                mcptrio.open_client(f"{url}/mcp", revisions=STATELESS_ONLY) as one,
                mcptrio.open_client(f"{url}/mcp", revisions=STATELESS_ONLY) as two,
            ):
                first = await one.read_resource(NOTE)
                assert first.cache_scope == "public"
                assert await one.read_resource(NOTE) is first
                assert await two.read_resource(NOTE) is not first
                assert one.cache.statistics().hits == 1
                assert two.cache.statistics().hits == 0
            nursery.cancel_scope.cancel()


async def test_an_error_for_a_cursor_drops_that_lists_pages() -> None:
    server = make_server(page_size=1)
    server.add_tool(lambda: "a", name="a")
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=STATELESS_ONLY) as (client, _wire, _):
            page = await client.list_tools()
            await client.list_resources()
            assert len(client.cache) == 3  # with the probe's discover answer
            with pytest.raises(mcptrio.InvalidParams):
                await client.list_tools("not a cursor")
            assert len(client.cache) == 2  # the resources' page and discover's answer stay
            assert await client.list_tools() is not page


def test_results_without_a_positive_ttl_are_never_stored() -> None:
    cache = ResultCache(size=4)

    async def check() -> None:
        for ttl in (None, 0, -5):
            result = ListToolsResult(tools=[])
            if ttl is not None:
                result.ttl_ms = ttl
            cache.store(("tools/list", None), result)
            assert len(cache) == 0

    trio.run(check)


async def test_the_probes_discover_answer_is_not_kept_when_the_server_allows_no_reuse() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(make_server(ttl_ms=None), revisions=STATELESS_ONLY) as (
            client,
            wire,
            _,
        ):
            await client.discover()
            assert client.cache.statistics().hits == 0
    assert asked(wire, "server/discover") == 2


async def test_a_refreshed_discover_asks_although_the_probes_answer_is_fresh() -> None:
    with trio.fail_after(10):
        async with open_recorded_client(make_server(), revisions=STATELESS_ONLY) as (
            client,
            wire,
            _,
        ):
            await client.discover(cache="refresh")
            await client.discover()
    assert asked(wire, "server/discover") == 2
