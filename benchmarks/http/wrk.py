"""Running wrk with the benchmark's Lua scripts, and reading the JSON line they print.

``calls.lua`` drives the ``xN`` loads (``wrk -t1 -cN``, one session opened beforehand);
``sessions.lua`` drives ``s100x20`` (``wrk -t100 -c100``, a session state machine per thread, see
its header). Both check every answer and print one JSON summary line from ``done()``.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.matrix import CALLS_PER_SESSION, FIXTURES, SESSIONS_PER_ROUND

from .client import LUA_CHECKS, PATH, PROTOCOL_VERSION

HERE = Path(__file__).resolve().parent
CALLS_SCRIPT = HERE / "calls.lua"
SESSIONS_SCRIPT = HERE / "sessions.lua"
WRK = shutil.which("wrk") or "/usr/bin/wrk"
#: A request unanswered this long counts as a timeout (an error of the run).
REQUEST_TIMEOUT_S = 5
#: How long past its duration wrk may take before it is stopped (it starts and joins threads).
_GRACE_S = 30


class WrkError(Exception):
    """wrk could not run, or printed no summary."""


@dataclass(frozen=True)
class WrkResult:
    """The summary a script printed, and wrk's own CPU seconds (user + system)."""

    summary: dict[str, Any]
    wrk_cpu_s: float


def whole_seconds(duration: float) -> int:
    """wrk's ``-d`` is whole seconds, at least one."""
    return max(1, round(duration))


def _workload_args(workload: str, content_type: str) -> list[str]:
    method, params = FIXTURES[workload]
    kind, arg1, arg2 = LUA_CHECKS[workload]
    return [content_type, method, json.dumps(params, separators=(",", ":")), kind, arg1, arg2]


def _run(
    script: Path, threads: int, connections: int, seconds: int, port: int, args: list[str]
) -> WrkResult:
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
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + _GRACE_S, check=False
        )
    except FileNotFoundError as error:
        raise WrkError(f"wrk not found ({WRK}): install it (apt-get install wrk)") from error
    except subprocess.TimeoutExpired as error:
        raise WrkError(f"wrk did not finish within {seconds + _GRACE_S} s") from error
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in completed.stdout.splitlines() if ln.startswith("{")), None)
    if completed.returncode != 0 or line is None:
        output = (completed.stderr or completed.stdout).strip()[-500:]
        raise WrkError(f"wrk failed (status {completed.returncode}): {output}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return WrkResult(json.loads(line), cpu)


def run_calls(
    port: int,
    connections: int,
    seconds: int,
    *,
    session_id: str,
    protocol_version: str,
    workload: str,
    content_type: str,
) -> WrkResult:
    """``connections`` connections on one wrk thread, calling ``workload`` on one session."""
    args = [session_id, protocol_version, *_workload_args(workload, content_type)]
    return _run(CALLS_SCRIPT, 1, connections, seconds, port, args)


def run_sessions(port: int, seconds: int, *, workload: str, content_type: str) -> WrkResult:
    """``SESSIONS_PER_ROUND`` sessions at once, each of ``CALLS_PER_SESSION`` calls, in a loop."""
    args = [
        PROTOCOL_VERSION,
        *_workload_args(workload, content_type),
        str(CALLS_PER_SESSION),
    ]
    return _run(SESSIONS_SCRIPT, SESSIONS_PER_ROUND, SESSIONS_PER_ROUND, seconds, port, args)
