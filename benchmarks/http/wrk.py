"""Running wrk with the benchmark's Lua scripts, and reading the JSON line they print.

``calls.lua`` drives the ``xN`` loads (``wrk -t1 -cN``, one session opened beforehand);
``sessions.lua`` drives ``s100x20`` (``wrk -t100 -c100``, a session state machine per thread, see
its header); ``stateless.lua`` drives the stateless libraries' ``xN`` loads (``wrk -t1 -cN``,
every request a POST of revision 2026-07-28 standing alone). All check every answer and print
one JSON summary line from ``done()``.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.matrix import CALLS_PER_SESSION, FIXTURES, SESSIONS_PER_ROUND

from .client import LUA_CHECKS, PATH, PROTOCOL_VERSION, stateless_headers, stateless_params

HERE = Path(__file__).resolve().parent
CALLS_SCRIPT = HERE / "calls.lua"
SESSIONS_SCRIPT = HERE / "sessions.lua"
STATELESS_SCRIPT = HERE / "stateless.lua"
WRK = shutil.which("wrk") or "/usr/bin/wrk"
#: A request unanswered this long counts as a timeout (an error of the run).
REQUEST_TIMEOUT_S = 5
#: How long wrk may take to stop after SIGINT (it joins its threads and runs done()).
_GRACE_S = 30


class WrkError(Exception):
    """wrk could not run, or printed no summary."""


@dataclass(frozen=True)
class WrkResult:
    """The summary a script printed, and wrk's own CPU seconds (user + system)."""

    summary: dict[str, Any]
    wrk_cpu_s: float


#: Linux x86-64's tgkill system call: a signal to one thread of a process.
_SYS_TGKILL = 234
_SIGINT_BIT = 1 << (signal.SIGINT - 1)

#: The shortest window: below this, thread start-up and connecting dominate what wrk counts.
MIN_WINDOW_S = 0.05


def _workload_args(
    workload: str, content_type: str, params: dict[str, Any] | None = None
) -> list[str]:
    method, fixture_params = FIXTURES[workload]
    params = fixture_params if params is None else params
    kind, arg1, arg2 = LUA_CHECKS[workload]
    return [content_type, method, json.dumps(params, separators=(",", ":")), kind, arg1, arg2]


def _run(
    script: Path, threads: int, connections: int, window: float, port: int, args: list[str]
) -> WrkResult:
    """Run wrk for ``window`` seconds, which may be less than a second.

    wrk's ``-d`` takes whole seconds, so wrk is given one more whole second than the window and
    interrupted with SIGINT when the window ends: it then stops its threads, and ``done()``
    prints the summary with the duration wrk really measured, as at the end of ``-d``.
    """
    window = max(MIN_WINDOW_S, window)
    seconds = math.ceil(window) + 1
    command = [
        WRK,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        f"{REQUEST_TIMEOUT_S}s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}{PATH}",
        "--",
        *args,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    except FileNotFoundError as error:
        raise WrkError(f"wrk not found ({WRK}): install it (apt-get install wrk)") from error
    try:
        time.sleep(window)
        _interrupt(process)
        stdout, stderr = process.communicate(timeout=_GRACE_S)
    except subprocess.TimeoutExpired as error:
        raise WrkError(f"wrk did not stop within {_GRACE_S} s of its window's end") from error
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in stdout.splitlines() if ln.startswith("{")), None)
    if process.returncode != 0 or line is None:
        output = (stderr or stdout).strip()[-500:]
        raise WrkError(f"wrk failed (status {process.returncode}): {output}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return WrkResult(json.loads(line), cpu)


def _catches_sigint(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & _SIGINT_BIT)
    return False


def _interrupt(process: subprocess.Popen[str]) -> None:
    """End wrk's run now, as the end of ``-d`` would.

    wrk's main thread sleeps for ``-d`` and then stops the threads; a SIGINT handler cuts the
    sleep short, but only when the signal lands on the main thread: sent to the process, it may
    be taken by any of wrk's threads (with ``-t100`` almost surely not the main one), which then
    only sets the stop flag while the main thread sleeps on. So the signal goes to the main
    thread alone (tgkill), and only once wrk has installed its handler: before that, SIGINT
    would kill it.
    """
    deadline = time.monotonic() + _GRACE_S
    while process.poll() is None and not _catches_sigint(process.pid):
        if time.monotonic() > deadline:
            return
        time.sleep(0.005)
    if process.poll() is not None:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if (
        os.uname().machine != "x86_64"
        or libc.syscall(_SYS_TGKILL, process.pid, process.pid, signal.SIGINT) != 0
    ):
        process.send_signal(signal.SIGINT)


def run_calls(
    port: int,
    connections: int,
    window: float,
    *,
    session_id: str,
    protocol_version: str,
    workload: str,
    content_type: str,
    threads: int = 1,
) -> WrkResult:
    """``connections`` connections on ``threads`` wrk threads, calling ``workload`` on one
    session, or (``session_id`` several ids, comma-separated) thread K on the Kth."""
    args = [session_id, protocol_version, *_workload_args(workload, content_type)]
    return _run(CALLS_SCRIPT, threads, connections, window, port, args)


def run_sessions(port: int, window: float, *, workload: str, content_type: str) -> WrkResult:
    """``SESSIONS_PER_ROUND`` sessions at once, each of ``CALLS_PER_SESSION`` calls, in a loop."""
    args = [
        PROTOCOL_VERSION,
        *_workload_args(workload, content_type),
        str(CALLS_PER_SESSION),
    ]
    return _run(SESSIONS_SCRIPT, SESSIONS_PER_ROUND, SESSIONS_PER_ROUND, window, port, args)


def run_stateless(
    port: int, connections: int, window: float, *, workload: str, content_types: str
) -> WrkResult:
    """``connections`` connections on one wrk thread, each call a stateless-era POST of its own.

    ``content_types``: the accepted answer types, comma-separated (see ``stateless.lua``).
    """
    params = stateless_params(workload)
    headers = [f"{name}: {value}" for name, value in stateless_headers(workload).items()]
    args = [*_workload_args(workload, content_types, params), *headers]
    return _run(STATELESS_SCRIPT, 1, connections, window, port, args)
