"""``/healthz``, ``/readyz`` and ``/metrics`` on the MCP HTTP endpoint: answered on every front
end, before the MCP checks; readiness follows Redis; the metrics count the calls and are served
only to the allowed addresses."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
import trio
from front_ends_for_tests import open_front_end
from http_client_for_tests import open_test_connection
from redis_servers import RedisServer
from test_streamable_http import make_server, serve

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, Handlers, Revisions
from mcptrio.protocol.types import ElicitResult
from mcptrio.transports.http.endpoints.app import McpHttpApp
from mcptrio.transports.http.endpoints.operations import parse_networks
from mcptrio.transports.http.endpoints.security import HttpSecurity

REDIS_ERRORS = "mcptrio_redis_errors_total"


def sample(exposition: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` with exactly ``labels`` in a text exposition."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in exposition.splitlines():
        match = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if match is None or match[1] != name:
            continue
        found = ",".join(sorted((match[2] or "").split(","))) if match[2] else ""
        if found == wanted:
            return float(match[3])
    return None


async def get(
    url: str,
    path: str,
    *,
    local: str | None = None,
    host: str | None = None,
    forwarded_for: str | None = None,
) -> tuple[int, bytes]:
    """GET ``path`` (from the address ``local``, with the ``Host`` ``host``, forwarded for
    ``forwarded_for``): status, body."""
    async with open_test_connection(url, local_address=local) as conn:
        headers = [(b"host", host.encode())] if host is not None else []
        if forwarded_for is not None:
            headers.append((b"x-forwarded-for", forwarded_for.encode()))
        response = await conn.request("GET", path, headers=headers)
        return response.status, response.body


async def test_health_and_readiness_answer_on_every_front_end_whatever_the_host(
    front_end: str,
) -> None:
    # A probe comes with the Host the orchestrator uses (a pod's address), not an allowed one.
    app = McpHttpApp(make_server(), security=HttpSecurity(allowed_hosts=["mcp.example"]))
    with trio.fail_after(10):
        async with serve(front_end, app) as url:
            assert await get(url, "/healthz", host="10.1.2.3:8000") == (200, b"ok\n")
            assert await get(url, "/readyz", host="10.1.2.3:8000") == (200, b"ready\n")
            # Not served unless asked for.
            assert (await get(url, "/metrics"))[0] == 404
            # The MCP path still checks the Host.
            async with open_test_connection(url) as conn:
                refused = await conn.request("POST", "/mcp", headers=[(b"host", b"10.1.2.3")])
                assert refused.status == 403


async def test_readiness_is_503_until_the_endpoint_hosts_its_sessions() -> None:
    app = McpHttpApp(make_server())
    with trio.fail_after(10):
        async with open_front_end("builtin-h11", app) as url:
            status, body = await get(url, "/readyz")
            assert status == 503
            assert body.startswith(b"not ready: ") and body.count(b"\n") == 1
            assert await get(url, "/healthz") == (200, b"ok\n")


async def test_readiness_is_503_while_redis_is_down_and_200_when_it_returns(
    own_redis_server: RedisServer,
) -> None:
    server = make_server()
    with trio.fail_after(30):
        async with mcptrio.open_stores(own_redis_server.url, timeout=0.5) as stores:
            server.use_stores(stores)
            app = McpHttpApp(server, metrics=True)
            async with serve("builtin-h11", app) as url:
                assert await get(url, "/readyz") == (200, b"ready\n")
                errors_before = sample((await get(url, "/metrics"))[1].decode(), REDIS_ERRORS)
                await trio.to_thread.run_sync(own_redis_server.stop)
                status, body = await get(url, "/readyz")
                assert status == 503
                # What failed goes to the log: the probe's answer names no address.
                assert body == b"not ready: Redis does not answer\n"
                assert await get(url, "/healthz") == (200, b"ok\n")
                errors_after = sample((await get(url, "/metrics"))[1].decode(), REDIS_ERRORS)
                assert errors_before is not None and errors_after is not None
                assert errors_after > errors_before
                await trio.to_thread.run_sync(own_redis_server.start)
                # The client's pool reconnects on the next call.
                assert await get(url, "/readyz") == (200, b"ready\n")


async def test_metrics_count_the_calls_by_method_and_outcome(front_end: str) -> None:
    server = make_server()

    @server.tool()
    async def fail() -> str:
        raise ValueError("no")

    app = McpHttpApp(server, metrics=True)
    with trio.fail_after(10):
        async with (
            serve(front_end, app) as url,
            # A handshake-era client: its session is one of those open.
            mcptrio.open_client(f"{url}/mcp", revisions=HANDSHAKE_ERA) as client,
        ):
            for _ in range(3):
                assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content
            with pytest.raises(mcptrio.McpError):
                await client.call_tool("nope", {})
            failed = await client.call_tool("fail", {})
            assert failed.is_error
            status, body = await get(url, "/metrics")
            assert status == 200
            text = body.decode()
            assert sample(text, "mcptrio_sessions_open") == 1
    total = "mcptrio_requests_total"
    assert sample(text, total, method="tools/call", outcome="ok") == 3
    assert sample(text, total, method="tools/call", outcome="tool_error") == 1
    assert sample(text, total, method="tools/call", outcome="-32602") == 1
    assert sample(text, "mcptrio_request_duration_seconds_count", method="tools/call") == 5
    latency = "mcptrio_request_duration_seconds_bucket"
    assert sample(text, latency, method="tools/call", le="+Inf") == 5
    assert sample(text, latency, method="tools/call", le="60.0") == 5
    assert sample(text, "mcptrio_requests_in_flight") == 0
    assert sample(text, "mcptrio_forwarded_requests_total") == 0
    assert sample(text, "mcptrio_redis_errors_total") is not None


async def test_metrics_count_an_input_round_as_input_required_not_ok(front_end: str) -> None:
    server = make_server()

    @server.tool()
    async def ask(ctx: mcptrio.Context) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"n": {"type": "string"}}}
        )
        return str(answer.content)

    async def elicitation(ctx: Any, request: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"n": "Ada"})

    app = McpHttpApp(server, metrics=True)
    stateless = Revisions(supported=("2026-07-28",))
    with trio.fail_after(10):
        async with (
            serve(front_end, app) as url,
            mcptrio.open_client(
                f"{url}/mcp", revisions=stateless, handlers=Handlers(elicitation=elicitation)
            ) as client,
        ):
            result = await client.call_tool("ask", {})
            assert not result.is_error
            text = (await get(url, "/metrics"))[1].decode()
    total = "mcptrio_requests_total"
    # The first round asks; the retry with the answer completes.
    assert sample(text, total, method="tools/call", outcome="input_required") == 1
    assert sample(text, total, method="tools/call", outcome="ok") == 1


async def test_metrics_are_refused_to_an_address_not_allowed() -> None:
    app = McpHttpApp(make_server(), metrics=True)
    with trio.fail_after(10):
        async with serve("builtin-h11", app) as url:
            status, body = await get(url, "/metrics", local="127.0.0.2")
            assert status == 403
            assert b"not served to this address" in body
            assert (await get(url, "/metrics", local="127.0.0.1"))[0] == 200


async def test_metrics_allow_takes_networks() -> None:
    app = McpHttpApp(make_server(), metrics=True, metrics_allow=["127.0.0.0/30"])
    with trio.fail_after(10):
        async with serve("builtin-h11", app) as url:
            assert (await get(url, "/metrics", local="127.0.0.2"))[0] == 200


async def test_metrics_are_refused_to_a_request_an_unknown_proxy_forwarded() -> None:
    """A reverse proxy on an allowed address (an Ingress controller in the cluster's network)
    must not pass the metrics on to whoever it forwards for."""
    app = McpHttpApp(make_server(), metrics=True)
    with trio.fail_after(10):
        async with serve("builtin-h11", app) as url:
            status, _ = await get(url, "/metrics", forwarded_for="203.0.113.9")
            assert status == 403


async def test_metrics_behind_a_trusted_proxy_go_by_the_client_it_names() -> None:
    security = HttpSecurity(trusted_proxies=["127.0.0.1"])
    app = McpHttpApp(make_server(), security=security, metrics=True, metrics_allow=["10.0.0.0/8"])
    with trio.fail_after(10):
        async with serve("builtin-h11", app) as url:
            assert (await get(url, "/metrics", forwarded_for="10.1.2.3"))[0] == 200
            assert (await get(url, "/metrics", forwarded_for="203.0.113.9"))[0] == 403
            # Directly from the proxy's own address, which is not allowed.
            assert (await get(url, "/metrics"))[0] == 403


def test_metrics_allow_names_an_entry_that_is_no_address() -> None:
    with pytest.raises(
        ValueError, match=r"^metrics_allow 'prometheus\.local': give an IP address or a network"
    ):
        parse_networks(["10.0.0.0/8", "prometheus.local"])


async def test_metrics_show_a_request_in_flight_while_its_handler_runs() -> None:
    server = make_server()
    release = trio.Event()
    running = trio.Event()

    @server.tool()
    async def slow() -> str:
        running.set()
        await release.wait()
        return "done"

    app = McpHttpApp(server, metrics=True)
    with trio.fail_after(10):
        async with serve("builtin-h11", app) as url, mcptrio.open_client(f"{url}/mcp") as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "slow", {})
                await running.wait()
                during = (await get(url, "/metrics"))[1].decode()
                release.set()
            after = (await get(url, "/metrics"))[1].decode()
    assert sample(during, "mcptrio_requests_in_flight") == 1
    assert sample(after, "mcptrio_requests_in_flight") == 0
    assert sample(after, "mcptrio_requests_total", method="tools/call", outcome="ok") == 1


def test_metrics_without_the_extra_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    monkeypatch.delitem(sys.modules, "mcptrio.transports.http.endpoints.metrics", raising=False)
    with pytest.raises(
        ImportError, match=r"^metrics need prometheus-client: pip install 'mcptrio\[metrics\]'$"
    ):
        McpHttpApp(make_server(), metrics=True)
