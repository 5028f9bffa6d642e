"""Fixtures of the store tests: key prefixes, coredis clients, and the memory/Redis backends.
The Redis servers themselves (``redis_server``, ``own_redis_server``) are the root conftest's."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from redis_servers import RedisServer

from mcptrio.stores.redis_calls import RedisClient, open_redis


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
