"""The transport conformance suite (mcptrio.testing.transport_suite) against every transport:
in memory, stdio, Streamable HTTP (JSON and SSE answers), HTTP+SSE, WebSocket (standalone, and
upgraded by the HTTP server), a gateway in front of the server, and a session forwarded by the
scale-out relay (see suite_transports.py)."""

from __future__ import annotations

import pytest
import trio
from redis_servers import RedisServer
from suite_transports import IN_MEMORY_TOO, LOCAL, RedisUrl, relay_transport

from mcptrio.testing.transport_suite import IN_MEMORY, SuiteCase, transport_suite_params

REDIS = RedisUrl()
RELAY = relay_transport(REDIS)


@pytest.mark.parametrize("case", transport_suite_params(IN_MEMORY, *IN_MEMORY_TOO))
async def test_in_memory(case: SuiteCase, autojump_clock: trio.abc.Clock) -> None:
    await case.run()


@pytest.mark.parametrize("case", transport_suite_params(*LOCAL))
async def test_over_io(case: SuiteCase) -> None:
    await case.run()


@pytest.mark.parametrize("case", transport_suite_params(RELAY))
async def test_relay(case: SuiteCase, redis_server: RedisServer) -> None:
    REDIS.url = redis_server.url
    await case.run()
