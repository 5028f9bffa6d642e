"""The transport conformance suite (mcptrio.testing.transport_suite) against every transport:
in memory, stdio, Streamable HTTP (JSON and SSE answers), HTTP+SSE, WebSocket (standalone, and
upgraded by the HTTP server), a gateway in front of the server, and a session forwarded by the
scale-out relay (see suite_transports.py)."""

from __future__ import annotations

import pytest
import trio
from redis_servers import RedisServer
from suite_transports import ALL_IN_MEMORY, LOCAL, RedisUrl, relay_transport

from mcptrio.testing.transport_suite import IN_MEMORY, SuiteCase, transport_suite_params

REDIS = RedisUrl()
RELAY = relay_transport(REDIS)


@pytest.mark.parametrize("case", transport_suite_params(IN_MEMORY, *ALL_IN_MEMORY))
async def test_transports_in_memory_conform(
    case: SuiteCase, autojump_clock: trio.abc.Clock
) -> None:
    await case.run()


@pytest.mark.parametrize("case", transport_suite_params(*LOCAL))
async def test_transports_over_io_conform(case: SuiteCase) -> None:
    await case.run()


@pytest.mark.parametrize("case", transport_suite_params(RELAY))
async def test_a_session_forwarded_by_the_relay_conforms(
    case: SuiteCase, redis_server: RedisServer
) -> None:
    REDIS.url = redis_server.url
    await case.run()
