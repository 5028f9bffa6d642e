"""The Streamable HTTP cells: one library's server process, measured by wrk, cell after cell.

::

    with HttpRunner("mcptrio", "http-json") as runner:
        for workload, load in cells_for("mcptrio", "http-json"):
            record = runner.run(workload, load, duration=1.0, warmup=0.2)

``HttpRunner`` starts the library's server (``python -m benchmarks.http.server``) on a free
loopback port once and keeps it for every cell (starting the SDK takes about a second), and stops
it on exit. A run:

1. opens a session from Python and checks one answer of the workload;
2. warms up with calls from Python for ``warmup`` seconds;
3. measures with wrk for ``duration`` seconds (wrk is interrupted when the window ends, so the
   window may be shorter than wrk's whole-second ``-d``):
   ``xN``: ``wrk -t1 -cN`` calling the workload on that session (``calls.lua``);
   ``s100x20``: ``wrk -t100 -c100``, every connection opening sessions, 20 calls each, and
   closing them, in a loop (``sessions.lua``); the Python session is not used;
   every answer is checked by the Lua script, and the server's CPU time is read from
   ``/proc/<pid>/stat`` around the window;
4. waits until the server is idle (it may still answer what wrk left in flight), then deletes
   the sessions the run left open, so that the next cells meet a server as clean.

The stateless libraries (``mcptrio-stateless``, ``sdk-stateless``) use the same server process
as their handshake-era selves and open no session: step 1 checks one answer of a stateless-era
POST and step 2 warms up with them (``client.StatelessCaller``), step 3 is
``wrk -t1 -cN`` with ``stateless.lua``, and step 4 has nothing to delete. In ``http-sse`` a
stateless answer may be JSON (the server's choice, see ``stateless.lua``): the record counts
them (``json_answers``).

The floor (``matrix.FLOOR``, ``benchmarks/http/floor_server.py``) is run as the handshake-era
libraries are: it answers ``initialize`` with a fixed session id, so the same steps and scripts
drive it.

A run never raises for a failed measurement: its record carries ``error`` instead of figures.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from benchmarks.matrix import (
    FLOOR,
    HANDSHAKE_COUNTERPART,
    HTTP_TRANSPORTS,
    SESSION_LOAD,
    STATELESS_LIBS,
    RunRecord,
    callers,
)

from . import wrk
from .client import Session, SessionError, StatelessCaller, delete_sessions

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
LIBS = ("mcptrio", "sdk", "fastmcp", *STATELESS_LIBS, FLOOR)
#: The server's content type of an answer, per transport.
CONTENT_TYPES = {"http-json": "application/json", "http-sse": "text/event-stream"}
#: The same for a stateless-era request: in SSE mode a server may answer it as JSON.
STATELESS_CONTENT_TYPES = {
    "http-json": "application/json",
    "http-sse": "text/event-stream,application/json",
}
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 5.0
_TICKS = os.sysconf("SC_CLK_TCK")
_QUIET_S = 0.05
_DRAIN_TIMEOUT_S = 30.0
_LONGEST_WINDOW_S = 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()
    # After "pid (comm)", utime and stime are the stat file's fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _TICKS


def wait_until_idle(pid: int, timeout_s: float) -> bool:
    """Wait until process ``pid`` used no CPU for a moment; whether it did within the timeout.

    When wrk stops, a slow server still has up to a request per connection to answer (the SDK
    answers a few list-50 calls a second at x100 on a busy machine); the next run must not meet
    that backlog, and deleting a session while its requests run costs the SDK a logged traceback
    each (seconds for 100). The stat file counts ticks (10 ms): no tick in ``_QUIET_S``.
    """
    deadline = time.monotonic() + timeout_s
    last = process_cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(_QUIET_S)
        now = process_cpu_seconds(pid)
        if now == last:
            return True
        last = now
    return False


class ServerFailed(Exception):
    """The server process did not start, or exited."""


class HttpRunner:
    """One library's Streamable HTTP server (JSON or SSE answers) and the runs of its cells."""

    def __init__(self, lib: str, transport: str) -> None:
        if lib not in LIBS:
            raise ValueError(f"no HTTP server for {lib!r} (one of {', '.join(LIBS)})")
        if transport not in HTTP_TRANSPORTS:
            raise ValueError(f"{transport!r} is not one of {', '.join(HTTP_TRANSPORTS)}")
        self.lib = lib
        self.transport = transport
        self.stateless = lib in STATELESS_LIBS
        #: The bench server this library's cells are measured on (the stateless libraries'
        #: is their handshake-era self's: the era is the client's choice, per request).
        self.server_lib = HANDSHAKE_COUNTERPART.get(lib, lib)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._start_error = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    # ------------------------------------------------------------------ the server process

    def __enter__(self) -> HttpRunner:
        try:
            self._start()
        except ServerFailed as error:
            # Every run reports it (runs never raise): the orchestrator goes on with the others.
            self._start_error = str(error)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    def _start(self) -> None:
        self._stop()
        self.port = free_port()
        mode = "json" if self.transport == "http-json" else "sse"
        command = [
            sys.executable, "-m", "benchmarks.http.server", self.server_lib, mode, str(self.port)
        ]  # fmt: skip
        # The server's errors go to a file, not a pipe nobody reads (a full pipe would block it).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _stop)
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=self._stderr,
            stderr=self._stderr,
        )  # fmt: skip
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailed(
                    f"the {self.lib} server exited with status {self.process.returncode} at "
                    f"start: {self._server_output()}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.5),
            ):
                return
            time.sleep(0.05)
        raise ServerFailed(f"the {self.lib} server did not listen within {_START_TIMEOUT_S} s")

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _server_output(self) -> str:
        """The end of what the server printed (its traceback, if it failed)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return text[-1500:]

    def _ensure_server(self) -> int:
        """The running server's pid; a server that exited is reported and started again."""
        if self._start_error:
            raise ServerFailed(self._start_error)
        if self.process is None or self.process.poll() is not None:
            died = ""
            if self.process is not None:
                died = f"the server had exited ({self.process.returncode}): "
                died += self._server_output()
            self._start()
            if died:
                raise ServerFailed(died + " (started again for the next runs)")
        assert self.process is not None
        return self.process.pid

    # ------------------------------------------------------------------ a run

    def run(self, workload: str, load: str, duration: float, warmup: float) -> RunRecord:
        """One measurement of the cell (``workload``, ``load``); ``error`` set if it failed."""
        record: RunRecord = {
            "lib": self.lib,
            "transport": self.transport,
            "workload": workload,
            "load": load,
        }
        if self.stateless and load == SESSION_LOAD:
            record["error"] = f"{load} is not a cell of {self.lib}: it has no sessions"
            return record
        try:
            pid = self._ensure_server()
            figures = self._measure(pid, workload, load, duration, warmup)
        except (ServerFailed, SessionError, wrk.WrkError, OSError) as error:
            record["error"] = f"{type(error).__name__}: {error}"
            if self.process is not None and self.process.poll() is not None:
                record["error"] += f"; server exited: {self._server_output()}"
            return record
        record.update(figures)
        return record

    def _measure(
        self, pid: int, workload: str, load: str, duration: float, warmup: float
    ) -> RunRecord:
        seconds = duration
        session = StatelessCaller(self.port) if self.stateless else Session(self.port)
        step = "opening a session"
        try:
            if not self.stateless:
                session.open()
            step = f"checking a {workload} answer"
            session.call(workload)
            step = "warming up"
            session.burst(workload, warmup)
            step = "measuring"
            cpu_before = process_cpu_seconds(pid)
            result = self._wrk(session, workload, load, seconds)
            cpu_s = process_cpu_seconds(pid) - cpu_before
            summary = result.summary
            if not summary["ok"] and not summary["bad"] and seconds < _LONGEST_WINDOW_S:
                # A slow server (FastMCP lists 50 tools at about 15 calls/s at x100 on a busy
                # machine) may answer none of 100 calls in flight within a one-second window:
                # measure once more over a window long enough to count some.
                step = "measuring over a longer window"
                wait_until_idle(pid, _DRAIN_TIMEOUT_S)
                cpu_before = process_cpu_seconds(pid)
                result = self._wrk(session, workload, load, _LONGEST_WINDOW_S)
                cpu_s = process_cpu_seconds(pid) - cpu_before
        except (SessionError, wrk.WrkError) as error:
            raise type(error)(f"{step}: {error}") from error
        finally:
            session.close()
        wait_until_idle(pid, _DRAIN_TIMEOUT_S)
        if not self.stateless:
            # The sessions the run left open (the window closed mid-session: s100x20) and the
            # Python one, so that the next cells meet a server without them. A session whose
            # initialize was still unanswered when wrk stopped has no id yet and stays.
            left_open = [*result.summary.get("open_sessions", []), session.session_id]
            delete_sessions(self.port, left_open, session.protocol_version)
        figures = _figures(result.summary, cpu_s)
        if self.transport == "http-sse" and "json_answers" in result.summary and "calls" in figures:
            figures["json_answers"] = result.summary["json_answers"]
        return figures

    def _wrk(self, session: Session, workload: str, load: str, seconds: float) -> wrk.WrkResult:
        if self.stateless:
            return wrk.run_stateless(
                self.port,
                callers(load),
                seconds,
                workload=workload,
                content_types=STATELESS_CONTENT_TYPES[self.transport],
            )
        content_type = CONTENT_TYPES[self.transport]
        if load == SESSION_LOAD:
            return wrk.run_sessions(
                self.port, seconds, workload=workload, content_type=content_type
            )
        return wrk.run_calls(
            self.port,
            callers(load),
            seconds,
            session_id=session.session_id,
            protocol_version=session.protocol_version,
            workload=workload,
            content_type=content_type,
        )


def _figures(summary: dict[str, Any], cpu_s: float) -> RunRecord:
    """The run's figures from a script's summary, or its error."""
    problems = [
        f"{summary[key]} {label}"
        for key, label in (
            ("bad", "bad answers"),
            ("socket_errors", "socket errors"),
            ("timeouts", "timeouts"),
        )
        if summary[key]
    ]
    calls: int = summary["ok"]
    if not calls:
        problems.append("no call answered")
    if problems:
        return {"error": f"{', '.join(problems)}; first bad: {summary['first_bad'] or '-'}"}
    elapsed = summary["duration_us"] / 1e6
    figures: RunRecord = {
        "calls": calls,
        "elapsed_s": elapsed,
        "calls_per_s": calls / elapsed,
        "p50_us": float(summary["p50_us"]),
        "p90_us": float(summary["p90_us"]),
        "p99_us": float(summary["p99_us"]),
        "p999_us": float(summary["p999_us"]),
        "cpu_s": cpu_s,
        "cpu_us_per_call": cpu_s / calls * 1e6,
        "cpu_scope": "server",
    }
    if "sessions" in summary:
        figures["sessions"] = summary["sessions"]
        figures["open_p50_us"] = float(summary["open_p50_us"])
        figures["open_p99_us"] = float(summary["open_p99_us"])
    return figures
