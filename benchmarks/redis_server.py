"""A ``redis-server`` of the benchmark's own, on a free loopback port, without persistence
(Debian's ``redis-server``, or ``valkey-server``): for the scale-out section's Redis stores."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RedisMissing", "own_redis"]

#: Seconds a started server has to answer.
START_TIMEOUT_S = 10.0


class RedisMissing(Exception):
    """No redis-server (or valkey-server) on this machine."""


@contextmanager
def own_redis() -> Iterator[str]:
    """A started redis-server's URL for the block; stopped when the block ends."""
    executable = shutil.which("redis-server") or shutil.which("valkey-server")
    if executable is None:
        raise RedisMissing("no redis-server: apt-get install redis-server, or give --redis URL")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    process = subprocess.Popen(
        [*command, "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RedisMissing(f"{executable} did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait()
