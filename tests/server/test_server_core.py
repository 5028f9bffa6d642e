"""The Server core: capabilities, pagination, run-time changes, subscriptions, logging, and
the Context's client features (sampling, elicitation, roots), checked on the wire."""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec
import pytest
import trio
import trio.lowlevel
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.client import ClientIdentity, Handlers
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
    ListToolsRequest,
    Root,
    RootsCapability,
    SamplingCapability,
    SetLevelRequest,
    SubscribeRequest,
    TextContent,
    UnsubscribeRequest,
)
from mcptrio.runtime.context import RequestContext
from mcptrio.server.context import Context

from conftest import Wire, open_recorded_client


def updates(wire: Wire) -> list[str]:
    """The URIs of the resource updates the server sent."""
    return [
        m["params"]["uri"]
        for m in wire.server_to_client
        if m.get("method") == "notifications/resources/updated"
    ]


def log_levels(wire: Wire) -> list[str]:
    """The levels of the log messages the server sent."""
    return [
        m["params"]["level"]
        for m in wire.server_to_client
        if m.get("method") == "notifications/message"
    ]


def many_tools_server(count: int, page_size: int | None) -> mcptrio.Server:
    server = mcptrio.Server("many", page_size=page_size)
    for i in range(count):

        async def tool() -> str:
            return "ok"

        server.add_tool(tool, name=f"tool_{i:02d}")
    return server


async def wait_for(predicate: Any, wire: Wire) -> None:
    # The recording is a plain list with nothing to wait on, so poll it.
    with trio.fail_after(5):
        while not predicate(wire):  # noqa: ASYNC110
            await trio.sleep(0.001)


# ---------------------------------------------------------------------- capabilities


async def test_capabilities_declare_what_is_registered() -> None:
    server = mcptrio.Server("caps", experimental={"x-demo": {"on": True}})

    @server.tool()
    def noop() -> str:
        return ""

    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _wire, _session):
            caps = client.server_capabilities
    assert caps.tools is not None and caps.tools.list_changed is True
    assert caps.resources is None
    assert caps.prompts is None
    assert caps.logging == {}
    assert caps.experimental == {"x-demo": {"on": True}}


async def test_declare_announces_features_before_anything_is_registered() -> None:
    server = mcptrio.Server("later", declare=("tools", "prompts"))
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _wire, _session):
            caps = client.server_capabilities
    assert caps.tools is not None
    assert caps.prompts is not None


async def test_server_info_carries_title_description_and_website() -> None:
    server = mcptrio.Server(
        "info", "2.0.0", title="Info", description="Describes", website_url="https://x.test"
    )
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _session):
            info = client.server_info
            wire.validate(client.protocol_version)
    assert (info.name, info.version, info.title) == ("info", "2.0.0", "Info")
    assert info.description == "Describes"
    assert info.website_url == "https://x.test"


# ---------------------------------------------------------------------- pagination


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_tools_list_pages_follow_opaque_cursors(revision: str) -> None:
    server = many_tools_server(5, page_size=2)
    names: list[str] = []
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            cursor: str | None = None
            pages = 0
            while True:
                page = await client.request(ListToolsRequest(cursor=cursor or None))
                names += [t.name for t in page.tools]
                pages += 1
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            wire.validate(revision)
    assert pages == 3
    assert names == [f"tool_{i:02d}" for i in range(5)]


async def test_an_invalid_cursor_gets_invalid_params() -> None:
    server = many_tools_server(3, page_size=2)
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _session):
            for bad in ("not-a-cursor!", "cHJvbXB0czoy", ""):
                with pytest.raises(mcptrio.InvalidParams):
                    await client.request(ListToolsRequest(cursor=bad))
            # The session carries on after the errors.
            assert [t.name for t in (await client.list_tools()).tools] == ["tool_00", "tool_01"]
            errors = [m for m in wire.server_to_client if "error" in m]
    assert [e["error"]["code"] for e in errors] == [-32602, -32602, -32602]


async def test_page_size_none_returns_one_page() -> None:
    server = many_tools_server(150, page_size=None)
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, _wire, _session):
            page = await client.request(ListToolsRequest())
    assert len(page.tools) == 150
    assert page.next_cursor is None


# ---------------------------------------------------------------------- run-time changes


async def test_adding_and_removing_tools_notifies_every_session() -> None:
    server = mcptrio.Server("dynamic", declare=("tools",))

    def changed(wire: Wire) -> int:
        return wire.methods_sent_by_server().count("notifications/tools/list_changed")

    with trio.fail_after(5):
        async with (
            open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client_a, wire_a, _sa),
            open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client_b, wire_b, _sb),
        ):
            await client_a.ping()
            await client_b.ping()

            async def extra() -> str:
                return "extra"

            server.add_tool(extra)
            await wait_for(lambda w: changed(w) >= 1, wire_a)
            await wait_for(lambda w: changed(w) >= 1, wire_b)
            assert [t.name for t in (await client_a.list_tools()).tools] == ["extra"]
            assert server.remove_tool("extra")
            assert not server.remove_tool("extra")
            await wait_for(lambda w: changed(w) >= 2, wire_a)
            assert (await client_b.list_tools()).tools == []
            wire_a.validate(client_a.protocol_version)


async def test_a_burst_of_changes_is_merged_into_few_notifications() -> None:
    server = mcptrio.Server("burst", declare=("tools",))
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
            await client.ping()
            for i in range(200):

                async def tool() -> str:
                    return ""

                server.add_tool(tool, name=f"t{i}")
            await wait_for(
                lambda w: "notifications/tools/list_changed" in w.methods_sent_by_server(), wire
            )
            await trio.sleep(0.05)
            count = wire.methods_sent_by_server().count("notifications/tools/list_changed")
    assert 1 <= count <= 2


async def test_no_list_changed_for_a_feature_the_session_was_not_offered() -> None:
    server = mcptrio.Server("undeclared")
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _session):
            await client.ping()

            async def late() -> str:
                return ""

            server.add_tool(late)
            await trio.sleep(0.05)
            await client.ping()
    assert "notifications/tools/list_changed" not in wire.methods_sent_by_server()


# ---------------------------------------------------------------------- subscriptions


def watched_server() -> mcptrio.Server:
    server = mcptrio.Server("watched")
    state = {"value": "v0"}

    @server.resource("test://watched", mime_type="text/plain")
    def watched() -> str:
        return state["value"]

    @server.resource("test://other", mime_type="text/plain")
    def other() -> str:
        return "other"

    @server.resource("test://item/{n}")
    def item(n: int) -> str:
        return f"item {n}"

    return server


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_updates_reach_exactly_the_subscribed_sessions(revision: str) -> None:
    server = watched_server()
    with trio.fail_after(5):
        async with (
            open_recorded_client(server, revisions=only(revision)) as (a, wire_a, _),
            open_recorded_client(server, revisions=only(revision)) as (b, wire_b, _),
        ):
            await a.request(SubscribeRequest(uri="test://watched"))
            await b.request(SubscribeRequest(uri="test://other"))
            await a.request(SubscribeRequest(uri="test://item/7"))
            assert server.notify_resource_updated("test://watched") == 1
            assert server.notify_resource_updated("test://item/7") == 1
            assert server.notify_resource_updated("test://nobody") == 0
            await wait_for(lambda w: len(updates(w)) >= 2, wire_a)
            await a.request(UnsubscribeRequest(uri="test://watched"))
            assert server.notify_resource_updated("test://watched") == 0
            await a.ping()
            await b.ping()
            wire_a.validate(revision)
            wire_b.validate(revision)
    assert sorted(updates(wire_a)) == ["test://item/7", "test://watched"]
    assert updates(wire_b) == []


async def test_subscribing_to_an_unknown_resource_gets_resource_not_found() -> None:
    server = watched_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
            with pytest.raises(mcptrio.McpError) as info:
                await client.request(SubscribeRequest(uri="test://missing"))
    assert info.value.code == -32002
    assert [m["error"]["data"] for m in wire.server_to_client if "error" in m] == [
        {"uri": "test://missing"}
    ]


async def test_a_slow_subscriber_gets_updates_merged_not_queued_without_bound() -> None:
    server = watched_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, session):
            await client.request(SubscribeRequest(uri="test://watched"))
            # No checkpoint between these: the subscription actor cannot run in between.
            for _ in range(1000):
                server.notify_resource_updated("test://watched")
            await wait_for(lambda w: len(updates(w)) >= 1, wire)
            await trio.sleep(0.05)
            server.notify_resource_updated("test://watched")
            await wait_for(lambda w: len(updates(w)) >= 2, wire)
            assert server.session_state(session).subscriptions == frozenset({"test://watched"})
    assert 2 <= len(updates(wire)) <= 3


async def test_subscriptions_past_the_cap_are_refused_and_start_no_actor() -> None:
    server = watched_server()
    server.max_subscriptions = 3
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, session):
            for n in range(3):
                await client.request(SubscribeRequest(uri=f"test://item/{n}"))
            # Subscribing again to one already held is not a new subscription.
            await client.request(SubscribeRequest(uri="test://item/0"))
            with pytest.raises(mcptrio.McpError) as info:
                await client.request(SubscribeRequest(uri="test://item/3"))
            assert info.value.code == -32600
            assert len(server.session_state(session).subscriptions) == 3
            await client.request(UnsubscribeRequest(uri="test://item/1"))
            await client.request(SubscribeRequest(uri="test://item/3"))
            wire.validate(client.protocol_version)


async def test_subscription_actors_end_with_their_session() -> None:
    server = watched_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, _wire, _):
            await client.request(SubscribeRequest(uri="test://watched"))
            assert len(server.session_states()) == 1
        await trio.lowlevel.checkpoint()
    assert server.session_states() == []
    assert server.notify_resource_updated("test://watched") == 0


# ---------------------------------------------------------------------- logging


def logging_server() -> mcptrio.Server:
    server = mcptrio.Server("logs")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, {"level": level}, logger="chatty")
        return "done"

    @server.tool()
    async def uses_stdlib() -> str:
        logging.getLogger("app.worker").warning("from the stdlib")
        return "done"

    return server


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_log_messages_respect_the_session_level(revision: str) -> None:
    server = logging_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (client, wire, _):
            await client.call_tool("chatty", {})
            assert log_levels(wire) == ["debug", "info", "warning", "error"]
            await client.request(SetLevelRequest(level="warning"))
            await client.call_tool("chatty", {})
            wire.validate(revision)
    assert log_levels(wire) == ["debug", "info", "warning", "error", "warning", "error"]
    message = next(m for m in wire.server_to_client if m.get("method") == "notifications/message")
    assert message["params"] == {"level": "debug", "data": {"level": "debug"}, "logger": "chatty"}


async def test_an_unknown_log_level_gets_invalid_params() -> None:
    server = logging_server()
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, _wire, _):
            with pytest.raises(mcptrio.InvalidParams):
                await client.request(SetLevelRequest(level="loud"))  # type: ignore[arg-type]


async def test_stdlib_records_are_bridged_to_the_requesting_session() -> None:
    server = logging_server()
    handler = server.bridge_logging("app", level=logging.INFO)
    try:
        with trio.fail_after(5):
            async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
                await client.call_tool("uses_stdlib", {})
                await wait_for(lambda w: log_levels(w) == ["warning"], wire)
                wire.validate(client.protocol_version)
    finally:
        logging.getLogger("app").removeHandler(handler)
    message = next(m for m in wire.server_to_client if m.get("method") == "notifications/message")
    assert message["params"] == {
        "level": "warning",
        "data": "from the stdlib",
        "logger": "app.worker",
    }


# ---------------------------------------------------------------------- client features


def asking_server() -> mcptrio.Server:
    server = mcptrio.Server("asks")

    @server.tool()
    async def ask_llm(ctx: Context, prompt: str) -> str:
        result = await ctx.sample(prompt, max_tokens=50, system_prompt="Be brief.")
        assert isinstance(result.content, TextContent)
        return result.content.text

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        class Answer(msgspec.Struct):
            name: str
            age: int = 30

        answer = await ctx.elicit("Who are you?", Answer)
        return f"{answer.action}:{answer.data!r}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        return ",".join(r.uri for r in await ctx.list_roots())

    return server


async def answer_everything(ctx: RequestContext, request: Any) -> Any:
    if isinstance(request, CreateMessageRequest):
        first = request.messages[0].content
        assert isinstance(first, TextContent)
        return CreateMessageResult(
            role="assistant", content=TextContent(text=f"echo {first.text}"), model="test-model"
        )
    if isinstance(request, ElicitRequest):
        return ElicitResult(action="accept", content={"name": "Ada"})
    if isinstance(request, ListRootsRequest):
        return ListRootsResult(roots=[Root(uri="file:///a"), Root(uri="file:///b")])
    raise mcptrio.MethodNotFound(request.METHOD)


ALL_CLIENT_CAPS = ClientCapabilities(
    sampling=SamplingCapability(),
    elicitation=ElicitationCapability(),
    roots=RootsCapability(list_changed=True),
)


def answering_client(
    server: mcptrio.Server, revision: str
) -> AbstractAsyncContextManager[tuple[mcptrio.Client, Wire, mcptrio.Session]]:
    """A recorded client of ``server`` in ``revision`` that declares every client capability
    and answers every request the server sends it."""
    return open_recorded_client(
        server,
        identity=ClientIdentity(capabilities=ALL_CLIENT_CAPS),
        revisions=only(revision),
        handlers=Handlers(fallback=answer_everything),
    )


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_sampling_and_roots_round_trip_through_the_client(revision: str) -> None:
    server = asking_server()
    with trio.fail_after(5):
        async with answering_client(server, revision) as (client, wire, _):
            sampled = await client.call_tool("ask_llm", {"prompt": "hi"})
            rooted = await client.call_tool("roots", {})
            wire.validate(revision)
    assert sampled.content == [TextContent(text="echo hi")]
    assert rooted.content == [TextContent(text="file:///a,file:///b")]
    request = next(m for m in wire.server_to_client if m.get("method") == "sampling/createMessage")
    assert request["params"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 50,
        "systemPrompt": "Be brief.",
    }


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
async def test_elicitation_builds_the_schema_and_converts_the_answer(revision: str) -> None:
    server = asking_server()
    with trio.fail_after(5):
        async with answering_client(server, revision) as (client, wire, _):
            result = await client.call_tool("ask_user", {})
            wire.validate(revision)
    assert result.content == [TextContent(text="accept:Answer(name='Ada', age=30)")]
    request = next(m for m in wire.server_to_client if m.get("method") == "elicitation/create")
    schema = request["params"]["requestedSchema"]
    assert schema["properties"] == {
        "name": {"type": "string"},
        "age": {"type": "integer", "default": 30},
    }
    assert schema["required"] == ["name"]
    assert ("mode" in request["params"]) == (revision == "2025-11-25")


async def test_client_features_are_refused_without_the_capability() -> None:
    server = asking_server()
    with trio.fail_after(5):
        async with open_recorded_client(server) as (client, wire, _session):
            for tool, args in (("ask_llm", {"prompt": "x"}), ("ask_user", {}), ("roots", {})):
                with pytest.raises(mcptrio.McpError) as info:
                    await client.call_tool(tool, args)
                assert "did not declare" in info.value.message
    assert not [m for m in wire.server_to_client if "method" in m and "id" in m]


@pytest.mark.parametrize("revision", HANDSHAKE_SUPPORTED)
async def test_server_info_has_only_the_fields_of_the_negotiated_revision(revision: str) -> None:
    server = mcptrio.Server(
        "info", "2.0.0", title="Info", description="Describes", website_url="https://x.test"
    )
    with trio.fail_after(5):
        async with open_recorded_client(server, revisions=only(revision)) as (_client, wire, _):
            wire.validate(revision)
    info = next(m for m in wire.server_to_client if "result" in m)["result"]["serverInfo"]
    expected = {"name", "version"}
    if revision >= "2025-06-18":
        expected.add("title")
    if revision >= "2025-11-25":
        expected |= {"description", "websiteUrl"}
    assert set(info) == expected
