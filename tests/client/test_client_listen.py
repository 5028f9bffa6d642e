"""Listen streams and the subscription API in both eras: ``subscribe()``, ``list_changes()``
and the callbacks fed by the client's own ``subscriptions/listen`` stream in the stateless era,
``client.listen()`` blocks, a stream ended by the server, and a stream ended by leaving its
block (the server's listener count back to 0). Real servers: an mcptrio ``Server`` in memory and
over Streamable HTTP on port 0."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from eras import HANDSHAKE_ERA

import mcptrio
from mcptrio.client import ListenStream, NotificationCallbacks, Revisions, Timeouts
from mcptrio.protocol.revisions import HANDSHAKE_SUPPORTED, SUPPORTED
from mcptrio.protocol.types import (
    PromptListChangedNotification,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)
from mcptrio.server import method_handlers
from mcptrio.server.subscription_bus import Listener, LocalSubscriptionBus
from mcptrio.transports.memory import memory_transport_pair

from conftest import RecordingTransport, Wire, open_recorded_client
from schema_validation import validate_message

STATELESS = "2026-07-28"
NEWEST_HANDSHAKE = HANDSHAKE_SUPPORTED[0]
#: Pinned, so that no era remembered for a reused port changes what a test speaks.
STATELESS_ONLY = Revisions(protocol_version=STATELESS, supported=SUPPORTED)
ERAS = {"stateless": STATELESS_ONLY, "handshake": HANDSHAKE_ERA}
#: (era, transport): both eras in memory, the stateless era over HTTP too.
CASES = [("stateless", "memory"), ("stateless", "http"), ("handshake", "memory")]
NOTE = "memo://today"


class CountingBus(LocalSubscriptionBus):
    """The server's bus, keeping its listeners so that a test can end them as a server would."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.listeners: list[Listener] = []
        self.opened = 0

    def subscribe(self, kinds: Iterable[Any], uris: Iterable[str]) -> Listener:
        listener = super().subscribe(kinds, uris)
        self.listeners.append(listener)
        self.opened += 1
        return listener

    def end_all(self) -> None:
        for listener in self.listeners:
            self.unsubscribe(listener)


def make_server(bus: LocalSubscriptionBus | None = None) -> mcptrio.Server:
    bus = CountingBus() if bus is None else bus
    server = mcptrio.Server("memos", version="1.0", subscriptions=bus)

    @server.resource(NOTE)
    def today() -> str:
        return "nothing yet"

    @server.resource("memo://tomorrow")
    def tomorrow() -> str:
        return "rest"

    @server.tool
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    return server


def bus_of(server: mcptrio.Server) -> CountingBus:
    assert isinstance(server.subscriptions, CountingBus)
    return server.subscriptions


@asynccontextmanager
async def connected(
    server: mcptrio.Server, era: str, transport: str, **options: Any
) -> AsyncIterator[mcptrio.Client]:
    if transport == "memory":
        async with mcptrio.open_client(server, revisions=ERAS[era], **options) as client:
            yield client
        return
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_http, "127.0.0.1", 0)
        async with mcptrio.open_client(f"{url}/mcp", revisions=ERAS[era], **options) as client:
            yield client
        nursery.cancel_scope.cancel()


async def wait_until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` (what the server does in reaction reaches it asynchronously)."""
    while True:
        if condition():
            return
        await trio.sleep(0.01)


async def no_listeners(server: mcptrio.Server) -> None:
    """Wait until the server holds no listen stream (closing one reaches it asynchronously)."""
    await wait_until(lambda: len(bus_of(server)) == 0)


class OrderedTap(RecordingTransport):
    """Records both directions in one list, in the order the client saw them."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.log: list[tuple[str, Any]] = []

    async def receive(self) -> Any:
        frame = await super().receive()
        if isinstance(frame, bytes):
            self.log.append(("in", self.received[-1]))
        return frame

    async def send(self, frames: Any) -> None:
        before = len(self.sent)
        await super().send(frames)
        self.log.extend(("out", message) for message in self.sent[before:])


def check_schema(wire: Wire, revision: str) -> None:
    for message in wire.client_to_server:
        validate_message(message, revision, "client")
    for message in wire.server_to_client:
        validate_message(message, revision, "server")


@pytest.mark.parametrize(("era", "transport"), CASES)
async def test_a_subscription_hears_a_resource_update(era: str, transport: str) -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server, era, transport) as client:
            assert len(bus_of(server)) == 0  # nothing asked for: no listen stream
            async with client.subscribe(NOTE) as updates:
                server.notify_resource_updated("memo://tomorrow")  # not subscribed to
                server.notify_resource_updated(NOTE)
                assert await anext(updates) == NOTE
            await no_listeners(server)


@pytest.mark.parametrize(("era", "transport"), CASES)
async def test_list_changes_hear_a_tool_added(era: str, transport: str) -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server, era, transport) as client, client.list_changes() as changes:
            server.add_tool(lambda: "x", name="extra")
            assert await anext(changes) == "tools"
            assert "extra" in [tool.name async for tool in client.iter_tools()]
        await no_listeners(server)


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_callbacks_are_fed_by_one_listen_stream_in_the_stateless_era(
    transport: str,
) -> None:
    server = make_server()
    changed: list[str] = []
    updated: list[str] = []
    callbacks = NotificationCallbacks(
        on_list_changed=changed.append, on_resource_updated=updated.append
    )
    with trio.fail_after(10):
        async with connected(server, "stateless", transport, notifications=callbacks) as client:
            # Open before open_client returns: a change right after connecting is heard.
            assert len(bus_of(server)) == 1
            server.add_tool(lambda: "x", name="extra")
            async with client.subscribe(NOTE) as updates:
                server.notify_resource_updated(NOTE)
                assert await anext(updates) == NOTE
            await wait_until(lambda: bool(changed))
            # The subscription came and went; the callbacks' stream stays.
            await wait_until(lambda: bus_of(server).opened == 3 and len(bus_of(server)) == 1)
        await no_listeners(server)
    assert changed == ["tools"]
    assert updated == [NOTE]


async def test_changing_the_wishes_opens_the_new_stream_before_leaving_the_old() -> None:
    server = make_server()
    client_end, server_end = memory_transport_pair()
    tap = OrderedTap(client_end)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve_session, server_end)
            async with mcptrio.open_client(tap, revisions=STATELESS_ONLY) as client:
                async with client.subscribe(NOTE):
                    async with client.subscribe("memo://tomorrow") as second:
                        server.notify_resource_updated("memo://tomorrow")
                        assert await anext(second) == "memo://tomorrow"
                    # Back to the first block's wish alone, on a stream of its own.
                    await wait_until(
                        lambda: bus_of(server).opened == 3 and len(bus_of(server)) == 1
                    )
                await no_listeners(server)
            nursery.cancel_scope.cancel()
    log = tap.log
    listens = [m for way, m in log if way == "out" and m.get("method") == "subscriptions/listen"]
    assert [m["params"]["notifications"] for m in listens] == [
        {"resourceSubscriptions": [NOTE]},
        {"resourceSubscriptions": [NOTE, "memo://tomorrow"]},
        {"resourceSubscriptions": [NOTE]},
    ]
    ids = [m["id"] for m in listens]

    def position(way: str, method: str, subscription: int) -> int:
        for index, (direction, m) in enumerate(log):
            params = m.get("params", {})
            tag = params.get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
            request = params.get("requestId")
            if direction == way and m.get("method") == method and subscription in (tag, request):
                return index
        raise AssertionError(f"no {method} for {subscription}")

    # Each stream is left only once its successor is acknowledged; the last when nothing is
    # wanted any more.
    for old, new in itertools.pairwise(ids):
        acknowledged = position("in", "notifications/subscriptions/acknowledged", new)
        assert position("out", "notifications/cancelled", old) > acknowledged
    position("out", "notifications/cancelled", ids[-1])
    check_schema(tap_wire(tap), STATELESS)


def tap_wire(tap: RecordingTransport) -> Wire:
    return Wire(tap)


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_listen_block_gets_what_the_server_acknowledged(transport: str) -> None:
    server = make_server()  # no prompts: prompt list changes are not honoured
    with trio.fail_after(10):
        async with connected(server, "stateless", transport) as client:
            async with client.listen(tools=True, prompts=True, uris=[NOTE]) as stream:
                assert stream.acknowledged.tools_list_changed is True
                assert stream.acknowledged.prompts_list_changed is not True
                assert stream.acknowledged.resource_subscriptions == [NOTE]
                assert stream.subscription_id is not None
                server.notify_resource_updated(NOTE)
                server.notify_resource_updated(NOTE)  # merged if still unread
                server.add_tool(lambda: "x", name="extra")
                seen = [await anext(stream), await anext(stream)]
                assert len(bus_of(server)) == 1  # this block's own stream, no other
            assert stream.ended == "client"
            await no_listeners(server)
    kinds = {type(n) for n in seen}
    assert kinds == {ResourceUpdatedNotification, ToolListChangedNotification}
    for notification in seen:
        assert notification.meta == {
            "io.modelcontextprotocol/subscriptionId": stream.subscription_id
        }


async def test_a_listen_blocks_notifications_reach_that_block_alone() -> None:
    server = make_server()
    updated: list[str] = []
    callbacks = NotificationCallbacks(on_resource_updated=updated.append)
    with trio.fail_after(10):
        async with mcptrio.open_client(
            server, revisions=STATELESS_ONLY, notifications=callbacks
        ) as client:
            async with client.listen(uris=[NOTE]) as stream:
                server.notify_resource_updated(NOTE)
                assert isinstance(await anext(stream), ResourceUpdatedNotification)
            # A subscribe() block is what feeds the callbacks.
            async with client.subscribe(NOTE) as updates:
                server.notify_resource_updated(NOTE)
                assert await anext(updates) == NOTE
    assert updated == [NOTE]


async def test_the_handshake_era_listen_subscribes_and_reads_the_session() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with open_recorded_client(server, revisions=HANDSHAKE_ERA) as (client, wire, _):
            assert client.protocol_version == NEWEST_HANDSHAKE
            async with client.listen(tools=True, prompts=True, uris=[NOTE]) as stream:
                assert stream.acknowledged.tools_list_changed is True
                assert stream.acknowledged.prompts_list_changed is not True  # not declared
                assert stream.subscription_id is None
                server.notify_resource_updated(NOTE)
                notification = await anext(stream)
                assert isinstance(notification, ResourceUpdatedNotification)
                server.add_tool(lambda: "x", name="extra")
                assert isinstance(await anext(stream), ToolListChangedNotification)
            assert stream.ended == "client"
    methods = wire.methods_sent_by_client()
    assert methods.count("resources/subscribe") == 1
    assert methods.count("resources/unsubscribe") == 1
    assert "subscriptions/listen" not in methods
    check_schema(wire, NEWEST_HANDSHAKE)


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_listen_ended_by_the_server_ends_the_iteration(transport: str) -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server, "stateless", transport) as client:
            async with client.listen(tools=True) as stream:
                bus_of(server).end_all()
                assert [n async for n in stream] == []
                assert stream.ended == "server"
            # The client's own stream, ended the same way, ends the blocks it fed.
            async with client.subscribe(NOTE) as updates:
                bus_of(server).end_all()
                assert [uri async for uri in updates] == []
            # A new block asks anew.
            async with client.list_changes() as changes:
                server.add_tool(lambda: "x", name="extra")
                assert await anext(changes) == "tools"


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_cancelling_a_listen_block_closes_its_stream(transport: str) -> None:
    server = make_server()
    with trio.fail_after(10):
        async with connected(server, "stateless", transport) as client:
            with trio.move_on_after(0.2):
                async with client.listen(uris=[NOTE]) as stream:
                    assert len(bus_of(server)) == 1
                    await anext(stream)  # nothing comes: cancelled here
            await no_listeners(server)
            with trio.move_on_after(0.2):
                async with client.subscribe(NOTE) as updates:
                    await anext(updates)
            await no_listeners(server)
            assert await client.call_tool("add", {"a": 1, "b": 2})


async def test_every_stateless_era_message_matches_the_schema() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with open_recorded_client(
            server,
            revisions=STATELESS_ONLY,
            notifications=NotificationCallbacks(on_list_changed=lambda kind: None),
        ) as (client, wire, _):
            async with client.listen(tools=True, uris=[NOTE]) as stream:
                server.notify_resource_updated(NOTE)
                await anext(stream)
                bus_of(server).end_all()
                async for _ in stream:
                    pass
            async with client.subscribe(NOTE) as updates, client.list_changes():
                server.notify_resource_updated(NOTE)
                await anext(updates)
        await no_listeners(server)
    methods = set(wire.methods_sent_by_server())
    assert {
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated",
    } <= methods
    check_schema(wire, STATELESS)


async def test_a_server_that_refuses_listen_streams_is_not_asked_again_in_a_loop() -> None:
    server = make_server(CountingBus(max_listeners=0))
    callbacks = NotificationCallbacks(on_list_changed=lambda kind: None)
    with trio.fail_after(10):
        async with open_recorded_client(
            server, revisions=STATELESS_ONLY, notifications=callbacks
        ) as (client, wire, _):
            await trio.sleep(0.1)
            with pytest.raises(mcptrio.InternalError):
                async with client.list_changes():
                    pass
            await trio.sleep(0.1)
            assert await client.call_tool("add", {"a": 1, "b": 2})
    # One refusal for the callbacks, one for the block that asked anew: no retry in between.
    assert wire.methods_sent_by_client().count("subscriptions/listen") == 2


async def test_subscribing_needs_the_servers_resources_subscribe() -> None:
    server = mcptrio.Server("tools only")

    @server.tool
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    with trio.fail_after(10):
        async with mcptrio.open_client(server, revisions=STATELESS_ONLY) as client:
            with pytest.raises(mcptrio.CapabilityNotNegotiated):
                async with client.subscribe(NOTE):
                    pass
            with pytest.raises(ValueError, match="nothing"):
                async with client.listen():
                    pass


async def test_a_listen_that_is_never_acknowledged_times_out(
    autojump_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    listens: list[Any] = []

    async def never_acknowledges(ctx: Any, request: Any, *served_from: Any) -> Any:
        listens.append(request)
        await trio.sleep_forever()

    monkeypatch.setattr(method_handlers, "listen", never_acknowledges)
    server = make_server()
    with trio.fail_after(60):
        async with mcptrio.open_client(
            server, revisions=STATELESS_ONLY, timeouts=Timeouts(listen=5)
        ) as client:
            start = trio.current_time()
            with pytest.raises(mcptrio.RequestTimeout):
                async with client.listen(tools=True):
                    pass
            assert trio.current_time() - start == pytest.approx(5)
            await no_listeners(server)
    assert len(listens) == 1


def test_listen_streams_merge_what_is_still_unread() -> None:
    from mcptrio.client.listen import listen_filter

    stream = ListenStream(listen_filter(["tools"], [NOTE]))
    stream.acknowledge(listen_filter(["tools"], [NOTE]))
    for _ in range(3):
        stream.offer(ToolListChangedNotification())
        stream.offer(ResourceUpdatedNotification(uri=NOTE))
    stream.offer(ResourceUpdatedNotification(uri="memo://other"))  # not acknowledged
    stream.offer(PromptListChangedNotification())  # not acknowledged
    assert stream.merged == 4
    assert len(stream._pending) == 2
