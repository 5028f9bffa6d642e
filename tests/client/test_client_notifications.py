"""The server's notifications on the client: callbacks, bounded streams, subscriptions."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
import trio
import trio.testing
from eras import HANDSHAKE_ERA, only

import mcptrio
from mcptrio.client import MergedUpdates, NotificationCallbacks
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED
from mcptrio.protocol.types import LoggingMessageNotification
from mcptrio.server.context import Context

from conftest import Wire, open_recorded_client


@pytest.fixture(params=HANDSHAKE_SUPPORTED)
def revision(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs once in every revision of the handshake era."""
    return str(request.param)


def chatty_server() -> mcptrio.Server:
    server = mcptrio.Server("chatty")

    @server.tool()
    async def talk(ctx: Context, count: int = 3) -> str:
        for i in range(count):
            await ctx.log("info", f"message {i}", logger="talk")
        await ctx.log("error", "the end")
        return "done"

    @server.tool()
    async def grow(name: str) -> str:
        server.add_tool(lambda: "new", name=name)
        return "grown"

    @server.tool()
    async def touch(uri: str) -> int:
        return server.notify_resource_updated(uri)

    server.add_resource("a", "note://a", name="a")
    server.add_resource("b", "note://b", name="b")
    return server


def chatty_client(
    revision: str, **callbacks: Any
) -> AbstractAsyncContextManager[tuple[mcptrio.Client, Wire, mcptrio.Session]]:
    """A recorded client of :func:`chatty_server` in ``revision``, calling ``callbacks``
    (:class:`NotificationCallbacks` fields)."""
    return open_recorded_client(
        chatty_server(), revisions=only(revision), notifications=NotificationCallbacks(**callbacks)
    )


# ---------------------------------------------------------------------- log messages


async def test_log_messages_reach_callbacks_and_streams(revision: str) -> None:
    called: list[Any] = []

    async def on_log(message: LoggingMessageNotification) -> None:
        called.append(message.data)

    with trio.fail_after(5):
        async with chatty_client(revision, on_log=on_log) as (client, wire, _):
            async with client.log_messages() as messages:
                await client.call_tool("talk", {"count": 2})
                got = [await messages.__anext__() for _ in range(3)]
            await client.set_logging_level("error")
            # Callbacks run in the reader before the answer that follows the messages.
            await client.call_tool("talk", {"count": 2})
            wire.validate(revision)
    assert [(m.level, m.data, m.logger) for m in got] == [
        ("info", "message 0", "talk"),
        ("info", "message 1", "talk"),
        ("error", "the end", None),
    ]
    assert called == ["message 0", "message 1", "the end", "the end"]


async def test_a_slow_log_reader_loses_the_oldest_and_counts_them() -> None:
    with trio.fail_after(5):
        async with (
            mcptrio.open_client(chatty_server(), revisions=HANDSHAKE_ERA) as client,
            client.log_messages() as messages,
        ):
            await client.call_tool("talk", {"count": 149})
            await client.ping()
            assert messages.dropped == 50
            first = await messages.__anext__()
    assert first.data == "message 50"


async def test_a_failing_callback_does_not_stop_the_session_or_other_deliveries() -> None:
    def broken(message: LoggingMessageNotification) -> None:
        raise RuntimeError("callback bug")

    with trio.fail_after(5):
        async with mcptrio.open_client(
            chatty_server(),
            notifications=NotificationCallbacks(on_log=broken),
            revisions=HANDSHAKE_ERA,
        ) as client:
            async with client.log_messages() as messages:
                await client.call_tool("talk", {"count": 1})
                assert (await messages.__anext__()).data == "message 0"
            assert (await client.call_tool("talk", {"count": 0})).is_error is not True


# ---------------------------------------------------------------------- list changes


async def test_list_changes_reach_callbacks_and_streams(revision: str) -> None:
    called: list[str] = []
    with trio.fail_after(5):
        async with chatty_client(revision, on_list_changed=called.append) as (client, wire, _):
            async with client.list_changes() as changes:
                await client.call_tool("grow", {"name": "one"})
                assert await changes.__anext__() == "tools"
            wire.validate(revision)
    assert called == ["tools"]


async def test_list_changes_merge_while_one_is_pending() -> None:
    changes: MergedUpdates[str] = MergedUpdates()
    for kind in ("tools", "prompts", "tools", "tools"):
        changes.push(kind)
    changes.close()
    with trio.fail_after(1):
        assert [kind async for kind in changes] == ["tools", "prompts"]
    assert changes.merged == 2


async def test_streams_end_when_the_connection_ends() -> None:
    server = chatty_server()
    client_end, server_end = mcptrio.transports.memory.memory_transport_pair()
    seen: list[Any] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_session, server_end)
            async with mcptrio.open_client(client_end) as client:
                async with (
                    client.log_messages() as messages,
                    client.list_changes() as changes,
                    client.subscribe("note://a") as updates,
                ):
                    await server_end.aclose()
                    async for message in messages:
                        seen.append(message)  # pragma: no cover
                    async for change in changes:
                        seen.append(change)  # pragma: no cover
                    async for update in updates:
                        seen.append(update)  # pragma: no cover
                # A stream opened after the end is over at once.
                async with client.log_messages() as late:
                    assert [m async for m in late] == []
            nursery.cancel_scope.cancel()
    assert seen == []


# ---------------------------------------------------------------------- subscriptions


async def test_subscribe_yields_updates_and_unsubscribes_on_exit(revision: str) -> None:
    called: list[str] = []
    with trio.fail_after(5):
        async with chatty_client(revision, on_resource_updated=called.append) as (client, wire, _):
            async with client.subscribe("note://a") as updates:
                assert (await client.call_tool("touch", {"uri": "note://a"})).content
                assert await updates.__anext__() == "note://a"
            await client.ping()
            wire.validate(revision)
    assert called == ["note://a"]
    sent = wire.methods_sent_by_client()
    assert sent.count("resources/subscribe") == 1
    assert sent.count("resources/unsubscribe") == 1


async def test_subscriptions_to_one_uri_share_one_server_subscription() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(chatty_server(), revisions=HANDSHAKE_ERA) as (
            client,
            wire,
            _,
        ):
            async with client.subscribe("note://a") as first:
                async with client.subscribe("note://a") as second:
                    await client.call_tool("touch", {"uri": "note://a"})
                    assert await first.__anext__() == "note://a"
                    assert await second.__anext__() == "note://a"
                # The first still has the server subscription after the second left.
                assert "resources/unsubscribe" not in wire.methods_sent_by_client()
                await client.call_tool("touch", {"uri": "note://a"})
                assert await first.__anext__() == "note://a"
            await client.ping()
            # A fresh block subscribes again.
            async with client.subscribe("note://a"):
                pass
    sent = wire.methods_sent_by_client()
    assert sent.count("resources/subscribe") == 2
    assert sent.count("resources/unsubscribe") == 2


async def test_updates_merge_while_one_is_pending() -> None:
    with trio.fail_after(5):
        async with (
            mcptrio.open_client(chatty_server()) as client,
            client.subscribe("note://b") as updates,
        ):
            for _ in range(5):
                await client.call_tool("touch", {"uri": "note://b"})
            await client.ping()
            assert await updates.__anext__() == "note://b"
            with trio.move_on_after(0.05) as idle:
                await updates.__anext__()
            assert idle.cancelled_caught


async def test_a_cancelled_block_still_unsubscribes() -> None:
    with trio.fail_after(5):
        async with open_recorded_client(chatty_server(), revisions=HANDSHAKE_ERA) as (
            client,
            wire,
            _,
        ):
            with trio.move_on_after(0.05):
                async with client.subscribe("note://a") as updates:
                    async for _ in updates:
                        pass  # pragma: no cover
            await client.ping()
    assert wire.methods_sent_by_client().count("resources/unsubscribe") == 1


async def test_a_failed_subscription_raises_and_leaves_nothing_behind() -> None:
    server = mcptrio.Server("plain")

    @server.tool()
    def nothing() -> str:
        return ""

    with trio.fail_after(5):
        async with mcptrio.open_client(server) as client:
            # This server has no resources, so it did not declare subscriptions.
            with pytest.raises(mcptrio.CapabilityNotNegotiated):
                async with client.subscribe("note://a"):
                    pass  # pragma: no cover
            with pytest.raises(mcptrio.CapabilityNotNegotiated):
                async with client.subscribe("note://a"):
                    pass  # pragma: no cover


async def test_the_bodys_error_wins_over_an_unsubscribe_failure_after_the_end() -> None:
    server = chatty_server()
    client_end, server_end = mcptrio.transports.memory.memory_transport_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_session, server_end)
            async with mcptrio.open_client(client_end) as client:
                with pytest.raises(KeyError):
                    async with client.subscribe("note://a"):
                        await server_end.aclose()
                        await client.session.closed.wait()
                        raise KeyError("the body's own")
                # Leaving cleanly after the connection died raises nothing either.
            nursery.cancel_scope.cancel()
