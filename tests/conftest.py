"""Shared test helpers: a transport tap that records every frame, session wiring, and what a
connection sends in a given revision."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from redis_servers import RedisServer, executable

import mcptrio
from mcptrio.client.eras import ERA_CACHE
from mcptrio.protocol.codec import CarriedResult
from mcptrio.protocol.fitting import check_incoming, fit_outgoing
from mcptrio.protocol.revisions import revision_of
from mcptrio.runtime.transport import FailedRequest, Frame, Outgoing, Transport, TransportAbilities
from mcptrio.transports.memory import memory_transport_pair

from schema_validation import validate_exchange


# A real redis-server on a free loopback port, without persistence: ``redis_server`` is one for
# the test session; a test that restarts or stops Redis takes ``own_redis_server``, so that no
# other test sees it go. Without redis-server (or valkey-server, named by
# ``MCPTRIO_REDIS_SERVER``) the Redis tests skip, unless ``MCPTRIO_REQUIRE_INTEROP=1`` (set by
# ``.ci/run``) makes that a failure.
def _running_redis() -> Iterator[RedisServer]:
    server = RedisServer(executable())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    yield from _running_redis()


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A Redis of the test's own, for tests that stop or restart it."""
    yield from _running_redis()


@pytest.fixture(autouse=True)
def _forget_eras() -> None:
    """The client remembers each server's era by URL for the life of the process; tests reuse
    loopback ports, so each starts with nothing remembered."""
    ERA_CACHE.clear()


def as_sent(message: Any, revision: str) -> Any:
    """``message`` (built in the newest shape) as a connection sends it in ``revision``."""
    return fit_outgoing(message, revision_of(revision))


def as_received(message: Any, revision: str) -> Any:
    """``message`` as a connection hands it on when received in ``revision``."""
    return check_incoming(message, revision_of(revision))


class ForwardingTransport:
    """Hands every call on to ``inner``: the base of a test's transport that changes one thing
    (and declares no ability of its own)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner

    def abilities(self) -> TransportAbilities:
        return TransportAbilities()

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        return await self.inner.receive()

    async def send(self, frames: Sequence[Outgoing]) -> None:
        await self.inner.send(frames)

    async def aclose(self) -> None:
        await self.inner.aclose()


class RecordingTransport(ForwardingTransport):
    """Wraps a transport and keeps every frame it sends and receives, decoded as JSON."""

    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.sent: list[Any] = []
        self.received: list[Any] = []

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        frame = await self.inner.receive()
        if isinstance(frame, bytes):
            self.received.append(json.loads(frame))
        elif isinstance(frame, CarriedResult):
            # An in-process result handed over unencoded: recorded as the frame it stands for.
            self.received.append(json.loads(frame.encoded()))
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            self.sent.append(json.loads(frame.data))
        await self.inner.send(frames)


class Wire:
    """Both directions of one in-memory session, as the client end saw them."""

    def __init__(self, tap: RecordingTransport) -> None:
        self.tap = tap

    @property
    def client_to_server(self) -> list[Any]:
        return self.tap.sent

    @property
    def server_to_client(self) -> list[Any]:
        return self.tap.received

    def methods_sent_by_client(self) -> list[str]:
        return [m["method"] for m in self.tap.sent if "method" in m]

    def methods_sent_by_server(self) -> list[str]:
        return [m["method"] for m in self.tap.received if "method" in m]

    def validate(self, revision: str) -> None:
        """Every message either way is valid in ``revision``'s schema, and there was one."""
        assert validate_exchange(self.client_to_server, self.server_to_client, revision) > 0


@asynccontextmanager
async def open_recorded_client(
    server: mcptrio.Server, **kwargs: Any
) -> AsyncIterator[tuple[mcptrio.Client, Wire, mcptrio.Session]]:
    """An in-memory client of ``server`` whose wire traffic is recorded.

    Yields the client, the recorded wire, and the server's session.
    """
    client_end, server_end = memory_transport_pair()
    tap = RecordingTransport(client_end)
    async with trio.open_nursery() as nursery:
        server_session = await nursery.start(server.serve_session, server_end)
        async with mcptrio.open_client(tap, **kwargs) as client:
            yield client, Wire(tap), server_session
        nursery.cancel_scope.cancel()
