"""ClientGroup: several servers in one nursery, addressed by name, failing one at a time."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

import mcptrio
from mcptrio.client import ClientIdentity, Timeouts
from mcptrio.client.errors import ClientError
from mcptrio.client.group import ServerConnectError, UnknownServer
from mcptrio.protocol.types import TextContent
from mcptrio.runtime.transport import Transport
from mcptrio.transports.memory import memory_transport_pair

TESTS = Path(__file__).resolve().parent.parent
FRAGILE = [sys.executable, str(TESTS / "servers" / "fragile_server.py")]
FAILS_AT_ONCE = [sys.executable, "-c", "import sys; sys.exit(3)"]


def weather_server(notes_called: trio.Event | None = None) -> mcptrio.Server:
    server = mcptrio.Server("weather")

    @server.tool()
    async def forecast(city: str) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}"

    @server.tool()
    async def wait_for_notes() -> str:
        """Answers once the notes server has been called."""
        assert notes_called is not None
        await notes_called.wait()
        return "notes were called"

    return server


def notes_server(notes_called: trio.Event | None = None) -> mcptrio.Server:
    server = mcptrio.Server("notes")
    saved: list[str] = []

    @server.tool()
    async def add(text: str) -> str:
        """Save a note."""
        saved.append(text)
        if notes_called is not None:
            notes_called.set()
        return f"{len(saved)} notes"

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await trio.sleep_forever()
        return "never"

    return server


def text_of(result: mcptrio.protocol.types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


@asynccontextmanager
async def served_transport(server: mcptrio.Server) -> AsyncIterator[tuple[Transport, trio.Event]]:
    """A client transport to ``server``, served in this block; the event is set when the
    server's session has ended (the client closed it). Cancelling the returned scope kills the
    server end, as a crashing server would."""
    client_end, server_end = memory_transport_pair()
    ended = trio.Event()

    async def serve() -> None:
        try:
            await server.serve_session(server_end)
        finally:
            ended.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        yield client_end, ended
        nursery.cancel_scope.cancel()


async def test_targets_connect_on_entry_and_read_like_a_mapping_of_clients() -> None:
    with trio.fail_after(10):
        targets = {"weather": weather_server(), "notes": notes_server()}
        async with mcptrio.open_client_group(targets) as group:
            assert sorted(group) == ["notes", "weather"]
            assert len(group) == 2
            assert "weather" in group
            assert "rain" not in group
            assert isinstance(group["notes"], mcptrio.Client)
            assert group["notes"].server_info.name == "notes"
            assert dict(group.items())["weather"] is group["weather"]


async def test_list_tools_gives_every_servers_tools_with_qualified_names() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group() as group:
            await group.connect("weather", weather_server())
            await group.connect("notes", notes_server())
            tools = await group.list_tools()
    assert [(t.server, t.name, t.qualified_name) for t in tools] == [
        ("weather", "forecast", "weather/forecast"),
        ("weather", "wait_for_notes", "weather/wait_for_notes"),
        ("notes", "add", "notes/add"),
        ("notes", "hang", "notes/hang"),
    ]
    assert tools[0].tool.description == "Tomorrow's weather."
    assert tools[0] == mcptrio.GroupTool("weather", tools[0].tool)


async def test_list_tools_skips_servers_that_declare_no_tools() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"empty": mcptrio.Server("empty")}) as group:
            await group.connect("notes", notes_server())
            tools = await group.list_tools()
    assert [t.qualified_name for t in tools] == ["notes/add", "notes/hang"]


async def test_a_tool_is_called_by_server_and_name_or_by_qualified_name() -> None:
    with trio.fail_after(10):
        targets = {"weather": weather_server(), "notes": notes_server()}
        async with mcptrio.open_client_group(targets) as group:
            result = await group.call_tool("weather", "forecast", {"city": "Oslo"})
            assert text_of(result) == "sunny in Oslo"
            result = await group.call_tool("weather/forecast", {"city": "Bergen"})
            assert text_of(result) == "sunny in Bergen"
            result = await group.call_tool("notes", "add", arguments={"text": "milk"})
            assert text_of(result) == "1 notes"
            result = await group.call_tool("notes/add", {"text": "eggs"}, timeout=5)
            assert text_of(result) == "2 notes"


async def test_a_servers_own_error_is_raised_unchanged() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            with pytest.raises(mcptrio.InvalidParams):
                await group.call_tool("weather/nowhere", {})


async def test_calls_to_different_servers_run_concurrently() -> None:
    notes_called = trio.Event()
    targets = {"weather": weather_server(notes_called), "notes": notes_server(notes_called)}
    with trio.fail_after(10):
        async with mcptrio.open_client_group(targets) as group:
            answers: dict[str, str] = {}

            async def call(qualified_name: str, arguments: dict[str, str]) -> None:
                answers[qualified_name] = text_of(await group.call_tool(qualified_name, arguments))

            # The weather tool waits for the notes tool: run one after the other, they hang.
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, "weather/wait_for_notes", {})
                await wait_all_tasks_blocked()
                nursery.start_soon(call, "notes/add", {"text": "x"})
    assert answers == {"weather/wait_for_notes": "notes were called", "notes/add": "1 notes"}


async def test_an_unknown_server_raises_unknown_server_which_is_a_key_error() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            with pytest.raises(UnknownServer, match="No MCP server named 'rain' is connected"):
                group["rain"]
            with pytest.raises(KeyError):
                group["rain"]
            with pytest.raises(UnknownServer) as caught:
                await group.call_tool("rain", "forecast")
            assert caught.value.server == "rain"
            assert isinstance(caught.value, ClientError)
            with pytest.raises(UnknownServer):
                await group.call_tool("rain/forecast", {})
            with pytest.raises(UnknownServer):
                await group.disconnect("rain")


async def test_a_name_that_is_not_qualified_or_not_usable_raises_value_error() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            with pytest.raises(ValueError, match="not a qualified tool name"):
                await group.call_tool("forecast", {"city": "Oslo"})
            with pytest.raises(ValueError, match="not a qualified tool name"):
                await group.call_tool("weather/")
            for bad in ["", "a/b"]:
                with pytest.raises(ValueError, match="non-empty string without '/'"):
                    await group.connect(bad, notes_server())
            with pytest.raises(ValueError, match="already connected"):
                await group.connect("weather", notes_server())
            assert group["weather"].server_info.name == "weather"


async def test_a_connect_error_names_the_server_and_leaves_the_group_as_it_was() -> None:
    with trio.fail_after(20):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            with pytest.raises(ServerConnectError) as caught:
                await group.connect("broken", FAILS_AT_ONCE)
            assert caught.value.server == "broken"
            assert "'broken'" in str(caught.value)
            assert isinstance(caught.value.__cause__, mcptrio.McpError)
            assert list(group) == ["weather"]
            assert "broken" not in group.failures
            result = await group.call_tool("weather/forecast", {"city": "Oslo"})
            assert text_of(result) == "sunny in Oslo"


async def test_one_target_failing_on_entry_closes_the_others() -> None:
    with trio.fail_after(20):
        async with (
            served_transport(notes_server()) as (connected, connected_ended),
            served_transport(notes_server()) as (_, _),
        ):
            # "silent" is a transport nobody answers on: still connecting when "broken" fails.
            silent, _peer = memory_transport_pair()
            targets = {"notes": connected, "silent": silent, "broken": FAILS_AT_ONCE}
            with pytest.raises(ServerConnectError) as caught:
                async with mcptrio.open_client_group(targets, timeouts=Timeouts(initialize=15)):
                    pytest.fail("the block must not run")
            assert caught.value.server == "broken"
            # Closed, not left half-open: the server's session has ended.
            with trio.fail_after(1):
                await connected_ended.wait()


async def test_disconnect_closes_one_connection_and_fails_its_waiting_calls() -> None:
    with trio.fail_after(10):
        async with (
            served_transport(notes_server()) as (transport, ended),
            mcptrio.open_client_group({"weather": weather_server()}) as group,
        ):
            await group.connect("notes", transport)
            failures: list[BaseException] = []

            async def call_hang() -> None:
                try:
                    await group.call_tool("notes/hang", {})
                except mcptrio.ConnectionClosed as error:
                    failures.append(error)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_hang)
                await wait_all_tasks_blocked()  # the call is waiting on the server
                await group.disconnect("notes")
            # Closed, not left half-open: the server's session ends (it sees the end of its
            # transport on its own schedule: the client does not wait for the peer).
            with trio.fail_after(1):
                await ended.wait()
            assert len(failures) == 1
            assert list(group) == ["weather"]
            assert group.failures == {}
            with pytest.raises(UnknownServer):
                group["notes"]
            result = await group.call_tool("weather/forecast", {"city": "Oslo"})
            assert text_of(result) == "sunny in Oslo"
            # The name is free again.
            await group.connect("notes", notes_server())
            assert text_of(await group.call_tool("notes/add", {"text": "x"})) == "1 notes"


async def test_a_server_dying_later_is_recorded_and_the_others_keep_working() -> None:
    with trio.fail_after(20):
        async with (
            served_transport(notes_server()) as (transport, _),
            mcptrio.open_client_group() as group,
        ):
            await group.connect("fragile", FRAGILE)
            await group.connect("notes", transport)
            await group.connect("weather", weather_server())
            with pytest.raises(mcptrio.ConnectionClosed):
                await group.call_tool("fragile/die", {"after": 0})
            # The failed call already took it out of the group.
            assert "fragile" not in group
            assert isinstance(group.failures["fragile"], mcptrio.ConnectionClosed)
            assert "'fragile'" in str(group.failures["fragile"])
            with pytest.raises(UnknownServer, match="its connection failed"):
                group["fragile"]
            assert list(group) == ["notes", "weather"]
            tools = [t.qualified_name for t in await group.list_tools()]
            assert tools[0] == "notes/add"
            result = await group.call_tool("weather/forecast", {"city": "Oslo"})
            assert text_of(result) == "sunny in Oslo"
            # Its task closing the dead connection later changes nothing.
            await trio.sleep(0.5)
            assert list(group) == ["notes", "weather"]
            assert "'fragile'" in str(group.failures["fragile"])


async def test_the_name_of_a_server_whose_call_found_it_dead_can_be_connected_at_once() -> None:
    with trio.fail_after(20):
        async with mcptrio.open_client_group({"fragile": FRAGILE}) as group:
            with pytest.raises(mcptrio.ConnectionClosed):
                await group.call_tool("fragile", "die", {"after": 0})
            again = await group.connect("fragile", FRAGILE)
            assert "fragile" not in group.failures
            await trio.sleep(0.5)  # the old connection's task finishes closing meanwhile
            assert group["fragile"] is again
            assert group.failures == {}
            assert text_of(await group.call_tool("fragile/chatty", {"text": "hi"})) == "hi"


async def test_list_tools_leaves_out_a_server_found_dead_and_records_it() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            async with served_transport(notes_server()) as (transport, _):
                notes = await group.connect("notes", transport)
            # The server end is gone; the group's own task may not have noticed yet.
            await notes.session.closed.wait()
            tools = await group.list_tools()
            assert [t.server for t in tools] == ["weather", "weather"]
            assert "notes" not in group
            assert isinstance(group.failures["notes"], mcptrio.ConnectionClosed)


async def test_an_in_memory_server_crashing_is_recorded_and_a_reconnect_clears_it() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"weather": weather_server()}) as group:
            async with served_transport(notes_server()) as (transport, _):
                notes = await group.connect("notes", transport)
                assert text_of(await group.call_tool("notes/add", {"text": "x"})) == "1 notes"
            # Leaving served_transport killed the server end.
            await notes.session.closed.wait()
            await wait_all_tasks_blocked()
            assert "notes" not in group
            assert isinstance(group.failures["notes"], mcptrio.ConnectionClosed)
            await group.connect("notes", notes_server())
            assert "notes" not in group.failures
            assert text_of(await group.call_tool("notes/add", {"text": "x"})) == "1 notes"


async def test_leaving_the_group_closes_every_connection() -> None:
    with trio.fail_after(20):
        async with (
            served_transport(notes_server()) as (transport, ended),
            mcptrio.open_client_group() as group,
        ):
            fragile = await group.connect("fragile", FRAGILE)
            notes = await group.connect("notes", transport)
            weather = await group.connect("weather", weather_server())
        assert ended.is_set()
        for client in (fragile, notes, weather):
            assert client.session.closed.is_set()
        assert len(group) == 0
        assert group.failures == {}


async def test_an_error_in_the_block_closes_every_connection_and_is_raised_as_itself() -> None:
    with trio.fail_after(20):
        async with served_transport(notes_server()) as (transport, ended):
            with pytest.raises(LookupError, match="mine"):
                async with mcptrio.open_client_group({"notes": transport}) as group:
                    await group.connect("fragile", FRAGILE)
                    raise LookupError("mine")
            assert ended.is_set()


async def test_connections_can_be_added_while_calls_are_running() -> None:
    with trio.fail_after(10):
        async with mcptrio.open_client_group({"notes": notes_server()}) as group:
            async with trio.open_nursery() as nursery:
                for i in range(5):
                    nursery.start_soon(group.connect, f"weather{i}", weather_server())
                    nursery.start_soon(group.call_tool, "notes/add", {"text": str(i)})
            assert len(group) == 6
            results = [
                await group.call_tool(f"weather{i}/forecast", {"city": str(i)}) for i in range(5)
            ]
            assert [text_of(r) for r in results] == [f"sunny in {i}" for i in range(5)]


async def test_common_options_apply_to_every_connection_and_connect_can_override_them() -> None:
    seen: list[str] = []
    server = mcptrio.Server("who")

    @server.tool()
    async def whoami(ctx: mcptrio.Context) -> str:
        info = ctx.client_info
        assert info is not None
        seen.append(info.name)
        return info.name

    common = mcptrio.protocol.types.Implementation(name="app", version="1")
    own = mcptrio.protocol.types.Implementation(name="special", version="2")
    with trio.fail_after(10):
        async with mcptrio.open_client_group(
            {"a": server}, identity=ClientIdentity(info=common)
        ) as group:
            await group.connect("b", server, identity=ClientIdentity(info=own))
            await group.call_tool("a/whoami", {})
            await group.call_tool("b/whoami", {})
    assert seen == ["app", "special"]


async def test_cancelling_a_connect_leaves_nothing_behind() -> None:
    with trio.fail_after(10):
        silent, _peer = memory_transport_pair()
        async with mcptrio.open_client_group() as group:
            with trio.move_on_after(0.1):
                await group.connect("silent", silent)
            assert "silent" not in group
            assert group.failures == {}
            await group.connect("silent", weather_server())
            assert list(group) == ["silent"]
