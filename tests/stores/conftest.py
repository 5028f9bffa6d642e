"""A real redis-server for the store tests, on a free loopback port, without persistence.

``redis_server`` is one server for the session; a test that restarts or stops Redis takes
``own_redis_server`` instead, so that no other test sees it go. Without redis-server (or
valkey-server, named by ``MCPTRIO_REDIS_SERVER``) the Redis tests skip, unless
``MCPTRIO_REQUIRE_INTEROP=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from processes import stop_process

from mcptrio.stores.redis_calls import RedisClient, open_redis

SERVER = os.environ.get("MCPTRIO_REDIS_SERVER", "redis-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """A redis-server child process on ``port`` that a test can stop and start again."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not _answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.executable} did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


def _executable() -> str:
    found = shutil.which(SERVER)
    if found is None:
        if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{SERVER} is not installed (apt-get install redis-server)")
        pytest.skip(f"{SERVER} is not installed")
    return found


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer(_executable())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A Redis of the test's own, for tests that stop or restart it."""
    server = RedisServer(_executable())
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
