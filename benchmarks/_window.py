"""The measurement window shared by both cell runners (no I/O, no event loop).

Callers run in a loop from the start of warm-up until the window closes; only calls that
complete while the window is open are counted, and the rate divides them by the window's
measured length. The window also records the CPU time this process used while it was open: for
an in-memory cell, where client and server share the process, calls per CPU second is the cost
of a call with the time other programs took from this machine's cores left out.
"""

from __future__ import annotations

import time
from typing import Any

#: The arguments of every benchmark call; the expected text result is "3".
ARGS: dict[str, Any] = {"a": 1, "b": 2}
EXPECTED_TEXT = "3"


class Window:
    """Counts calls completed between :meth:`open` and :meth:`close`."""

    __slots__ = (
        "count",
        "cpu_close",
        "cpu_open",
        "measuring",
        "started",
        "stopped",
        "t_close",
        "t_open",
    )

    def __init__(self) -> None:
        self.count = 0
        self.measuring = False
        self.stopped = False
        self.started = time.perf_counter()
        self.t_open = 0.0
        self.t_close = 0.0
        self.cpu_open = 0.0
        self.cpu_close = 0.0

    def open(self) -> None:
        self.cpu_open = time.process_time()
        self.t_open = time.perf_counter()
        self.measuring = True

    def close(self) -> None:
        self.measuring = False
        self.stopped = True
        self.t_close = time.perf_counter()
        self.cpu_close = time.process_time()

    def result(self, connect_s: float) -> dict[str, Any]:
        elapsed = self.t_close - self.t_open
        cpu = self.cpu_close - self.cpu_open
        return {
            "calls": self.count,
            "elapsed_s": round(elapsed, 6),
            "calls_per_s": self.count / elapsed if elapsed > 0 else 0.0,
            "cpu_s": round(cpu, 6),
            "calls_per_cpu_s": self.count / cpu if cpu > 0 else 0.0,
            "connect_s": round(connect_s, 6),
        }


def check_text(text: object) -> None:
    """Fail loudly if a warm-up call did not return the expected sum."""
    if text != EXPECTED_TEXT:
        raise RuntimeError(f"add(1, 2) returned {text!r}, expected {EXPECTED_TEXT!r}")
