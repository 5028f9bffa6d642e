"""A real ``redis-server`` for the relay tests, on a loopback port, for the whole test session."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A ``redis-server`` on a free loopback port, answering; its process and URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        pytest.skip("redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"redis://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                process.terminate()
                raise
            time.sleep(0.05)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    process, url = start_redis()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)
