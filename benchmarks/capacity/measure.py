"""``measure(lib)``: the capacity record of one library (memory per session, session opening,
import and stdio start-up)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TypedDict

from .held import held_idle
from .server_process import ServerProcess, running_server
from .sessions import memory_per_session, open_latency_us, percentile
from .startup import import_s, stdio_start_s

__all__ = ["LIBS", "CapacityRecord", "measure"]

LIBS = ("mcptrio", "sdk", "fastmcp")
#: The most sessions a quick run opens per memory figure.
QUICK_SESSIONS = 100
#: The most sessions FastMCP is given per memory figure: its runner keeps the SDK's default
#: limit of 10,000 open sessions, and the timed openings (201) come on top of the idle ones.
FASTMCP_SESSIONS = 9_000
#: mcptrio's built-in front end serves at most this many connections by default.
_MCPTRIO_DEFAULT_MAX_CONNECTIONS = 1000


class CapacityRecord(TypedDict, total=False):
    """The capacity figures of one library (see the benchmark contract). A figure that could not
    be measured is absent and ``error`` says why."""

    lib: str
    sessions: int
    rss_idle_kib_per_session: float
    rss_get_stream_kib_per_session: float
    session_open_p50_us: float
    session_open_p99_us: float
    import_s: float
    stdio_start_s: float
    #: The held-sessions cell (``measure(held=...)``, see :mod:`benchmarks.capacity.held`).
    held_sessions_asked: int
    held_sessions: int
    held_rss_mib: float
    held_within_budget: bool
    held_open_s: float
    #: How the figures were taken where a library needed something particular.
    notes: str
    error: str
    elapsed_s: float


def _max_connections(lib: str, sessions: int) -> int:
    # Each session's GET stream holds a connection, plus the first session's and the POSTs'.
    needed = sessions + 16
    return max(needed, _MCPTRIO_DEFAULT_MAX_CONNECTIONS)


def measure(
    lib: str, *, sessions: int = 1000, quick: bool = False, held: int | None = None
) -> CapacityRecord:
    """Measure ``lib``'s capacity figures; never raises for a failed measurement.

    ``rss_idle_kib_per_session``: a fresh HTTP server process (JSON responses) gets one session,
    settles, and its RSS is read; ``sessions`` more sessions are opened and kept, the RSS is
    read again once it settles; the difference over ``sessions``, in KiB. The same server then
    gives ``session_open_p50_us``/``p99_us`` over sequential openings.
    ``rss_get_stream_kib_per_session``: the same on another fresh server, each session (the
    first too) also holding its GET SSE stream open. ``import_s`` and ``stdio_start_s``: medians
    over 5 fresh processes, fewer (at least 3) for a library whose runs pass 6 s in all (see
    :mod:`benchmarks.capacity.startup`). ``quick`` opens at most 100 sessions, times 20
    openings and one import and start-up, and uses one server for the idle and GET-stream
    figures. ``notes`` says how a library was served where that differs from its defaults, and
    whether sessions or streams were lost during the readings. ``held``: also the held-sessions
    cell with that many idle sessions, on a server of its own (:mod:`.held`).
    """
    if lib not in LIBS:
        raise ValueError(f"unknown lib {lib!r}: one of {', '.join(LIBS)}")
    began = time.perf_counter()
    if quick:
        sessions = min(sessions, QUICK_SESSIONS)
    capped = lib == "fastmcp" and sessions > FASTMCP_SESSIONS
    if capped:
        sessions = FASTMCP_SESSIONS
    latency_count, runs = (20, 1) if quick else (200, 5)
    # Seconds after which no further import or stdio start run begins (at least 3 are made).
    budget_s = 6.0
    pause_s, max_wait_s = (0.1, 0.5) if quick else (0.3, 3.0)
    record: CapacityRecord = {"lib": lib, "sessions": sessions}
    errors: list[str] = []
    notes: list[str] = []
    max_connections = _max_connections(lib, sessions)
    if lib == "mcptrio" and max_connections > _MCPTRIO_DEFAULT_MAX_CONNECTIONS:
        notes.append(f"mcptrio served with ServerLimits(max_connections={max_connections})")
    if capped:
        notes.append(
            f"fastmcp measured with {FASTMCP_SESSIONS:,} sessions: its runner's limit of 10,000"
            " open sessions cannot be raised"
        )

    def attempt(what: str, step: Callable[[], None]) -> None:
        try:
            step()
        except Exception as exc:  # a failed figure is reported, not raised
            errors.append(f"{what}: {type(exc).__name__}: {exc}")

    def idle(server: ServerProcess) -> None:
        memory = memory_per_session(
            server, sessions, get_stream=False, pause_s=pause_s, max_wait_s=max_wait_s
        )
        record["rss_idle_kib_per_session"] = round(memory.kib_per_session, 2)
        notes.extend(f"idle: {lost}" for lost in memory.lost)

    def latency(server: ServerProcess) -> None:
        samples = open_latency_us(server, latency_count)
        record["session_open_p50_us"] = round(percentile(samples, 50), 1)
        record["session_open_p99_us"] = round(percentile(samples, 99), 1)

    def streams(server: ServerProcess) -> None:
        memory = memory_per_session(
            server, sessions, get_stream=True, pause_s=pause_s, max_wait_s=max_wait_s
        )
        record["rss_get_stream_kib_per_session"] = round(memory.kib_per_session, 2)
        notes.extend(f"get stream: {lost}" for lost in memory.lost)

    def on_server(*steps: tuple[str, Callable[[ServerProcess], None]]) -> None:
        try:
            with running_server(lib, max_connections) as server:
                for what, step in steps:
                    attempt(what, partial(step, server))
        except Exception as exc:  # the server did not start, or died
            errors.append(f"{' + '.join(what for what, _ in steps)}: {exc}")

    def imports() -> None:
        record["import_s"] = round(import_s(lib, runs, budget_s), 4)

    def stdio() -> None:
        record["stdio_start_s"] = round(stdio_start_s(lib, runs, budget_s), 4)

    if quick:
        # One server for all (SDK and FastMCP take seconds to start): the GET-stream sessions
        # are measured against a baseline read after the idle ones and the timed openings.
        on_server(("idle sessions", idle), ("session open", latency), ("GET streams", streams))
    else:
        on_server(("idle sessions", idle), ("session open", latency))
        on_server(("GET streams", streams))

    def held_sessions(count: int) -> None:
        cell = held_idle(lib, count)
        record["held_sessions_asked"] = cell.asked
        record["held_sessions"] = cell.sessions
        record["held_rss_mib"] = cell.rss_mib
        record["held_within_budget"] = cell.within_budget
        record["held_open_s"] = cell.open_s

    if held is not None:
        attempt("held sessions", partial(held_sessions, held))
    attempt("import", imports)
    attempt("stdio start", stdio)
    if notes:
        record["notes"] = "; ".join(notes)
    if errors:
        record["error"] = "; ".join(errors)
    record["elapsed_s"] = round(time.perf_counter() - began, 2)
    return record
