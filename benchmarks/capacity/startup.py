"""How long a library takes to import, and a stdio server to answer its first ``initialize``."""

from __future__ import annotations

import json
import math
import os
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

from .http_client import PROTOCOL_VERSION
from .server_process import REPO_ROOT, environment

__all__ = ["IMPORTS", "import_s", "stdio_start_s"]

#: What a user of each library imports to write a server (mcptrio loads its names lazily, so
#: the name itself is imported).
IMPORTS = {
    "mcptrio": "from mcptrio import Server",
    "sdk": "from mcp.server.mcpserver import MCPServer",
    "fastmcp": "from fastmcp import FastMCP",
}
#: Seconds a child has to import or to answer ``initialize``.
TIMEOUT_S = 60.0

_INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "capacity-bench", "version": "1.0"},
            },
        }
    ).encode()
    + b"\n"
)


def _import_once(statement: str) -> float:
    # Timed inside the child with perf_counter around the import alone: the interpreter's own
    # start-up (the same for every library) is left out.
    program = (
        f"import time\nstart = time.perf_counter()\n{statement}\nprint(time.perf_counter() - start)"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO_ROOT,
        env=environment(),
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{statement!r} failed: {done.stderr.decode(errors='replace')[-400:]}")
    return float(done.stdout.split()[-1])


def _median_within(once: Callable[[], float], runs: int, budget_s: float) -> float:
    """The median of up to ``runs`` results of ``once``: no new run starts once ``budget_s`` has
    passed, unless fewer than ``min(runs, 3)`` have been made (a slow library gets fewer runs so
    that the whole benchmark keeps to its time)."""
    results: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(results) < runs and (len(results) < min(runs, 3) or time.perf_counter() < deadline):
        results.append(once())
    return statistics.median(results)


def import_s(lib: str, runs: int, budget_s: float = math.inf) -> float:
    """Median over ``runs`` fresh interpreters of the time ``IMPORTS[lib]`` takes, in seconds
    (see :func:`_median_within` for ``budget_s``)."""
    return _median_within(partial(_import_once, IMPORTS[lib]), runs, budget_s)


def _read_line(process: subprocess.Popen[bytes], deadline: float) -> bytes:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise TimeoutError("no answer to initialize")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"stdio server exited ({process.poll()}) before answering")
            data += chunk
    return data.split(b"\n", 1)[0]


def _stdio_start_once(lib: str) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", f"benchmarks.servers.{lib}_server"],
        cwd=REPO_ROOT,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None
        # Written at once: the server reads it as soon as it listens, as a client's would be.
        process.stdin.write(_INITIALIZE)
        process.stdin.flush()
        line = _read_line(process, start + TIMEOUT_S)
        elapsed = time.perf_counter() - start
        answer = json.loads(line)
        if answer.get("id") != 1 or "result" not in answer:
            raise RuntimeError(f"{lib} stdio server answered {line[:200]!r}")
        return elapsed
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def stdio_start_s(lib: str, runs: int, budget_s: float = math.inf) -> float:
    """Median over ``runs`` of spawning ``python -m benchmarks.servers.<lib>_server`` until its
    answer to a raw ``initialize`` line is read, in seconds (``budget_s``: see
    :func:`_median_within`)."""
    return _median_within(partial(_stdio_start_once, lib), runs, budget_s)
