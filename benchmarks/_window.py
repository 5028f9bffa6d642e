"""The measurement window shared by both cell runners (no I/O, no event loop).

Callers run in a loop from the start of warm-up until the window closes; only calls that
complete while the window is open are counted, and the rate divides them by the window's
measured length. The window also records the CPU time used while it was open, by this process
and (when given a reader for it) by the stdio server process: calls per CPU second is then the
cost of a call with the time other programs took from this machine's cores left out. An
in-memory cell covers the server with its own process time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
        "server_cpu",
        "started",
        "stopped",
        "t_close",
        "t_open",
    )

    def __init__(self, server_cpu: Callable[[], float] | None = None) -> None:
        self.server_cpu = server_cpu
        self.count = 0
        self.measuring = False
        self.stopped = False
        self.started = time.perf_counter()
        self.t_open = 0.0
        self.t_close = 0.0
        self.cpu_open = 0.0
        self.cpu_close = 0.0

    def _cpu(self) -> float:
        server = self.server_cpu() if self.server_cpu is not None else 0.0
        return time.process_time() + server

    def open(self) -> None:
        self.cpu_open = self._cpu()
        self.t_open = time.perf_counter()
        self.measuring = True

    def close(self) -> None:
        self.measuring = False
        self.stopped = True
        self.t_close = time.perf_counter()
        self.cpu_close = self._cpu()

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
