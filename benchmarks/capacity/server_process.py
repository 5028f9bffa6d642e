"""One library's HTTP server in its own process, and its resident memory once settled."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REPO_ROOT",
    "ServerProcess",
    "environment",
    "free_port",
    "listening",
    "rss_kib",
    "running_server",
    "settled_rss_kib",
]

#: Servers and stdio scripts start with the repository root as their working directory.
REPO_ROOT = Path(__file__).resolve().parent.parent.parent
#: Seconds a server has to start listening (the SDK and FastMCP import for a second or two).
START_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class ServerProcess:
    pid: int
    port: int
    process: subprocess.Popen[bytes]

    def alive(self) -> bool:
        return self.process.poll() is None


def free_port() -> int:
    """A loopback port free now (for a server process told its port on the command line)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    """Whether something accepts connections on loopback ``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _tail(log: Path) -> str:
    text = log.read_text(errors="replace").strip()
    return text[-600:] if text else "(no output)"


@contextmanager
def running_server(lib: str, max_connections: int) -> Iterator[ServerProcess]:
    """Start ``python -m benchmarks.capacity.server lib PORT`` and yield it once it listens.

    Raises ``RuntimeError`` with the end of the server's output if it exits or never listens.
    The server is terminated (killed if it lingers) on leaving.
    """
    port = free_port()
    args = (str(port), str(max_connections))
    with tempfile.TemporaryDirectory(prefix="capacity-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.capacity.server", lib, *args],
                cwd=REPO_ROOT,
                env=environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not listening(port):
                if process.poll() is not None:
                    raise RuntimeError(f"{lib} server exited {process.returncode}: {_tail(log)}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{lib} server not listening after {START_TIMEOUT_S} s")
                time.sleep(0.05)
            yield ServerProcess(process.pid, port, process)
            if process.poll() is not None:
                raise RuntimeError(f"{lib} server exited {process.returncode}: {_tail(log)}")
        finally:
            process.terminate()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def rss_kib(pid: int) -> int:
    """The process's resident set size (``VmRSS`` of ``/proc/<pid>/status``), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def settled_rss_kib(pid: int, *, pause_s: float, max_wait_s: float) -> int:
    """The RSS once two readings ``pause_s`` apart differ by at most 16 KiB (or after the wait).

    The server is asked nothing meanwhile: what it still allocates after the last answer (a
    session's tasks starting, a stream's first write) lands before the reading.
    """
    deadline = time.monotonic() + max_wait_s
    time.sleep(pause_s)
    previous = rss_kib(pid)
    while time.monotonic() < deadline:
        time.sleep(pause_s)
        current = rss_kib(pid)
        if abs(current - previous) <= 16:
            return current
        previous = current
    return previous


def environment() -> dict[str, str]:
    """The environment of child processes: this one's, with the repository importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env
