"""A real redis-server for the store tests, on a free loopback port, without persistence.

``redis_server`` is one server for the session; a test that restarts or stops Redis takes
``own_redis_server`` instead, so that no other test sees it go. Without redis-server (or
valkey-server, named by ``MCPTRIO_REDIS_SERVER``) the Redis tests skip, unless
``MCPTRIO_REQUIRE_INTEROP=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator

import pytest
from redis_servers import RedisServer, executable

from mcptrio.stores.redis_calls import RedisClient, open_redis


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer(executable())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A Redis of the test's own, for tests that stop or restart it."""
    server = RedisServer(executable())
    server.start()
    try:
        yield server
    finally:
        server.stop()


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


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """For contract tests: ``None`` for the in-memory store, else the URL of the session's
    Redis (the Redis half skips, or fails, without redis-server)."""
    if request.param == "memory":
        return None
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url
