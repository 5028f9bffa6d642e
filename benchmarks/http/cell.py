"""One cell of the HTTP benchmark: one server, one response mode, one number of connections.

::

    python -m benchmarks.http.cell <server> <mode> <connections> <duration> [--pin] [--warmup S]

prints one JSON line. A cell:

1. starts a fresh server process (``python -m benchmarks.http.server``) on a free port and
   waits until it accepts connections;
2. opens a session in Python (``initialize``, ``notifications/initialized``) and checks one
   ``tools/call`` of ``add(1, 2)``;
3. warms up: ``wrk`` for ``warmup`` whole seconds with the cell's connections (or, with
   ``warmup`` 0, 50 calls from Python, which is enough to load every code path);
4. measures: ``wrk -t1 -c <connections> -d <duration>`` with ``calls.lua``, keep-alive, every
   response checked by the script; the server's CPU time (``/proc/<pid>/stat``) and wrk's
   (``getrusage``) are read around the window;
5. kills the server.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .server import MODES, SERVERS

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
LUA_SCRIPT = HERE / "calls.lua"
WRK = shutil.which("wrk") or "/usr/bin/wrk"
PATH = "/mcp"
#: The cores the server and wrk are pinned to with ``pin=True``.
SERVER_CORE, CLIENT_CORE = 0, 1
_TICKS = os.sysconf("SC_CLK_TCK")
_START_TIMEOUT = 30.0
_CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


class CellError(Exception):
    """The cell could not be measured (server did not start, handshake or calls failed)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _pinned(command: list[str], core: int, pin: bool) -> list[str]:
    if not pin or shutil.which("taskset") is None:
        return command
    return ["taskset", "-c", str(core), *command]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CellError(f"the server exited with status {process.returncode} at start")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise CellError(f"the server did not listen within {_START_TIMEOUT} s")


# ---------------------------------------------------------------------- the session


class Session:
    """A Streamable HTTP session opened from Python over one keep-alive connection."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.session_id = ""
        self.protocol_version = ""
        self._next_id = 0

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str | None]:
        """POST one message; the status, the JSON-RPC answer (JSON or SSE) and the session id."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = self.protocol_version
        self.connection.request("POST", PATH, json.dumps(message), headers)
        response = self.connection.getresponse()
        body = response.read()
        session_id = response.getheader("mcp-session-id")
        if not body:
            return response.status, None, session_id
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            for line in body.decode().splitlines():
                if line.startswith("data:") and line[5:].strip():
                    answer: dict[str, Any] = json.loads(line[5:])
                    if "id" in answer:
                        return response.status, answer, session_id
            return response.status, None, session_id
        return response.status, json.loads(body), session_id

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        status, answer, _ = self.post(message)
        if status != 200 or answer is None or "result" not in answer:
            raise CellError(f"{method} got {status}: {answer}")
        result: dict[str, Any] = answer["result"]
        return result

    def open(self) -> None:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "benchmarks.http", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        status, answer, session_id = self.post(message)
        if status != 200 or answer is None or "result" not in answer or not session_id:
            raise CellError(f"initialize got {status} {answer} (session id {session_id!r})")
        self.session_id = session_id
        self.protocol_version = answer["result"]["protocolVersion"]
        status, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise CellError(f"notifications/initialized got {status}")

    def call_add(self) -> None:
        result = self.request("tools/call", _CALL)
        if result.get("isError") or result.get("content") != [{"type": "text", "text": "3"}]:
            raise CellError(f"add(1, 2) returned {result}")

    def close(self) -> None:
        self.connection.close()


# ---------------------------------------------------------------------- wrk


def run_wrk(
    port: int, session: Session, connections: int, seconds: int, pin: bool
) -> dict[str, Any]:
    """One wrk run; its JSON summary plus wrk's own CPU seconds."""
    command = [
        WRK,
        "-t1",
        f"-c{connections}",
        f"-d{seconds}",
        "--timeout",
        "5",
        "-s",
        str(LUA_SCRIPT),
        f"http://127.0.0.1:{port}{PATH}",
        "--",
        session.session_id,
        session.protocol_version,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run(
        _pinned(command, CLIENT_CORE, pin),
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in completed.stdout.splitlines() if ln.startswith("{")), None)
    if completed.returncode != 0 or line is None:
        raise CellError(f"wrk failed ({completed.returncode}): {completed.stderr.strip()}")
    summary: dict[str, Any] = json.loads(line)
    summary["wrk_cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return summary


# ---------------------------------------------------------------------- the cell


def run_cell(
    server: str, mode: str, connections: int, duration: int, *, pin: bool, warmup: int
) -> dict[str, Any]:
    port = free_port()
    command = [sys.executable, "-m", "benchmarks.http.server", server, mode, str(port)]
    process = subprocess.Popen(
        _pinned(command, SERVER_CORE, pin), cwd=REPO_ROOT, stdout=subprocess.DEVNULL
    )
    try:
        _wait_until_listening(port, process)
        session = Session(port)
        try:
            session.open()
            session.call_add()
            if warmup <= 0:
                for _ in range(50):
                    session.call_add()
            protocol_version = session.protocol_version
        finally:
            session.close()
        if warmup > 0:
            run_wrk(port, session, connections, warmup, pin)
        cpu_before = _cpu_seconds(process.pid)
        summary = run_wrk(port, session, connections, duration, pin)
        server_cpu = _cpu_seconds(process.pid) - cpu_before
    finally:
        process.kill()
        process.wait()
    seconds = summary["duration_us"] / 1e6
    requests = summary["requests"]
    result: dict[str, Any] = {
        "server": server,
        "mode": mode,
        "connections": connections,
        "protocol_version": protocol_version,
        "calls": requests,
        "seconds": seconds,
        "calls_per_s": requests / seconds if seconds else 0.0,
        "server_cpu_s": server_cpu,
        "server_cpu_us_per_call": server_cpu / requests * 1e6 if requests else None,
        "wrk_cpu_share": summary["wrk_cpu_s"] / seconds if seconds else None,
        "latency_p50_ms": summary["latency_p50_us"] / 1000,
        "latency_p99_ms": summary["latency_p99_us"] / 1000,
        "ok": summary["ok"],
        "bad": summary["bad"],
        "socket_errors": summary["socket_errors"],
        "timeouts": summary["timeouts"],
    }
    if summary["bad"] or summary["socket_errors"] or summary["timeouts"]:
        result["error"] = (
            f"{summary['bad']} bad answers, {summary['socket_errors']} socket errors, "
            f"{summary['timeouts']} timeouts; first bad: {summary['first_bad']!r}"
        )
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http.cell", description=__doc__)
    parser.add_argument("server", choices=SERVERS)
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("connections", type=int)
    parser.add_argument("duration", type=int, help="whole seconds measured")
    parser.add_argument("--warmup", type=int, default=1, help="whole seconds of wrk warm-up")
    parser.add_argument("--pin", action="store_true", help="server on core 0, wrk on core 1")
    args = parser.parse_args(argv)
    try:
        result = run_cell(
            args.server,
            args.mode,
            args.connections,
            args.duration,
            pin=args.pin,
            warmup=args.warmup,
        )
    except CellError as error:
        result = {"server": args.server, "mode": args.mode, "error": str(error)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
