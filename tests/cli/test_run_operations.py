"""``mcptrio run`` for operators: ``/healthz``, ``/readyz`` and ``--metrics`` answered by every
worker, ``--metrics-allow`` checked, and ``--log-format json``."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio
from cli_runner import mcptrio
from redis_servers import RedisServer
from test_run_workers import supervised, whoami

import mcptrio as library
from mcptrio.client import HANDSHAKE_ERA
from mcptrio.server.running import run_server


async def get(url: str, path: str) -> tuple[int, str]:
    """GET ``path`` at ``url``'s server on a connection of its own (any worker may take it)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    async with stream:
        request = f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
        await stream.send_all(request.encode())
        received = b""
        while chunk := await stream.receive_some():
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode()


async def test_every_worker_answers_health_readiness_and_metrics() -> None:
    with trio.fail_after(90):
        async with supervised("--workers", "2", "--metrics") as supervisor:
            for _ in range(4):
                await whoami(supervisor.url)
            # Each on a connection of its own, so the kernel spreads them over the workers.
            for _ in range(6):
                assert await get(supervisor.url, "/healthz") == (200, "ok\n")
                assert await get(supervisor.url, "/readyz") == (200, "ready\n")
                status, text = await get(supervisor.url, "/metrics")
                assert status == 200
                assert "# TYPE mcptrio_requests_total counter" in text


async def test_metrics_are_off_unless_asked_for() -> None:
    with trio.fail_after(60):
        async with supervised() as supervisor:
            assert (await get(supervisor.url, "/metrics"))[0] == 404
            assert (await get(supervisor.url, "/healthz"))[0] == 200


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--metrics-allow", "10.0.0.0/8,prometheus"],
            "--metrics-allow: 'prometheus': give an IP address or a network (10.0.0.0/8)",
        ),
        (["--metrics"], "--metrics is served over HTTP only: add --transport http"),
    ],
)
async def test_a_bad_metrics_option_is_one_line(options: list[str], message: str) -> None:
    ran = await mcptrio("run", "tests/servers/worker_server.py", *options)
    assert ran.code == 2
    assert message in ran.error_line


SERVER = """\
import logging

import mcptrio

server = mcptrio.Server("logging-server")


@server.tool()
async def greet(name: str) -> str:
    logging.getLogger("app").warning("greeting %s", name)
    return f"hello {name}"
"""


async def test_json_logs_carry_the_request_id_method_and_session(tmp_path: Path) -> None:
    target = tmp_path / "logging_server.py"
    target.write_text(textwrap.dedent(SERVER))
    with trio.fail_after(60):
        async with supervised("--log-format", "json", target=target) as supervisor:
            async with library.open_client(supervisor.url, revisions=HANDSHAKE_ERA) as client:
                await client.call_tool("greet", {"name": "ada"})
            # The line is written before the answer; its reading here may come after.
            for _ in range(200):
                if b"greeting ada" in supervisor.stderr:
                    break
                await trio.sleep(0.05)
    lines = [json.loads(line) for line in supervisor.log.splitlines() if line.startswith("{")]
    [logged] = [line for line in lines if line["message"] == "greeting ada"]
    assert logged["level"] == "warning"
    assert logged["logger"] == "app"
    assert logged["time"].endswith("Z")
    assert logged["method"] == "tools/call"
    assert isinstance(logged["request_id"], int)
    assert isinstance(logged["session_id"], str) and logged["session_id"]


def test_metrics_without_the_extra_say_which_before_any_worker_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    monkeypatch.delitem(sys.modules, "mcptrio.transports.http.endpoints.metrics", raising=False)
    # Were the check missing, these workers would fail at once and the supervisor give up.
    failing_worker = [sys.executable, "-c", "raise SystemExit(1)"]
    with pytest.raises(ImportError) as missing:
        run_server(
            library.Server("x"),
            "http",
            port=0,
            workers=2,
            metrics=True,
            announce=io.StringIO(),
            worker_command=failing_worker,
        )
    assert str(missing.value) == "metrics need prometheus-client: pip install 'mcptrio[metrics]'"


async def test_workers_are_unready_while_redis_is_down_and_ready_when_it_returns(
    own_redis_server: RedisServer,
) -> None:
    with trio.fail_after(90):
        async with supervised("--workers", "2", "--redis", own_redis_server.url) as supervisor:
            for _ in range(4):
                assert await get(supervisor.url, "/readyz") == (200, "ready\n")
            await trio.to_thread.run_sync(own_redis_server.stop)
            for _ in range(4):
                status, text = await get(supervisor.url, "/readyz")
                assert status == 503
                assert text.startswith("not ready: Redis") and text.count("\n") == 1
                assert await get(supervisor.url, "/healthz") == (200, "ok\n")
            await trio.to_thread.run_sync(own_redis_server.start)
            for _ in range(4):
                assert await get(supervisor.url, "/readyz") == (200, "ready\n")
