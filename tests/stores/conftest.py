"""Fixtures of the store tests: key prefixes, coredis clients, the memory/Redis/Valkey backends,
and the servers: here ``redis_server`` and ``own_redis_server`` are each a Redis and a Valkey
(every store test runs against both; the root conftest's, for the slower end-to-end tests
elsewhere, are Redis only)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator

import pytest
from redis_servers import SERVER_KINDS, RedisServer, executable_of

from mcptrio.stores.redis_calls import RedisClient, open_redis


def _running(kind: str) -> Iterator[RedisServer]:
    server = RedisServer(executable_of(kind))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def store_redis() -> Iterator[RedisServer]:
    yield from _running("redis")


@pytest.fixture(scope="session")
def store_valkey() -> Iterator[RedisServer]:
    yield from _running("valkey")


@pytest.fixture(params=SERVER_KINDS)
def redis_server(request: pytest.FixtureRequest) -> RedisServer:
    """The test session's Redis, then its Valkey."""
    server: RedisServer = request.getfixturevalue(f"store_{request.param}")
    return server


@pytest.fixture(params=SERVER_KINDS)
def own_redis_server(request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    """A Redis, then a Valkey, of the test's own, for tests that stop, freeze or flush it."""
    yield from _running(request.param)


@pytest.fixture
def prefix() -> str:
    """A key prefix of the test's own, so tests sharing a Redis never see each other's keys."""
    return f"test-{secrets.token_hex(6)}:"


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    async with open_redis(redis_server.url) as client:
        yield client


@pytest.fixture
async def other_redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    """A second client: what another worker process would hold."""
    async with open_redis(redis_server.url) as client:
        yield client


@pytest.fixture(params=["memory", *SERVER_KINDS])
def backend(request: pytest.FixtureRequest) -> str | None:
    """For contract tests: ``None`` for the in-memory store, else the URL of the session's
    Redis or Valkey (that half skips, or fails, without the server)."""
    if request.param == "memory":
        return None
    server: RedisServer = request.getfixturevalue(f"store_{request.param}")
    return server.url
