"""Measuring one cell inside a worker, the same way for every library and event loop.

A worker (:mod:`benchmarks.worker`) imports one library and hands this module a
:class:`Backend` (trio's or anyio's primitives) and a way to open a session. The loop code here
never names an event loop, so mcptrio runs under ``trio.run`` and the SDK and FastMCP under
``anyio.run`` with exactly the same measuring around their calls.

- ``xN``: N callers share one session, each calling in a loop. After ``warmup`` the window
  opens for ``duration``; every call that completes while it is open is counted and its latency
  (``perf_counter`` around the call) recorded. When it closes the callers finish the call they
  are in and stop, so the next cell starts on a quiet session.
- ``s100x20``: 100 slots, each opening a session, making 20 calls in it one after the other,
  closing it, and starting again, so 100 sessions are open at any time; calls, the sessions
  completed and the time to open each are counted while the window is open.

Every answer is checked (see the ``check_*`` functions); a wrong answer fails the run.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from .matrix import (
    CALLS_PER_SESSION,
    FIXTURES,
    LISTED_TOOLS,
    SESSION_LOAD,
    SESSIONS_PER_ROUND,
    SWEEP_SIZES,
    TEXT_10K_SIZE,
    CpuScope,
    RunRecord,
    callers,
)

#: Seconds the callers get, after the window closes, to finish the calls they are in.
DRAIN_TIMEOUT = 30.0
#: How often the window checks whether it may open or close (only when it must wait).
_POLL = 0.01
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

#: One call of a workload, answer checked: what a session hands the measuring loops.
Call = Callable[[], Awaitable[None]]


class WrongAnswer(RuntimeError):
    """A call returned something other than the fixture's answer."""


class TaskStarter(Protocol):
    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any: ...


class Scope(Protocol):
    cancelled_caught: bool


@dataclass(frozen=True)
class Backend:
    """The event-loop primitives the loops need: trio's, or anyio's over asyncio."""

    name: str
    open_nursery: Callable[[], AbstractAsyncContextManager[TaskStarter]]
    sleep: Callable[[float], Awaitable[None]]
    move_on_after: Callable[[float], AbstractContextManager[Scope]]
    #: Reads one line of the worker's stdin in a thread ("" at its end).
    read_line: Callable[[], Awaitable[str]]


class BenchSession(Protocol):
    """An open client session of the library under test."""

    def caller(self, workload: str) -> Call:
        """A function making one checked call of ``workload`` in this session."""
        ...


OpenSession = Callable[[], AbstractAsyncContextManager[BenchSession]]


# ---------------------------------------------------------------- answers


def fixture_params(workload: str) -> dict[str, Any]:
    """The request parameters of ``workload``'s call (``matrix.FIXTURES``)."""
    return FIXTURES[workload][1]


def check_add(text: object) -> None:
    if text != "3":
        raise WrongAnswer(f"add(1, 2) returned {_show(text)}, expected '3'")


# The expected answers, built here rather than imported from the servers' fixtures so that a
# library handing the server's own string object through (the SDK's in-memory client calls the
# handler directly) still pays for a full comparison. An equality test is a memcmp (about 5 µs
# for 100 KiB); the ``text.strip("y")`` it replaces cost about 800 µs per 100 KiB read (CPython
# looks each character up in the strip set), which was most of every library's in-memory
# ``read-100k`` figure and hid the libraries' own cost (measured 2026-11-25).
_EXPECTED_TEXT_10K = "x" * TEXT_10K_SIZE
_EXPECTED_BLOBS = {workload: "y" * size for workload, size in SWEEP_SIZES.items()}


def check_text_10k(text: object) -> None:
    if text != _EXPECTED_TEXT_10K:
        raise WrongAnswer(f"text_10k() returned {_show(text)}, expected {TEXT_10K_SIZE} 'x'")


def check_tool_count(count: int) -> None:
    if count != LISTED_TOOLS:
        raise WrongAnswer(f"tools/list listed {count} tools, expected {LISTED_TOOLS}")


def check_blob(text: object, workload: str = "read-100k") -> None:
    if text != _EXPECTED_BLOBS[workload]:
        uri, size = FIXTURES[workload][1]["uri"], SWEEP_SIZES[workload]
        raise WrongAnswer(f"{uri} read {_show(text)}, expected {size} 'y'")


def _listed_tools(result: Any) -> Any:
    return result.tools


def _read_contents(result: Any) -> Any:
    return result.contents


def workload_caller(
    client: Any,
    workload: str,
    *,
    listed_tools: Callable[[Any], Any] = _listed_tools,
    read_contents: Callable[[Any], Any] = _read_contents,
) -> Call:
    """One checked call of ``workload`` through ``client``'s ``call_tool``, ``list_tools`` and
    ``read_resource``, which mcptrio, the SDK and FastMCP all have. mcptrio's and the SDK's
    return result objects; FastMCP's return the list itself: ``listed_tools`` and
    ``read_contents`` take the tools and the contents out of a result.
    """
    params = fixture_params(workload)
    if workload in ("call", "call-sync"):
        name, arguments = params["name"], params["arguments"]

        async def call() -> None:
            result = await client.call_tool(name, arguments)
            check_add(getattr(result.content[0], "text", None))

    elif workload == "call-10k":

        async def call() -> None:
            result = await client.call_tool("text_10k", {})
            check_text_10k(getattr(result.content[0], "text", None))

    elif workload == "list-50":

        async def call() -> None:
            check_tool_count(len(listed_tools(await client.list_tools())))

    elif workload in SWEEP_SIZES:
        uri = params["uri"]

        async def call() -> None:
            contents = read_contents(await client.read_resource(uri))
            check_blob(getattr(contents[0], "text", None), workload)

    else:
        raise ValueError(f"unknown workload {workload!r}")
    return call


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} chars)"


# ---------------------------------------------------------------- CPU time


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()
    # After "pid (comm)": state is field 3, utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _TICKS


def server_child_pid() -> int:
    """The pid of this process's child running a benchmark server (a stdio or WebSocket one).

    The SDK and FastMCP clients do not expose their stdio server's process, but it is a child
    of this worker, and the only one running ``benchmarks.servers``.
    """
    # A loaded machine may take a moment to show a process just started: look for a while.
    deadline = time.monotonic() + _CHILD_WAIT_S
    while True:
        found = _server_children()
        if found or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if len(found) != 1:
        raise RuntimeError(f"expected one benchmark server child process, found {found}")
    return found[0]


#: How long :func:`server_child_pid` looks for the server's process (seconds).
_CHILD_WAIT_S = 5.0


def _server_children() -> list[int]:
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as children:
                pids = [int(p) for p in children.read().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if b"benchmarks.servers" in cmdline.read():
                        found.append(pid)
            except OSError:
                continue
    return found


@dataclass
class CpuClock:
    """CPU seconds of the processes a cell's ``cpu_scope`` names."""

    scope: CpuScope
    pid: int | None = None

    def read(self) -> float:
        if self.pid is None:
            return time.process_time()
        return process_cpu_seconds(self.pid)


# ---------------------------------------------------------------- the window


@dataclass
class Window:
    """What completed while the measuring window was open."""

    clock: CpuClock
    measuring: bool = False
    stopped: bool = False
    latencies: list[float] = field(default_factory=list)
    opens: list[float] = field(default_factory=list)
    sessions: int = 0
    t_open: float = 0.0
    t_close: float = 0.0
    cpu_open: float = 0.0
    cpu_close: float = 0.0

    def open(self) -> None:
        self.cpu_open = self.clock.read()
        self.t_open = time.perf_counter()
        self.measuring = True

    def close(self) -> None:
        self.measuring = False
        self.stopped = True
        self.t_close = time.perf_counter()
        self.cpu_close = self.clock.read()


async def _run_window(
    backend: Backend,
    window: Window,
    task: Callable[[], Awaitable[None]],
    tasks: int,
    warmup: float,
    duration: float,
    warmed_up: Callable[[], bool] = lambda: True,
) -> None:
    """Run ``tasks`` copies of ``task``; open the window after ``warmup`` (and ``warmed_up()``).

    The window closes after ``duration``, or later if no call has completed in it yet, so that
    every run yields a figure even when one call takes longer than the window.
    """
    with backend.move_on_after(warmup + duration + DRAIN_TIMEOUT) as scope:
        async with backend.open_nursery() as nursery:
            for _ in range(tasks):
                nursery.start_soon(task)
            await backend.sleep(warmup)
            while not warmed_up():
                await backend.sleep(_POLL)
            window.open()
            await backend.sleep(duration)
            while not window.latencies:
                await backend.sleep(_POLL)
            window.close()
    if scope.cancelled_caught:
        raise TimeoutError(
            "no call completed in the window"
            if not window.stopped
            else f"calls still in flight {DRAIN_TIMEOUT:g} s after the window closed"
        )


async def measure_callers(
    backend: Backend,
    call: Call,
    load: str,
    warmup: float,
    duration: float,
    clock: CpuClock,
) -> Window:
    """An ``xN`` cell: N callers in one session (``call`` is that session's)."""
    window = Window(clock)
    latencies = window.latencies
    perf_counter = time.perf_counter

    async def caller() -> None:
        while not window.stopped:
            started = perf_counter()
            await call()
            if window.measuring:
                latencies.append(perf_counter() - started)

    await _run_window(backend, window, caller, callers(load), warmup, duration)
    return window


async def measure_sessions(
    backend: Backend,
    open_session: OpenSession,
    workload: str,
    warmup: float,
    duration: float,
    clock: CpuClock,
) -> Window:
    """An ``s100x20`` cell: 100 slots each opening a session, making 20 calls, closing it.

    The window opens once all 100 first sessions are open (after ``warmup``).
    """
    window = Window(clock)
    latencies = window.latencies
    perf_counter = time.perf_counter
    slots_opened = 0

    async def slot() -> None:
        nonlocal slots_opened
        first = True
        while not window.stopped:
            started = perf_counter()
            async with open_session() as session:
                if first:
                    first = False
                    slots_opened += 1
                if window.measuring:
                    window.opens.append(perf_counter() - started)
                call = session.caller(workload)
                done = 0
                for _ in range(CALLS_PER_SESSION):
                    if window.stopped:
                        break
                    started = perf_counter()
                    await call()
                    if window.measuring:
                        latencies.append(perf_counter() - started)
                    done += 1
            if window.measuring and done == CALLS_PER_SESSION:
                window.sessions += 1

    # The window opens once every slot has opened its first session: the first 100 opens
    # arrive at once, which no later moment repeats, so they belong to the warm-up.
    await _run_window(
        backend,
        window,
        slot,
        SESSIONS_PER_ROUND,
        warmup,
        duration,
        lambda: slots_opened == SESSIONS_PER_ROUND,
    )
    return window


# ---------------------------------------------------------------- the record


def percentile(ordered: list[float], p: float) -> float:
    """The nearest-rank ``p``-th percentile of an ascending list (not empty)."""
    # Rounded first: 99.9 / 100 * 1000 is 999.0000000000001 in floating point.
    rank = max(1, math.ceil(round(p / 100 * len(ordered), 9)))
    return ordered[min(rank, len(ordered)) - 1]


def record(lib: str, transport: str, workload: str, load: str, window: Window) -> RunRecord:
    """The run record of a closed window; an ``error`` if no call completed in it."""
    base: RunRecord = {"lib": lib, "transport": transport, "workload": workload, "load": load}
    calls = len(window.latencies)
    if calls == 0:
        return {**base, "error": "no call completed while the window was open"}
    elapsed = window.t_close - window.t_open
    cpu = window.cpu_close - window.cpu_open
    ordered = sorted(window.latencies)
    result: RunRecord = {
        **base,
        "calls": calls,
        "elapsed_s": round(elapsed, 6),
        "calls_per_s": calls / elapsed,
        "p50_us": percentile(ordered, 50) * 1e6,
        "p90_us": percentile(ordered, 90) * 1e6,
        "p99_us": percentile(ordered, 99) * 1e6,
        "p999_us": percentile(ordered, 99.9) * 1e6,
        "cpu_s": round(cpu, 6),
        "cpu_us_per_call": cpu / calls * 1e6,
        "cpu_scope": window.clock.scope,
    }
    if load == SESSION_LOAD:
        result["sessions"] = window.sessions
        if window.opens:
            opens = sorted(window.opens)
            result["open_p50_us"] = percentile(opens, 50) * 1e6
            result["open_p99_us"] = percentile(opens, 99) * 1e6
    return result
